//go:build !gcs

package transient

// googleStatus is 0: this build has no Google Cloud Storage driver.
func googleStatus(error) int { return 0 }

// grpcRetry is false: this build has no Google Cloud Storage driver, the
// only gRPC client whose errors reach here.
func grpcRetry(error) bool { return false }
