//go:build !nogcs

package storage

import _ "gocloud.dev/blob/gcsblob" // gs:// URLs

// withGCS tells that this build has the gs:// driver (build tag nogcs
// leaves it out).
const withGCS = true
