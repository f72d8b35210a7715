// Package s3test runs an S3-protocol server for tests
// (github.com/johannesboyne/gofakes3), so that the object-store paths of
// neardup are exercised against a real S3 protocol without a network or
// credentials: in memory on loopback for a test (Run, Start), or keeping
// its objects in a directory (OnDisk), as the S3 container of the compose
// cluster does (cmd/s3test).
package s3test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3afero"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/spf13/afero"
)

// Server is a running S3 test server.
type Server struct {
	// Endpoint is the server's URL, http://host:port, once it serves.
	Endpoint string
	backend  gofakes3.Backend
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
	s, err := newServer(s3mem.New(), t.Logf, buckets)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// OnDisk returns a server whose buckets and objects are files under dir
// (gofakes3's s3afero layout: buckets/ and metadata/; uploads arrive in
// spool/), so that they outlive the process: a server started again on
// dir serves what the last one stored. As on S3, an object is stored once
// its upload has arrived whole (an upload cut off leaves nothing: neardup
// counts on it) and replaced at once (a reader of the object it replaces
// reads the old bytes to the end). The buckets
// named are made unless they exist. logf logs the requests refused. It
// serves from Listen on.
func OnDisk(dir string, logf func(format string, args ...any), buckets ...string) (*Server, error) {
	spool := filepath.Join(dir, "spool")
	if err := os.MkdirAll(spool, 0o700); err != nil {
		return nil, fmt.Errorf("s3test: %w", err)
	}
	root := afero.NewBasePathFs(afero.NewOsFs(), dir)
	backend, err := s3afero.MultiBucket(replacing{root, "spool"})
	if err != nil {
		return nil, fmt.Errorf("s3test: %s: %w", dir, err)
	}
	return newServer(whole{backend, spool}, logf, buckets)
}

// newServer is a server of backend with the buckets named (made unless
// they exist); logf logs the requests refused.
func newServer(backend gofakes3.Backend, logf func(format string, args ...any), buckets []string) (*Server, error) {
	for _, b := range buckets {
		ok, err := backend.BucketExists(b)
		if err == nil && !ok {
			err = backend.CreateBucket(b)
		}
		if err != nil {
			return nil, fmt.Errorf("s3test: bucket %s: %w", b, err)
		}
	}
	s := &Server{backend: backend, key: Key{"neardup-test", "neardup-test-secret"}}
	fake := gofakes3.New(backend).Server()
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.refuse(r); err != nil {
			logf("s3test: %s %s refused: %s: %s", r.Method, r.RequestURI, err.code, err.msg)
			err.write(w)
			return
		}
		fake.ServeHTTP(w, r)
	})
	return s, nil
}

// Listen serves on addr (host:port; port 0 picks a free one) until Stop
// or Shutdown, and sets Endpoint.
func (s *Server) Listen(addr string) error {
	s.addr = addr
	if err := s.Restart(); err != nil {
		return err
	}
	s.Endpoint = "http://" + s.addr
	return nil
}

// Shutdown stops serving for good, as a server process asked to stop
// does: it closes its listener, then waits for the requests in flight to
// finish until ctx is done.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	if err := srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("s3test: shutdown: %w", err)
	}
	return nil
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

// Restart serves again, on the same port, after Stop.
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

// whole is a backend that stores an object only once its upload has
// arrived whole: it receives the body into a file of its own first
// (under spool), and hands it to the backend only when all size bytes
// came. s3afero writes into the object's file as the body arrives, so an
// upload cut off would leave a short object (and, without its metadata, a
// bucket that no longer lists).
type whole struct {
	gofakes3.Backend
	spool string
}

// PutObject receives the body, then stores it.
func (b whole) PutObject(bucket, key string, meta map[string]string, input io.Reader, size int64, cond *gofakes3.PutConditions) (gofakes3.PutObjectResult, error) {
	f, err := os.CreateTemp(b.spool, "put-*")
	if err != nil {
		return gofakes3.PutObjectResult{}, fmt.Errorf("s3test: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	n, err := io.Copy(f, input)
	switch {
	case err != nil:
		return gofakes3.PutObjectResult{}, fmt.Errorf("s3test: receiving %s/%s: %w", bucket, key, err)
	case n != size:
		return gofakes3.PutObjectResult{}, fmt.Errorf("s3test: receiving %s/%s: %d bytes of %d", bucket, key, n, size)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return gofakes3.PutObjectResult{}, fmt.Errorf("s3test: %w", err)
	}
	return b.Backend.PutObject(bucket, key, meta, f, size, cond)
}

// replacing is a file system whose Create makes a file under a temporary
// name in spool and renames it to its name when it is closed: s3afero
// overwrites an object's file in place, and a reader of the object, which
// reads the file after s3afero's lock is released, would read the new
// bytes after the old ones; S3 replaces an object at once.
type replacing struct {
	afero.Fs
	spool string
}

// Create makes the file that replaces name when closed.
func (fs replacing) Create(name string) (afero.File, error) {
	f, err := afero.TempFile(fs.Fs, fs.spool, "object-*")
	if err != nil {
		return nil, err
	}
	return &replacement{File: f, fs: fs.Fs, name: name}, nil
}

// replacement is a file of replacing.Create.
type replacement struct {
	afero.File
	fs     afero.Fs
	name   string
	failed bool // a write failed: the file is not renamed
	closed bool
}

// Write writes to the temporary file.
func (f *replacement) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	if err != nil {
		f.failed = true
	}
	return n, err
}

// Close closes the file and renames it to its name, or removes it after a
// failed write.
func (f *replacement) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	tmp := f.File.Name()
	err := f.File.Close()
	if err == nil && !f.failed {
		return f.fs.Rename(tmp, f.name)
	}
	f.fs.Remove(tmp)
	if err == nil {
		err = fmt.Errorf("s3test: %s: a write failed", f.name)
	}
	return err
}
