//go:build noazure

package storage

// withAzure tells that this build has the azblob:// driver (build tag noazure
// leaves it out).
const withAzure = false
