package job

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// irregularTree is a directory of regular files beside a named pipe (with
// and without a name that tells a kind), a socket, links to a FIFO and to
// devices that read for ever or nothing, and a link to a directory.
func irregularTree(t *testing.T) string {
	t.Helper()
	dir := tree(t, map[string]string{"a.jsonl": `{"id":"a","text":"x"}` + "\n", "sub/b.jsonl": `{"id":"b","text":"y"}` + "\n"})
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, name := range []string{"pipe.jsonl", "pipe"} {
		if err := syscall.Mkfifo(p(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("unix", p("sock.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for link, target := range map[string]string{
		"pipelink.jsonl": p("pipe"), "zero.jsonl": "/dev/zero", "urandom.jsonl": "/dev/urandom", "dirlink": p("sub"),
	} {
		if err := os.Symlink(target, p(link)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// expandWithin runs ExpandInputs, failing the test if it does not return
// within a minute (an open blocked on a FIFO never returns).
func expandWithin(t *testing.T, args []string, o InputOptions) ([]Input, []Skipped, error) {
	t.Helper()
	type result struct {
		in  []Input
		sk  []Skipped
		err error
	}
	done := make(chan result, 1)
	go func() {
		in, sk, err := ExpandInputs(context.Background(), args, o)
		done <- result{in, sk, err}
	}()
	select {
	case r := <-done:
		return r.in, r.sk, r.err
	case <-time.After(time.Minute):
		t.Fatalf("ExpandInputs(%v) blocked", args)
		return nil, nil, nil
	}
}

// TestExpandInputsNotRegular: only regular files are inputs. Under a
// directory, named pipes, sockets and devices (or links to them) are
// skipped as rejected, with their type, without being opened; a link to
// a directory is skipped; named directly, such a file is an error naming
// it and its type; under --strict, finding one is an error.
func TestExpandInputsNotRegular(t *testing.T) {
	dir := irregularTree(t)
	p := func(name string) string { return filepath.Join(dir, name) }
	inputs, skipped, err := expandWithin(t, []string{dir}, InputOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range inputs {
		got = append(got, in.Path)
	}
	if want := []string{p("a.jsonl"), p("sub/b.jsonl")}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("inputs %v, want %v", got, want)
	}
	want := map[string]Skipped{
		p("pipe"):           {Reason: "not a regular file: named pipe (FIFO)", Rejected: true},
		p("pipe.jsonl"):     {Reason: "not a regular file: named pipe (FIFO)", Rejected: true},
		p("pipelink.jsonl"): {Reason: "not a regular file: named pipe (FIFO)", Rejected: true},
		p("sock.jsonl"):     {Reason: "not a regular file: socket", Rejected: true},
		p("zero.jsonl"):     {Reason: "not a regular file: character device", Rejected: true},
		p("urandom.jsonl"):  {Reason: "not a regular file: character device", Rejected: true},
		p("dirlink"):        {Reason: "a symbolic link to a directory, not followed"},
	}
	for _, sk := range skipped {
		w, ok := want[sk.Path]
		if !ok {
			t.Errorf("skipped %+v, not expected", sk)
			continue
		}
		delete(want, sk.Path)
		if w.Reason != sk.Reason || w.Rejected != sk.Rejected {
			t.Errorf("%s: skipped as %q (rejected %v), want %q (%v)", sk.Path, sk.Reason, sk.Rejected, w.Reason, w.Rejected)
		}
	}
	for path := range want {
		t.Errorf("%s was not skipped", path)
	}

	for _, name := range []string{"pipe", "pipe.jsonl", "zero.jsonl"} {
		_, _, err := expandWithin(t, []string{p(name)}, InputOptions{})
		if err == nil || !strings.Contains(err.Error(), p(name)) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s named directly: err = %v, want one naming it as not a regular file", name, err)
		}
	}
	if _, _, err := expandWithin(t, []string{dir}, InputOptions{Strict: true}); err == nil || !strings.Contains(err.Error(), "--strict") {
		t.Errorf("--strict: err = %v", err)
	}
}
