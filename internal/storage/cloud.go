//go:build gcs || azure

package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// cloudBucket is a Google Cloud Storage bucket or an Azure Blob Storage
// container, through gocloud.dev/blob and its gcsblob and azureblob
// drivers (which build tags gcs and azure add). The location's options
// are those drivers' URL options.
type cloudBucket struct {
	b *blob.Bucket
}

// openCloud opens the gs:// or azblob:// bucket of l.
func openCloud(ctx context.Context, l Location) (bucket, error) {
	if tag := leftOut(l.Scheme); tag != "" {
		return nil, &LeftOutError{Scheme: l.Scheme, Tag: tag}
	}
	if l.Scheme != "gs" && l.Scheme != "azblob" {
		return nil, fmt.Errorf("%w %q", ErrScheme, l.Scheme)
	}
	q, err := url.ParseQuery(l.Query)
	if err != nil {
		return nil, fmt.Errorf("the location's options: %w", err)
	}
	u := url.URL{Scheme: l.Scheme, Host: l.Bucket, RawQuery: q.Encode()}
	b, err := blob.OpenBucket(ctx, u.String())
	if err != nil {
		return nil, err
	}
	return cloudBucket{b}, nil
}

// cloudNotExist makes a not-found error of the store wrap
// fs.ErrNotExist (and still the store's error).
func cloudNotExist(err error) error {
	if gcerrors.Code(err) == gcerrors.NotFound {
		return fmt.Errorf("%w: %w", fs.ErrNotExist, err)
	}
	return err
}

func (c cloudBucket) close() error { return c.b.Close() }

func (c cloudBucket) attributes(ctx context.Context, key string) (objectAttrs, error) {
	a, err := c.b.Attributes(ctx, key)
	if err != nil {
		return objectAttrs{}, cloudNotExist(err)
	}
	return objectAttrs{Key: key, Size: a.Size, ModTime: a.ModTime}, nil
}

func (c cloudBucket) readRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	r, err := c.b.NewRangeReader(ctx, key, offset, length, nil)
	if err != nil {
		return nil, cloudNotExist(err)
	}
	return r, nil
}

func (c cloudBucket) upload(ctx context.Context, key string) (io.WriteCloser, error) {
	return c.b.NewWriter(ctx, key, nil)
}

func (c cloudBucket) list(ctx context.Context, prefix, delimiter string, fn func(objectAttrs) error) error {
	it := c.b.List(&blob.ListOptions{Prefix: prefix, Delimiter: delimiter})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return cloudNotExist(err)
		}
		if err := fn(objectAttrs{Key: o.Key, Size: o.Size, ModTime: o.ModTime, IsDir: o.IsDir}); err != nil {
			return err
		}
	}
}

func (c cloudBucket) remove(ctx context.Context, key string) error {
	if err := c.b.Delete(ctx, key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return err
	}
	return nil
}

func (c cloudBucket) check(ctx context.Context) error {
	ok, err := c.b.IsAccessible(ctx)
	if err == nil && !ok {
		err = errors.New("no such bucket")
	}
	return err
}
