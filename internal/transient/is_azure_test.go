//go:build azure

package transient

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

// TestIsAzure checks the errors of Azure Blob Storage's client, in a
// build with its driver.
func TestIsAzure(t *testing.T) {
	checkIs(t, []isCase{
		{"Azure 500", wrap(&azcore.ResponseError{StatusCode: 500, ErrorCode: "InternalError"}), true},
		{"Azure 503 ServerBusy", wrap(&azcore.ResponseError{StatusCode: 503, ErrorCode: "ServerBusy"}), true},
		{"Azure 409", wrap(&azcore.ResponseError{StatusCode: 409, ErrorCode: "BlobAlreadyExists"}), false},
	})
}
