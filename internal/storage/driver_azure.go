//go:build azure

package storage

import _ "gocloud.dev/blob/azureblob" // azblob:// URLs

// withAzure tells that this build has the azblob:// driver (build tag
// azure adds it).
const withAzure = true
