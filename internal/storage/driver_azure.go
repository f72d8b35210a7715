//go:build !noazure

package storage

import _ "gocloud.dev/blob/azureblob" // azblob:// URLs

// withAzure tells that this build has the azblob:// driver (build tag noazure
// leaves it out).
const withAzure = true
