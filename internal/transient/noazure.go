//go:build !azure

package transient

// azureStatus is 0: this build has no Azure Blob Storage driver.
func azureStatus(error) int { return 0 }
