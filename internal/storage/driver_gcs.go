//go:build gcs

package storage

import _ "gocloud.dev/blob/gcsblob" // gs:// URLs

// withGCS tells that this build has the gs:// driver (build tag gcs adds
// it).
const withGCS = true
