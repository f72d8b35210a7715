//go:build gcs || azure

package transient

import "gocloud.dev/gcerrors"

// cloudRetry tells whether err carries a gocloud.dev error code (the
// gs:// and azblob:// drivers, which build tags gcs and azure add) that
// asks the client to try again.
func cloudRetry(err error) bool {
	c := gcerrors.Code(err)
	return c == gcerrors.ResourceExhausted || c == gcerrors.DeadlineExceeded
}
