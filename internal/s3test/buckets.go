package s3test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// MakeBuckets makes each bucket on the S3 server at endpoint unless it
// exists, signed with key (or unsigned with an empty key), as `mc mb
// --ignore-existing` does. A server that does not answer yet (a container
// started a moment ago), or answers with a server error, is asked again
// every half second until ctx is done; the error then is the last one. A
// refusal (a 4xx status: a wrong key) is returned at once.
func MakeBuckets(ctx context.Context, endpoint string, key Key, buckets ...string) error {
	opts := s3.Options{BaseEndpoint: aws.String(endpoint), UsePathStyle: true, Region: "us-east-1"}
	if key != (Key{}) {
		opts.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: key.ID, SecretAccessKey: key.Secret}, nil
		})
	}
	c := s3.New(opts)
	for _, b := range buckets {
		for {
			err := makeBucket(ctx, c, b)
			var refused *awshttp.ResponseError
			if err == nil {
				break
			}
			if errors.As(err, &refused) && refused.HTTPStatusCode() < 500 {
				return fmt.Errorf("s3test: bucket %s at %s: %w", b, endpoint, err)
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("s3test: bucket %s at %s: gave up (%v): %w", b, endpoint, context.Cause(ctx), err)
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	return nil
}

// makeBucket makes bucket unless it exists. A creation refused because
// the bucket exists after all (the server came up between the two
// requests: the first found no server, the second the bucket) is no
// error if the bucket now answers.
func makeBucket(ctx context.Context, c *s3.Client, bucket string) error {
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &bucket}); err == nil {
		return nil
	}
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket})
	if err != nil {
		if _, again := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &bucket}); again == nil {
			return nil
		}
	}
	return err
}
