//go:build !gcs && !azure

package storage

import (
	"context"
	"fmt"
)

// openCloud refuses a gs:// or azblob:// location: this build has
// neither driver (build tags gcs and azure add them). ParseLocation
// refuses such locations already; this is for a Location made otherwise.
func openCloud(_ context.Context, l Location) (bucket, error) {
	if tag := leftOut(l.Scheme); tag != "" {
		return nil, &LeftOutError{Scheme: l.Scheme, Tag: tag}
	}
	return nil, fmt.Errorf("%w %q", ErrScheme, l.Scheme)
}
