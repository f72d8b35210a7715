//go:build !azure

package storage

// withAzure tells that this build has the azblob:// driver (build tag
// azure adds it).
const withAzure = false
