package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/neardup/neardup/internal/s3test"
	"github.com/neardup/neardup/internal/transient"
)

// TestS3Options checks the reading of an s3:// location's options: the
// options of gocloud.dev's s3blob, which earlier versions used, keep
// their meaning, and an unknown option or a bad value is an error naming
// it.
func TestS3Options(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		query   string
		want    s3Options
		wantErr string
	}{
		{query: "", want: s3Options{}},
		{query: "region=eu-west-1&endpoint=http://minio:9000", want: s3Options{region: "eu-west-1", endpoint: "http://minio:9000"}},
		{query: "use_path_style=true", want: s3Options{pathStyle: &yes}},
		{query: "use_path_style=false", want: s3Options{pathStyle: &no}},
		{query: "s3ForcePathStyle=true", want: s3Options{pathStyle: &yes}},
		{query: "hostname_immutable=true", want: s3Options{pathStyle: &yes}},
		{query: "disable_https=true&anonymous=true&dualstack=true&fips=true&accelerate=true",
			want: s3Options{disableHTTPS: true, anonymous: true, dualStack: true, fips: true, accelerate: true}},
		{query: "profile=batch&role=arn:aws:iam::1:role/r", want: s3Options{profile: "batch", role: "arn:aws:iam::1:role/r"}},
		{query: "request_checksum_calculation=when_required&response_checksum_validation=when_required",
			want: s3Options{requestChecksum: aws.RequestChecksumCalculationWhenRequired, responseChecksum: aws.ResponseChecksumValidationWhenRequired}},
		{query: "ssetype=aws:kms&kmskeyid=k1", want: s3Options{sse: "aws:kms", kmsKeyID: "k1"}},
		{query: "rate_limiter_capacity=500&awssdk=v2", want: s3Options{rateLimit: 500}},
		{query: "regoin=eu-west-1", wantErr: "option regoin=eu-west-1: no such option of an s3:// location"},
		{query: "use_path_style=maybe", wantErr: "option use_path_style=maybe"},
		{query: "role=admin", wantErr: "option role=admin: not an IAM role's ARN"},
		{query: "request_checksum_calculation=always", wantErr: "not when_supported or when_required"},
		{query: "ssetype=rot13", wantErr: "not AES256"},
		{query: "rate_limiter_capacity=lots", wantErr: "option rate_limiter_capacity=lots"},
		{query: "region=%zz", wantErr: "the location's options"},
	}
	for _, tt := range tests {
		got, err := parseS3Options(tt.query)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseS3Options(%q) = %v, want an error saying %q", tt.query, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseS3Options(%q) = %+v, %v; want %+v", tt.query, got, err, tt.want)
		}
	}
}

// TestParseLocationS3Options checks that an s3:// location's options are
// checked when it is parsed, so that a misspelt one is a usage error
// before any job starts.
func TestParseLocationS3Options(t *testing.T) {
	if _, err := ParseLocation("s3://b/out?endpoint=http://minio:9000&region=us-east-1&use_path_style=true"); err != nil {
		t.Errorf("known options: %v", err)
	}
	_, err := ParseLocation("s3://b/out?endpoint=http://minio:9000&regoin=us-east-1")
	if err == nil || !strings.Contains(err.Error(), "option regoin=us-east-1: no such option") {
		t.Errorf("a misspelt option: %v, want an error naming it", err)
	}
}

// TestDocS3Locations parses the example locations of docs/operations.md
// ("S3-compatible stores"): each is a valid s3:// location whose options
// the S3 client knows.
func TestDocS3Locations(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "### S3-compatible stores")
	_, block, _ := strings.Cut(section, "```text\n")
	block, _, _ = strings.Cut(block, "```")
	n := 0
	for _, line := range strings.Split(block, "\n") {
		if !strings.HasPrefix(line, "s3://") {
			continue
		}
		n++
		if _, err := ParseLocation(line); err != nil {
			t.Errorf("docs/operations.md: %s: %v", line, err)
		}
	}
	if n < 3 {
		t.Fatalf("docs/operations.md's S3-compatible stores hold %d s3:// locations, want the MinIO, R2 and GCS ones", n)
	}
}

// TestS3PathStyle checks how a bucket is addressed: path-style with a
// custom endpoint (the option's or the environment's), as S3-compatible
// stores expect, unless the location says otherwise; in the host name on
// AWS.
func TestS3PathStyle(t *testing.T) {
	for _, tt := range []struct {
		query, envEndpoint string
		want               bool
	}{
		{"region=us-east-1", "", false},
		{"region=us-east-1&endpoint=http://minio:9000", "", true},
		{"region=us-east-1", "http://minio:9000", true},
		{"region=us-east-1&endpoint=http://minio:9000&use_path_style=false", "", false},
		{"region=us-east-1&use_path_style=true", "", true},
	} {
		t.Setenv("AWS_ENDPOINT_URL", tt.envEndpoint)
		t.Setenv("AWS_ENDPOINT_URL_S3", "")
		t.Setenv("AWS_CONFIG_FILE", "/dev/null")
		t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
		b, err := openS3(context.Background(), Location{Scheme: "s3", Bucket: "b", Query: tt.query})
		if err != nil {
			t.Fatal(err)
		}
		if got := b.client.Options().UsePathStyle; got != tt.want {
			t.Errorf("?%s with AWS_ENDPOINT_URL=%q: path-style %v, want %v", tt.query, tt.envEndpoint, got, tt.want)
		}
	}
}

