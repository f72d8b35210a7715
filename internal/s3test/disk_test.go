package s3test_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/s3test"
	"github.com/neardup/neardup/internal/storage"
)

// onDisk serves a server of s3test.OnDisk on dir on a loopback port until
// the test ends.
func onDisk(t *testing.T, dir string, buckets ...string) *s3test.Server {
	t.Helper()
	srv, err := s3test.OnDisk(dir, t.Logf, buckets...)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// TestOnDisk checks the server that keeps its objects in a directory, as
// the compose cluster's S3 container does: what one server stored, a
// server started again on the same directory serves (its bucket made once,
// found the second time); an upload cut off before its last byte leaves
// no object, as on S3, where neardup counts on it (a file appears under its
// final name only once its upload completes); an object overwritten while
// it is read is read whole, as it was (S3 replaces an object at once); and
// a server shut down finishes the requests in flight.
func TestOnDisk(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	srv := onDisk(t, dir, "bucket")
	for k, v := range srv.Env() {
		t.Setenv(k, v)
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<20/16) // uploaded in parts
	files := map[string][]byte{"kept/small": []byte("x"), "kept/big.parquet": big}
	d, err := storage.Open(ctx, "s3://bucket/")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := storage.WriteFile(ctx, d, name, data); err != nil {
			t.Fatalf("write %s: %v", name, err)
		}
	}
	d.Close()
	overwriteWhileRead(t, srv)

	// An upload that stops at half its length, its connection closed.
	u, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "PUT /bucket/cut HTTP/1.1\r\nHost: %s\r\nContent-Length: 1000\r\n\r\n%s", u.Host, bytes.Repeat([]byte("y"), 500))
	time.Sleep(200 * time.Millisecond) // the server is reading the body
	c.Close()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if _, err := http.Get(srv.Endpoint + "/bucket/"); err == nil {
		t.Fatal("the server still answers after Shutdown")
	}

	// Another server on the same directory.
	again := onDisk(t, dir, "bucket")
	for k, v := range again.Env() {
		t.Setenv(k, v)
	}
	d, err = storage.Open(ctx, "s3://bucket/")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for name, data := range files {
		got, err := storage.ReadFile(ctx, d, name)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s after a restart: %d bytes, %v; want the %d stored", name, len(got), err, len(data))
		}
	}
	if got, err := storage.ReadFile(ctx, d, "cut"); err == nil {
		t.Errorf("an upload cut off at 500 of 1000 bytes left an object of %d bytes", len(got))
	}
	list, err := d.List(ctx, "")
	if err != nil || len(list) != len(files) {
		t.Errorf("list after a restart: %q, %v; want the %d objects stored", list, err, len(files))
	}
}

// overwriteWhileRead stores bucket/overwritten (64 MiB: more than the
// connection buffers), reads it over HTTP and overwrites it with other
// bytes of the same length after the first KiB: the rest of the read must
// be the old bytes. It removes the object.
func overwriteWhileRead(t *testing.T, srv *s3test.Server) {
	t.Helper()
	name := srv.Endpoint + "/bucket/overwritten"
	old := bytes.Repeat([]byte("0123456789abcdef"), 64<<20/16)
	httpDo(t, http.MethodPut, name, old)
	resp, err := http.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, 1024)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	httpDo(t, http.MethodPut, name, bytes.Repeat([]byte("z"), len(old)))
	rest, err := io.ReadAll(resp.Body)
	if got := append(first, rest...); err != nil || !bytes.Equal(got, old) {
		t.Errorf("a read of an object overwritten meanwhile: %d bytes (%v), the first %d of them the old ones; want the %d old bytes", len(got), err, commonPrefix(got, old), len(old))
	}
	httpDo(t, http.MethodDelete, name, nil)
}

// httpDo sends an unsigned request with body and checks that it succeeds.
func httpDo(t *testing.T, method, url string, body []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: status %d", method, url, resp.StatusCode)
	}
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
