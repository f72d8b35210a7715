//go:build nogcs

package storage

// withGCS tells that this build has the gs:// driver (build tag nogcs
// leaves it out).
const withGCS = false
