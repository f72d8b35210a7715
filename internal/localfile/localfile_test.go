package localfile

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestOpen opens files of every type, directly and through symbolic
// links: only regular files open, the others are refused with their
// type named, and none blocks (a FIFO without a writer, a device that
// reads for ever).
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(p("a.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p("pipe.jsonl"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", p("sock.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for link, target := range map[string]string{
		"link.jsonl": p("a.jsonl"), "pipelink.jsonl": p("pipe.jsonl"),
		"zero.jsonl": "/dev/zero", "null.jsonl": "/dev/null", "urandom.jsonl": "/dev/urandom",
	} {
		if err := os.Symlink(target, p(link)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		path string
		typ  string // "" for a regular file
	}{
		{"regular", p("a.jsonl"), ""},
		{"link to a regular file", p("link.jsonl"), ""},
		{"FIFO", p("pipe.jsonl"), "named pipe (FIFO)"},
		{"link to a FIFO", p("pipelink.jsonl"), "named pipe (FIFO)"},
		{"socket", p("sock.jsonl"), "socket"},
		{"character device", "/dev/null", "character device"},
		{"link to /dev/zero", p("zero.jsonl"), "character device"},
		{"link to /dev/null", p("null.jsonl"), "character device"},
		{"link to /dev/urandom", p("urandom.jsonl"), "character device"},
		{"directory", dir, "directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				f, _, err := Open(tt.path)
				if err == nil {
					f.Close()
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("Open(%s) blocked", tt.path)
			}
			checkNotRegular(t, tt.path, tt.typ, err)
			_, err = Stat(tt.path)
			checkNotRegular(t, tt.path, tt.typ, err)
		})
	}
}

// TestOpenedRefusesSwappedFIFO checks a FIFO through its descriptor, as
// Open does when the path named a regular file a moment before.
func TestOpenedRefusesSwappedFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Opened(f)
	checkNotRegular(t, path, "named pipe (FIFO)", err)
	if err := f.Close(); err == nil {
		t.Error("the refused file was left open")
	}
}

// checkNotRegular checks err for a path of type typ ("" for a regular
// file, which must give no error).
func checkNotRegular(t *testing.T, path, typ string, err error) {
	t.Helper()
	if typ == "" {
		if err != nil {
			t.Errorf("%s: %v", path, err)
		}
		return
	}
	var nr *NotRegularError
	if !errors.As(err, &nr) || !errors.Is(err, ErrNotRegular) || nr.Type != typ || nr.Path != path {
		t.Fatalf("%s: got %v, want a NotRegularError naming it as %s", path, err, typ)
	}
	if want := "not a regular file: " + typ; nr.Reason() != want {
		t.Errorf("reason %q, want %q", nr.Reason(), want)
	}
}