// TestS3EndpointOption reaches an S3-compatible server through the
// location's endpoint= and region= options alone, as for MinIO, R2 or
// Google Cloud Storage's interoperability endpoint, with the credentials
// in the environment.
func TestS3EndpointOption(t *testing.T) {
	srv := s3test.Run(t, "bucket")
	for k, v := range srv.Env() {
		t.Setenv(k, v)
	}
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Setenv("AWS_REGION", "")
	ctx := context.Background()
	d, err := Open(ctx, "s3://bucket/job?endpoint="+srv.Endpoint+"&region=auto")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := WriteFile(ctx, d, "a/x", []byte("through endpoint=")); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(ctx, d, "a/x"); err != nil || string(got) != "through endpoint=" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
}

// TestS3FaultsAreTransient checks that what the S3 client returns when
// the store is down (connection refused) or throttles (503 SlowDown),
// after its own retries, is an error that package transient classifies
// as one that time may mend, and that a missing object is not.
func TestS3FaultsAreTransient(t *testing.T) {
	srv := s3test.Start(t, "bucket")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := Open(ctx, "s3://bucket/job")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := WriteFile(ctx, d, "x", []byte("x")); err != nil {
		t.Fatal(err)
	}
	_, err = d.Open(ctx, "missing")
	if !errors.Is(err, fs.ErrNotExist) || transient.Is(err) {
		t.Errorf("a missing object: %v; want not-exist, not transient", err)
	}
	for _, fault := range []struct {
		name       string
		start, end func()
	}{
		{"503 SlowDown", func() { srv.SlowDown(true) }, func() { srv.SlowDown(false) }},
		{"connection refused", srv.Stop, func() {
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		fault.start()
		_, rerr := ReadFile(ctx, d, "x")
		werr := WriteFile(ctx, d, "y", []byte("y"))
		fault.end()
		for op, err := range map[string]error{"read": rerr, "write": werr} {
			if err == nil || !transient.Is(err) {
				t.Errorf("%s during %s: %v; want a transient error", op, fault.name, err)
			}
		}
	}
}

// TestLargeUpload writes a file of several upload parts (a multipart
// upload on S3) and reads it back, and abandons another: nothing of it
// appears.
func TestLargeUpload(t *testing.T) {
	stores(t, func(t *testing.T, d *Dir) {
		ctx := context.Background()
		data := make([]byte, 17<<20+3)
		for i := range data {
			data[i] = byte(i*31 + i>>13)
		}
		if err := WriteFile(ctx, d, "big/committed", data); err != nil {
			t.Fatal(err)
		}
		w, err := d.Create(ctx, "big/aborted")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := w.Abort(); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Open(ctx, "big/aborted"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("an abandoned upload: %v, want not exist", err)
		}
		if got, err := ReadFile(ctx, d, "big/committed"); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read back %d bytes of %d, %v", len(got), len(data), err)
		}
		if names, err := d.List(ctx, "big"); err != nil || !reflect.DeepEqual(names, []string{"big/committed"}) {
			t.Errorf("List = %v, %v; want only the committed file", names, err)
		}
	})
}

// shortBucket is a bucket whose object is shorter than its attributes say,
// as when it was replaced by a shorter one after it was opened.
type shortBucket struct {
	bucket
	size, has int64
}

func (b shortBucket) attributes(context.Context, string) (objectAttrs, error) {
	return objectAttrs{Size: b.size}, nil
}

func (b shortBucket) readRange(_ context.Context, _ string, off, n int64) (io.ReadCloser, error) {
	n = max(0, min(n, b.has-off))
	return io.NopCloser(bytes.NewReader(make([]byte, n))), nil
}

// TestObjectShorterThanOpened checks that a read of an object that came
// back with fewer bytes than asked (it changed since it was opened) is an
// error, not other bytes or a panic.
func TestObjectShorterThanOpened(t *testing.T) {
	f, err := openObject(context.Background(), shortBucket{size: 2*objectBlock + 10, has: objectBlock + 5}, "k", "k")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	if _, err := f.ReadAt(buf, objectBlock+50); err == nil || !strings.Contains(err.Error(), "changed since it was opened") {
		t.Errorf("ReadAt past what the object holds: %v, want an error", err)
	}
	if _, err := io.ReadAll(f); err == nil {
		t.Error("reading it all: no error")
	}
}

// TestEmptyFile writes a file of no bytes (as _SUCCESS may be): it
// appears, empty.
func TestEmptyFile(t *testing.T) {
	stores(t, func(t *testing.T, d *Dir) {
		ctx := context.Background()
		if err := WriteFile(ctx, d, "empty", nil); err != nil {
			t.Fatal(err)
		}
		f, err := d.Open(ctx, "empty")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if data, err := io.ReadAll(f); f.Size() != 0 || len(data) != 0 || err != nil {
			t.Errorf("size %d, read %q, %v; want an empty file", f.Size(), data, err)
		}
	})
}
