//go:build !gcs && !azure

package transient

// cloudRetry is false: this build has no gocloud.dev driver (build tags
// gcs and azure add them), whose error codes only they return.
func cloudRetry(error) bool { return false }
