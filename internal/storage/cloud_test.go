//go:build gcs || azure

package storage

import (
	"testing"

	"gocloud.dev/blob/memblob"
)

// cloudStore is a store through the gocloud.dev adapter that gs:// and
// azblob:// use, over gocloud.dev's in-memory bucket.
func cloudStore(t *testing.T) *Dir {
	b := memblob.OpenBucket(nil)
	t.Cleanup(func() { b.Close() })
	l := Location{Scheme: "mem", Bucket: "bucket", Key: "jobs/out"}
	return &Dir{root: l.String(), loc: l, bucket: cloudBucket{b}}
}
