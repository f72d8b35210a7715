//go:build gcs

package transient

import (
	"testing"

	"google.golang.org/api/googleapi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestIsGoogle checks the errors of Google Cloud Storage's clients
// (JSON API and gRPC), in a build with their driver.
func TestIsGoogle(t *testing.T) {
	checkIs(t, []isCase{
		{"GCS 503", wrap(&googleapi.Error{Code: 503}), true},
		{"GCS 429", wrap(&googleapi.Error{Code: 429}), true},
		{"GCS 404", wrap(&googleapi.Error{Code: 404}), false},
		{"gRPC unavailable", wrap(status.Error(codes.Unavailable, "x")), true},
		{"gRPC not found", wrap(status.Error(codes.NotFound, "x")), false},
	})
}
