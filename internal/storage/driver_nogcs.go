//go:build !gcs

package storage

// withGCS tells that this build has the gs:// driver (build tag gcs adds
// it).
const withGCS = false
