//go:build nos3

package storage

// withS3 tells that this build has the s3:// driver (build tag nos3
// leaves it out).
const withS3 = false
