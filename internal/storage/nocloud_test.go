//go:build !gcs && !azure

package storage

import "testing"

// cloudStore is nil: this build has no gocloud.dev adapter.
func cloudStore(*testing.T) *Dir { return nil }
