// Package s3test runs an S3-protocol server on loopback for tests
// (github.com/johannesboyne/gofakes3, in memory), so that the object-store
// paths of neardup are exercised against a real S3 protocol without a
// network or credentials.
package s3test

import (
	"bytes"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Server is a running S3 test server.
type Server struct {
	// Endpoint is the server's URL, http://127.0.0.1:port.
	Endpoint string
	backend  *s3mem.Backend
	handler  http.Handler
	addr     string // its host:port, kept across Stop and Restart

	mu       sync.Mutex
	key      Key          // the key Env gives
	require  bool         // whether requests must be signed with key
	slowDown bool         // whether every request gets 503 SlowDown
	srv      *http.Server // nil while stopped
}

// Key is an S3 access key: its ID and secret.
type Key struct{ ID, Secret string }

// Start runs a server with the given buckets until the test ends, and sets
// the environment an AWS client reads (credentials, region, endpoint), so
// that s3://bucket/... URLs reach it, in this process and in the commands
// the test starts.
func Start(t testing.TB, buckets ...string) *Server {
	t.Helper()
	s := Run(t, buckets...)
	for k, v := range s.Env() {
		t.Setenv(k, v)
	}
	return s
}

// Run runs a server with the given buckets until the test ends, like
// Start, but leaves the environment alone: its clients are pointed at it
// (Endpoint, Env) by the test.
func Run(t testing.TB, buckets ...string) *Server {
	t.Helper()
	backend := s3mem.New()
	for _, b := range buckets {
		if err := backend.CreateBucket(b); err != nil {
			t.Fatalf("s3test: bucket %s: %v", b, err)
		}
	}
	s := &Server{backend: backend, key: Key{"neardup-test", "neardup-test-secret"}, addr: "127.0.0.1:0"}
	fake := gofakes3.New(backend).Server()
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.refuse(r); err != nil {
			t.Logf("s3test: %s %s refused: %s: %s", r.Method, r.RequestURI, err.code, err.msg)
			err.write(w)
			return
		}
		fake.ServeHTTP(w, r)
	})
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	s.Endpoint = "http://" + s.addr
	return s
}

// Stop makes the server unreachable, as in an outage: its listener and
// every open connection are closed, so that requests fail with
// "connection refused". The objects stay for Restart.
func (s *Server) Stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// Restart serves again, on the same port, after Stop (or the first
// time).
func (s *Server) Restart() error {
	l, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("s3test: %w", err)
	}
	srv := &http.Server{Handler: s.handler}
	s.mu.Lock()
	s.addr, s.srv = l.Addr().String(), srv
	s.mu.Unlock()
	go srv.Serve(l)
	return nil
}

// SlowDown makes the server answer every request with 503 SlowDown (as S3
// does when it throttles), or, with on false, serve again.
func (s *Server) SlowDown(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slowDown = on
}

// refuse is the error r gets instead of being served, or nil.
func (s *Server) refuse(r *http.Request) *s3Error {
	s.mu.Lock()
	slow := s.slowDown
	s.mu.Unlock()
	if slow {
		return &s3Error{http.StatusServiceUnavailable, "SlowDown", "Please reduce your request rate."}
	}
	return s.authorize(r)
}

// RequireKey makes the server accept only requests signed with key (AWS
// Signature Version 4 in the Authorization header, checked as S3 does),
// as a server with one user does: a request signed with another key, with
// a wrong secret or not signed gets 403. Without it any request is served,
// signed or not. Env gives key from then on.
func (s *Server) RequireKey(key Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key, s.require = key, true
}

// authorize checks the signature of r if the server requires a key.
func (s *Server) authorize(r *http.Request) *s3Error {
	s.mu.Lock()
	key, require := s.key, s.require
	s.mu.Unlock()
	if !require {
		return nil
	}
	return verifyV4(r, key)
}

// Env is the environment that points AWS clients at the server.
func (s *Server) Env() map[string]string {
	s.mu.Lock()
	key := s.key
	s.mu.Unlock()
	return map[string]string{
		"AWS_ACCESS_KEY_ID":     key.ID,
		"AWS_SECRET_ACCESS_KEY": key.Secret,
		"AWS_REGION":            "us-east-1",
		"AWS_ENDPOINT_URL":      s.Endpoint,
		// No profile or instance metadata lookups.
		"AWS_CONFIG_FILE":             "/dev/null",
		"AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
		"AWS_EC2_METADATA_DISABLED":   "true",
	}
}

// PutDir stores the files under a local directory as objects of bucket
// under prefix (keys prefix/relative/path).
func (s *Server) PutDir(t testing.TB, dir, bucket, prefix string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		_, err = s.backend.PutObject(bucket, path.Join(prefix, filepath.ToSlash(rel)), nil, bytes.NewReader(data), int64(len(data)), nil)
		return err
	})
	if err != nil {
		t.Fatalf("s3test: %v", err)
	}
}
