package s3test_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/s3test"
	"github.com/neardup/neardup/internal/storage"
)

// TestRequireKey checks the signature check against the client neardup
// uses (the AWS SDK's S3 client): signed with the key, every
// operation of the storage contract works, ranged reads and keys that
// need escaping included; signed with another key or secret, or not
// signed, a request is refused. The same for a server in memory and one
// on disk.
func TestRequireKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T) *s3test.Server
	}{
		{"memory", func(t *testing.T) *s3test.Server { return s3test.Run(t, "bucket") }},
		{"disk", func(t *testing.T) *s3test.Server { return onDisk(t, t.TempDir(), "bucket") }},
	} {
		t.Run(tc.name, func(t *testing.T) { requireKey(t, tc.run(t)) })
	}
}

// requireKey is TestRequireKey on the server srv, which has a bucket
// "bucket".
func requireKey(t *testing.T, srv *s3test.Server) {
	ctx := context.Background()
	key := s3test.Key{ID: "user", Secret: "its-secret"}
	srv.RequireKey(key)
	for k, v := range srv.Env() {
		t.Setenv(k, v)
	}
	if got := srv.Env()["AWS_ACCESS_KEY_ID"]; got != key.ID {
		t.Fatalf("Env gives key %s, want the required %s", got, key.ID)
	}

	d, err := storage.Open(ctx, "s3://bucket/job out")
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<20/16) // read in blocks of 1 MiB
	names := []string{"bands/part=00001/chunk-000001.parquet", "a b+c,d;e.parquet", "small"}
	for _, name := range names {
		data := big
		if name == "small" {
			data = []byte("x")
		}
		if err := storage.WriteFile(ctx, d, name, data); err != nil {
			t.Fatalf("write %s signed with the key: %v", name, err)
		}
		got, err := storage.ReadFile(ctx, d, name)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read %s: %d bytes, %v", name, len(got), err)
		}
	}
	f, err := d.Open(ctx, names[0])
	if err != nil {
		t.Fatal(err)
	}
	part := make([]byte, 100)
	if _, err := f.ReadAt(part, 2<<20-50); err != nil || !bytes.Equal(part, big[2<<20-50:2<<20+50]) {
		t.Fatalf("ranged read: %v", err)
	}
	f.Close()
	list, err := d.List(ctx, "")
	if slices.Sort(names); err != nil || !slices.Equal(list, names) {
		t.Fatalf("list: %v, %v, want %v", list, err, names)
	}
	if err := d.Remove(ctx, "small"); err != nil {
		t.Fatal(err)
	}
	d.Close()

	for _, tc := range []struct{ id, secret, want string }{
		{key.ID, "another-secret", "SignatureDoesNotMatch"},
		{"another-user", key.Secret, "InvalidAccessKeyId"},
	} {
		t.Setenv("AWS_ACCESS_KEY_ID", tc.id)
		t.Setenv("AWS_SECRET_ACCESS_KEY", tc.secret)
		// Open lists the prefix, the first request.
		d, err := storage.Open(ctx, "s3://bucket/job out")
		if err == nil {
			err = storage.WriteFile(ctx, d, "other", []byte("x"))
			d.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("signed by %s with secret %s: %v, want %s", tc.id, tc.secret, err, tc.want)
		}
	}

	if code := get(t, srv.Endpoint+"/bucket/"); code != http.StatusForbidden {
		t.Errorf("an unsigned request: status %d, want 403", code)
	}
	if code := get(t, s3test.Run(t, "bucket").Endpoint+"/bucket/"); code != http.StatusOK {
		t.Errorf("an unsigned request to a server that requires no key: status %d, want 200", code)
	}
}

// get returns the status of an unsigned GET.
func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
