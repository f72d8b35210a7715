//go:build gcs

package transient

import (
	"errors"

	"google.golang.org/api/googleapi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// googleStatus is the HTTP status of a Google Cloud Storage error, or 0.
func googleStatus(err error) int {
	if e, ok := errors.AsType[*googleapi.Error](err); ok {
		return e.Code
	}
	return 0
}

// grpcRetry tells whether err is a gRPC status (Google's gRPC API) that
// asks the client to try again.
func grpcRetry(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.ResourceExhausted, codes.DeadlineExceeded, codes.Aborted:
		return true
	}
	return false
}
