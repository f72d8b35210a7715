//go:build azure

package transient

import (
	"errors"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

// azureStatus is the HTTP status of an Azure Blob Storage error, or 0.
func azureStatus(err error) int {
	if e, ok := errors.AsType[*azcore.ResponseError](err); ok {
		return e.StatusCode
	}
	return 0
}
