package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// mcName is the name under which the test binary acts as MinIO's client:
// TestComposeFile puts a link of that name to the test binary on the PATH
// of a service of the minio/mc image, and TestMain runs fakeMC.
const mcName = "mc"

// mcAlias is an alias of mc's configuration: a server and a key.
type mcAlias struct {
	URL       string `json:"url"`
	AccessKey string `json:"accessKey"`
	SecretKey string `json:"secretKey"`
}

// fakeMC is the part of mc that the compose file uses, over the S3
// protocol like mc (so a server that refuses the key refuses it):
//
//	mc alias set ALIAS URL ACCESS-KEY SECRET-KEY
//	mc mb [--ignore-existing | -p] ALIAS/BUCKET...
//
// alias set first checks the key against the server (listing the
// buckets), as mc does, then keeps the alias in $HOME/.mc/config.json; mb
// makes each bucket, and with --ignore-existing succeeds on a bucket that
// exists. Any other command or flag fails, naming it, so a compose file
// that starts to use more of mc fails the test until this learns it. It
// returns the exit status.
func fakeMC(args []string, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "mc (the test's): "+format+"\n", a...)
		return 1
	}
	config := filepath.Join(os.Getenv("HOME"), ".mc", "config.json")
	aliases := map[string]mcAlias{}
	if b, err := os.ReadFile(config); err == nil {
		if err := json.Unmarshal(b, &aliases); err != nil {
			return fail("%s: %v", config, err)
		}
	}
	ctx := context.Background()
	switch {
	case len(args) >= 2 && args[0] == "alias" && args[1] == "set":
		a := args[2:]
		if len(a) != 4 || slices.ContainsFunc(a, func(s string) bool { return strings.HasPrefix(s, "-") }) {
			return fail("alias set %q: only ALIAS URL ACCESS-KEY SECRET-KEY is modelled", a)
		}
		alias := mcAlias{URL: a[1], AccessKey: a[2], SecretKey: a[3]}
		if _, err := mcClient(alias).ListBuckets(ctx, &s3.ListBucketsInput{}); err != nil {
			return fail("Unable to initialize new alias from the provided credentials: %v", err)
		}
		aliases[a[0]] = alias
		b, _ := json.Marshal(aliases)
		if err := os.MkdirAll(filepath.Dir(config), 0o700); err != nil {
			return fail("%v", err)
		}
		if err := os.WriteFile(config, b, 0o600); err != nil {
			return fail("%v", err)
		}
		fmt.Fprintf(stdout, "Added `%s` successfully.\n", a[0])
	case len(args) >= 1 && args[0] == "mb":
		ignore := false
		var targets []string
		for _, a := range args[1:] {
			switch {
			case a == "--ignore-existing" || a == "-p":
				ignore = true
			case strings.HasPrefix(a, "-"):
				return fail("mb %s is not modelled", a)
			default:
				targets = append(targets, a)
			}
		}
		if len(targets) == 0 {
			return fail("mb: no ALIAS/BUCKET")
		}
		for _, target := range targets {
			name, bucket, _ := strings.Cut(strings.TrimSuffix(target, "/"), "/")
			alias, ok := aliases[name]
			if !ok || bucket == "" || strings.Contains(bucket, "/") {
				return fail("mb %s: want ALIAS/BUCKET with an alias set before (aliases: %v)", target, slices.Sorted(maps.Keys(aliases)))
			}
			c := mcClient(alias)
			if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &bucket}); err == nil && ignore {
				continue
			}
			if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
				return fail("Unable to make bucket `%s`: %v", target, err)
			}
			fmt.Fprintf(stdout, "Bucket created successfully `%s`.\n", target)
		}
	default:
		return fail("%q is not modelled", args)
	}
	return 0
}

// mcClient is an S3 client for an alias: path-style, region us-east-1
// (mc's default), the alias's key, nothing from the environment.
func mcClient(a mcAlias) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(a.URL),
		UsePathStyle: true,
		Region:       "us-east-1",
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: a.AccessKey, SecretAccessKey: a.SecretKey}, nil
		}),
	})
}
