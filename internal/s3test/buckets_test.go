package s3test_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/s3test"
	"github.com/neardup/neardup/internal/storage"
)

// TestMakeBuckets makes buckets as the compose cluster's setup service
// does: on a server that starts listening only a second later, one bucket
// there already, one new; a wrong key is refused at once, not asked again
// until the deadline; a server that never answers is given up at the
// deadline, naming the bucket.
func TestMakeBuckets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	endpoint := "http://" + addr
	srv, err := s3test.OnDisk(t.TempDir(), t.Logf, "there")
	if err != nil {
		t.Fatal(err)
	}
	key := s3test.Key{ID: "user", Secret: "its-secret"}
	srv.RequireKey(key)
	listening := make(chan error, 1)
	time.AfterFunc(time.Second, func() { listening <- srv.Listen(addr) })
	t.Cleanup(srv.Stop)
	if err := s3test.MakeBuckets(ctx, endpoint, key, "there", "new"); err != nil {
		t.Fatal(err)
	}
	if err := <-listening; err != nil {
		t.Fatal(err)
	}
	for k, v := range srv.Env() {
		t.Setenv(k, v)
	}
	for b, want := range map[string]bool{"there": true, "new": true, "missing": false} {
		d, err := storage.Open(ctx, "s3://"+b+"/")
		if err == nil {
			d.Close()
		}
		if (err == nil) != want {
			t.Errorf("bucket %s: open: %v, want it there: %v", b, err, want)
		}
	}
	if err := s3test.MakeBuckets(ctx, endpoint, key, "there", "new"); err != nil {
		t.Errorf("buckets that exist: %v", err)
	}

	begun := time.Now()
	err = s3test.MakeBuckets(ctx, endpoint, s3test.Key{ID: "user", Secret: "wrong"}, "other")
	if err == nil || !strings.Contains(err.Error(), "SignatureDoesNotMatch") || time.Since(begun) > 5*time.Second {
		t.Errorf("a wrong key: %v after %v, want SignatureDoesNotMatch at once", err, time.Since(begun))
	}

	srv.Stop()
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := s3test.MakeBuckets(short, endpoint, key, "gone"); err == nil || !strings.Contains(err.Error(), "bucket gone") {
		t.Errorf("a server that is gone: %v, want an error naming the bucket", err)
	}
}
