package storage

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// s3Options are the options of an s3:// location, its query
// (s3://bucket/prefix?region=...&endpoint=...). They are those that
// gocloud.dev's s3blob read, which neardup used before, with the same
// meaning, so that every location that worked then works the same:
//
//   - region: the bucket's region (else AWS_REGION, the profile's).
//   - endpoint: the store's URL, for an S3-compatible store (MinIO,
//     Ceph, Cloudflare R2, Google Cloud Storage's interoperability
//     endpoint); else AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL.
//   - use_path_style (or s3ForcePathStyle, or hostname_immutable):
//     address the bucket in the path (endpoint/bucket/key), not in the
//     host name (bucket.endpoint/key). Unset, a custom endpoint (the
//     option or the environment's) is addressed path-style, as
//     S3-compatible stores expect.
//   - disable_https: http:// for an endpoint resolved without a scheme.
//   - profile: the shared configuration's profile; role: an IAM role's
//     ARN to assume through STS; anonymous: unsigned requests.
//   - dualstack, fips, accelerate: AWS's dual-stack, FIPS and transfer
//     acceleration endpoints.
//   - request_checksum_calculation, response_checksum_validation:
//     when_supported (the SDK's default) or when_required; stores that
//     refuse the SDK's checksums need when_required.
//   - ssetype (AES256, aws:kms, aws:kms:dsse), kmskeyid: server-side
//     encryption of what neardup writes.
//   - rate_limiter_capacity: the retryer's token bucket (none by
//     default: every failed request may be retried).
//   - awssdk: ignored (gocloud.dev chose the SDK's version with it).
//
// Any other option is an error naming it.
type s3Options struct {
	region, endpoint, profile, role string
	pathStyle                       *bool // nil: path-style with a custom endpoint
	disableHTTPS, anonymous         bool
	dualStack, fips, accelerate     bool
	rateLimit                       int
	requestChecksum                 aws.RequestChecksumCalculation
	responseChecksum                aws.ResponseChecksumValidation
	sse, kmsKeyID                   string
}

// s3OptionNames are the options parseS3Options knows, for its error.
const s3OptionNames = "region, endpoint, use_path_style, s3ForcePathStyle, hostname_immutable, disable_https, " +
	"profile, role, anonymous, dualstack, fips, accelerate, request_checksum_calculation, " +
	"response_checksum_validation, ssetype, kmskeyid, rate_limiter_capacity, awssdk"

// parseS3Options reads the options of an s3:// location's query.
func parseS3Options(query string) (s3Options, error) {
	var o s3Options
	q, err := url.ParseQuery(query)
	if err != nil {
		return o, fmt.Errorf("the location's options: %w", err)
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the first error is the same every time
	for _, k := range keys {
		if err := o.set(k, q.Get(k)); err != nil {
			return o, fmt.Errorf("the location's option %s=%s: %w", k, q.Get(k), err)
		}
	}
	return o, nil
}

// set sets the option k to v.
func (o *s3Options) set(k, v string) error {
	var err error
	flag := func(f *bool) { *f, err = strconv.ParseBool(v) }
	switch k {
	case "region":
		o.region = v
	case "endpoint":
		o.endpoint = v
	case "use_path_style", "s3ForcePathStyle", "hostname_immutable":
		var b bool
		flag(&b)
		o.pathStyle = &b
	case "disable_https":
		flag(&o.disableHTTPS)
	case "profile":
		o.profile = v
	case "role":
		if !strings.HasPrefix(v, "arn:") {
			return fmt.Errorf("not an IAM role's ARN (arn:...)")
		}
		o.role = v
	case "anonymous":
		flag(&o.anonymous)
	case "dualstack":
		flag(&o.dualStack)
	case "fips":
		flag(&o.fips)
	case "accelerate":
		flag(&o.accelerate)
	case "rate_limiter_capacity":
		o.rateLimit, err = strconv.Atoi(v)
	case "request_checksum_calculation":
		o.requestChecksum, err = checksumMode(v, aws.RequestChecksumCalculationWhenSupported, aws.RequestChecksumCalculationWhenRequired)
	case "response_checksum_validation":
		o.responseChecksum, err = checksumMode(v, aws.ResponseChecksumValidationWhenSupported, aws.ResponseChecksumValidationWhenRequired)
	case "ssetype":
		switch strings.ToLower(v) {
		case "aes256", "aws:kms", "aws:kms:dsse":
			o.sse = v
		default:
			return fmt.Errorf("not AES256, aws:kms or aws:kms:dsse")
		}
	case "kmskeyid":
		o.kmsKeyID = v
	case "awssdk":
	default:
		return fmt.Errorf("no such option of an s3:// location (known: %s)", s3OptionNames)
	}
	return err
}

// checksumMode is supported or required for when_supported or
// when_required.
func checksumMode[M any](v string, supported, required M) (M, error) {
	switch v {
	case "when_supported":
		return supported, nil
	case "when_required":
		return required, nil
	}
	var zero M
	return zero, fmt.Errorf("not when_supported or when_required")
}

// customEndpoint tells whether the environment or the options point the
// S3 client at an endpoint of their own.
func (o s3Options) customEndpoint() bool {
	return o.endpoint != "" || os.Getenv("AWS_ENDPOINT_URL") != "" || os.Getenv("AWS_ENDPOINT_URL_S3") != ""
}

// client is an S3 client configured by the environment, as the AWS SDK
// reads it (credentials, region, endpoint, profile files), and by o.
func (o s3Options) client(ctx context.Context) (*s3.Client, error) {
	var load []func(*config.LoadOptions) error
	if o.region != "" {
		load = append(load, config.WithRegion(o.region))
	}
	if o.profile != "" {
		load = append(load, config.WithSharedConfigProfile(o.profile))
	}
	if o.anonymous {
		load = append(load, config.WithCredentialsProvider(aws.AnonymousCredentials{}))
	}
	if o.dualStack {
		load = append(load, config.WithUseDualStackEndpoint(aws.DualStackEndpointStateEnabled))
	}
	if o.fips {
		load = append(load, config.WithUseFIPSEndpoint(aws.FIPSEndpointStateEnabled))
	}
	if o.requestChecksum != 0 {
		load = append(load, config.WithRequestChecksumCalculation(o.requestChecksum))
	}
	if o.responseChecksum != 0 {
		load = append(load, config.WithResponseChecksumValidation(o.responseChecksum))
	}
	var limiter retry.RateLimiter = ratelimit.None
	if o.rateLimit > 0 {
		limiter = ratelimit.NewTokenRateLimit(uint(o.rateLimit))
	}
	load = append(load, config.WithRetryer(func() aws.Retryer {
		return retry.NewStandard(func(so *retry.StandardOptions) { so.RateLimiter = limiter })
	}))
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	if o.role != "" {
		if cfg.Region == "" {
			return nil, fmt.Errorf("role=%s needs a region (region= or AWS_REGION) to reach STS", o.role)
		}
		cfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(sts.NewFromConfig(cfg), o.role))
	}
	pathStyle := o.customEndpoint()
	if o.pathStyle != nil {
		pathStyle = *o.pathStyle
	}
	return s3.NewFromConfig(cfg, func(so *s3.Options) {
		if o.endpoint != "" {
			so.BaseEndpoint = aws.String(o.endpoint)
		}
		so.UsePathStyle = pathStyle
		so.UseAccelerate = o.accelerate
		so.EndpointOptions.DisableHTTPS = o.disableHTTPS
	}), nil
}
