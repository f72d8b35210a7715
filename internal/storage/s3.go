package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	tmtypes "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// s3Bucket is an S3 bucket (or one of an S3-compatible store: MinIO, Ceph,
// Cloudflare R2, Google Cloud Storage's interoperability endpoint)
// through the AWS SDK's S3 client. The client retries as the SDK's
// standard retryer does (3 attempts, backing off, on 5xx, throttling and
// connection errors); what fails after that is classified by package
// transient.
type s3Bucket struct {
	name   string
	client *s3.Client
	up     *transfermanager.Client
	opts   s3Options
}

// openS3 opens the S3 bucket of l, configured by the environment as the
// AWS SDK reads it and by l's options (see s3Options).
func openS3(ctx context.Context, l Location) (*s3Bucket, error) {
	o, err := parseS3Options(l.Query)
	if err != nil {
		return nil, err
	}
	client, err := o.client(ctx)
	if err != nil {
		return nil, err
	}
	up := transfermanager.New(client, func(t *transfermanager.Options) {
		t.RequestChecksumCalculation = client.Options().RequestChecksumCalculation
	})
	return &s3Bucket{name: l.Bucket, client: client, up: up, opts: o}, nil
}

func (b *s3Bucket) close() error { return nil }

// s3NotExist makes an S3 error for a missing object or bucket wrap
// fs.ErrNotExist (and still the SDK's error).
func s3NotExist(err error) error {
	if ae, ok := errors.AsType[smithy.APIError](err); ok {
		switch ae.ErrorCode() {
		case "NoSuchKey", "NotFound", "NoSuchBucket":
			return fmt.Errorf("%w: %w", fs.ErrNotExist, err)
		}
	}
	if re, ok := errors.AsType[*awshttp.ResponseError](err); ok && re.HTTPStatusCode() == http.StatusNotFound {
		return fmt.Errorf("%w: %w", fs.ErrNotExist, err)
	}
	return err
}

func (b *s3Bucket) attributes(ctx context.Context, key string) (objectAttrs, error) {
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b.name, Key: &key})
	if err != nil {
		return objectAttrs{}, s3NotExist(err)
	}
	return objectAttrs{Key: key, Size: aws.ToInt64(out.ContentLength), ModTime: aws.ToTime(out.LastModified)}, nil
}

func (b *s3Bucket) readRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	if length <= 0 {
		return http.NoBody, nil
	}
	rng := fmt.Sprintf("bytes=%d-%d", offset, offset+length-1)
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.name, Key: &key, Range: &rng})
	if err != nil {
		return nil, s3NotExist(err)
	}
	return out.Body, nil
}

func (b *s3Bucket) list(ctx context.Context, prefix, delimiter string, fn func(objectAttrs) error) error {
	in := &s3.ListObjectsV2Input{Bucket: &b.name, Prefix: &prefix}
	if delimiter != "" {
		in.Delimiter = &delimiter
	}
	pages := s3.NewListObjectsV2Paginator(b.client, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return s3NotExist(err)
		}
		for _, o := range page.Contents {
			if err := fn(objectAttrs{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified)}); err != nil {
				return err
			}
		}
		for _, p := range page.CommonPrefixes {
			if err := fn(objectAttrs{Key: aws.ToString(p.Prefix), IsDir: true}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *s3Bucket) remove(ctx context.Context, key string) error {
	_, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b.name, Key: &key})
	if err = s3NotExist(err); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// check lists at most one key of the bucket.
func (b *s3Bucket) check(ctx context.Context) error {
	_, err := b.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &b.name, MaxKeys: aws.Int32(1)})
	if errors.Is(s3NotExist(err), fs.ErrNotExist) {
		return fmt.Errorf("no such bucket: %w", err)
	}
	return err
}

// upload streams what is written to the SDK's transfer manager, which
// sends one PUT for an object of up to a part (8 MiB) and a multipart
// upload, parts sent concurrently, for a larger one; a multipart upload
// that fails or is cancelled is aborted, and leaves no object.
func (b *s3Bucket) upload(ctx context.Context, key string) (io.WriteCloser, error) {
	in := &transfermanager.UploadObjectInput{Bucket: &b.name, Key: &key}
	if b.opts.sse != "" {
		in.ServerSideEncryption = tmtypes.ServerSideEncryption(b.opts.sse)
	}
	if b.opts.kmsKeyID != "" {
		in.SSEKMSKeyID = &b.opts.kmsKeyID
	}
	return &s3Upload{ctx: ctx, up: b.up, in: in}, nil
}

// errAborted ends the body of an upload that was abandoned.
var errAborted = errors.New("upload abandoned")

// s3Upload is an object being uploaded: its body is a pipe, read by the
// transfer manager in a goroutine started by the first Write.
type s3Upload struct {
	ctx  context.Context
	up   *transfermanager.Client
	in   *transfermanager.UploadObjectInput
	pw   *io.PipeWriter
	done chan struct{}
	err  error // of the upload, once done is closed
}

func (u *s3Upload) start(body io.Reader) {
	u.done = make(chan struct{})
	u.in.Body = body
	go func() {
		defer close(u.done)
		_, u.err = u.up.UploadObject(u.ctx, u.in)
	}()
}

func (u *s3Upload) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if u.pw == nil {
		pr, pw := io.Pipe()
		u.pw = pw
		u.start(pr)
		go func() { // a failed upload stops reading: fail the writes
			<-u.done
			pr.CloseWithError(u.uploadErr())
		}()
	}
	return u.pw.Write(p)
}

// uploadErr is the upload's error once it is done, or io.ErrClosedPipe
// for an upload that stopped reading without one.
func (u *s3Upload) uploadErr() error {
	if u.err != nil {
		return u.err
	}
	return io.ErrClosedPipe
}

// Close completes the upload; after the context's cancellation it
// abandons it.
func (u *s3Upload) Close() error {
	switch {
	case u.pw == nil && u.ctx.Err() != nil:
		return u.ctx.Err() // abandoned before its first byte: never started
	case u.pw == nil:
		u.start(http.NoBody) // an empty object
	case u.ctx.Err() != nil:
		u.pw.CloseWithError(errAborted)
	default:
		u.pw.Close()
	}
	<-u.done
	return u.err
}
