package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/redact/redacttest"
	"github.com/neardup/neardup/internal/s3test"
)

// stores runs f on a local store, on one in an S3 bucket (a test server
// on loopback) and, in builds with the tags gcs or azure, on one through
// their gocloud.dev adapter (over its in-memory bucket): all keep the
// same contract.
func stores(t *testing.T, f func(t *testing.T, d *Dir)) {
	t.Run("local", func(t *testing.T) {
		d, err := Open(context.Background(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		f(t, d)
	})
	t.Run("s3", func(t *testing.T) {
		s3test.Start(t, "bucket")
		d, err := Open(context.Background(), "s3://bucket/jobs/out")
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		f(t, d)
	})
	if d := cloudStore(t); d != nil {
		t.Run("gocloud", func(t *testing.T) { f(t, d) })
	}
}

func TestCreateCommitAbortList(t *testing.T) { stores(t, testCreateCommitAbortList) }

func testCreateCommitAbortList(t *testing.T, d *Dir) {
	ctx := context.Background()
	var err error
	tests := []struct {
		name   string
		commit bool
	}{
		{"a/one.parquet", true},
		{"a/b/two.parquet", true},
		{"a/aborted.parquet", false},
	}
	for _, tt := range tests {
		w, err := d.Create(ctx, tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(tt.name)); err != nil {
			t.Fatal(err)
		}
		// Before commit, nothing is visible under the name.
		if _, err := d.Open(ctx, tt.name); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s visible before commit: %v", tt.name, err)
		}
		if names, _ := d.List(ctx, "a"); len(names) > 2 {
			t.Fatalf("list shows a file being written: %v", names)
		}
		if tt.commit {
			err = w.Commit()
		} else {
			err = w.Abort()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	names, err := d.List(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/b/two.parquet", "a/one.parquet"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("List = %v, want %v", names, want)
	}
	got, err := ReadFile(ctx, d, "a/one.parquet")
	if err != nil || string(got) != "a/one.parquet" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	if names, err := d.List(ctx, "missing"); err != nil || len(names) != 0 {
		t.Fatalf("List(missing) = %v, %v", names, err)
	}
	if !d.Local() {
		return
	}
	// No temporary file is left behind.
	entries, _ := os.ReadDir(filepath.Join(d.Root(), "a"))
	for _, e := range entries {
		if !e.IsDir() && filepath.Ext(e.Name()) != ".parquet" {
			t.Fatalf("left behind: %s", e.Name())
		}
	}
}

func TestCommitReplacesAtomically(t *testing.T) {
	stores(t, func(t *testing.T, d *Dir) {
		ctx := context.Background()
		for _, content := range []string{"first", "second"} {
			if err := WriteFile(ctx, d, "x", []byte(content)); err != nil {
				t.Fatal(err)
			}
		}
		if got, _ := ReadFile(ctx, d, "x"); string(got) != "second" {
			t.Fatalf("got %q", got)
		}
	})
}

// TestReadAtAndRemove reads a file of several read blocks at offsets that
// cross block boundaries, sequentially and at random, then removes a
// directory: nothing under it remains, and a file beside it does.
func TestReadAtAndRemove(t *testing.T) {
	stores(t, func(t *testing.T, d *Dir) {
		ctx := context.Background()
		data := make([]byte, 3*objectBlock+12345)
		for i := range data {
			data[i] = byte(i*7 + i>>11)
		}
		if err := WriteFile(ctx, d, "dir/big", data); err != nil {
			t.Fatal(err)
		}
		if err := WriteFile(ctx, d, "dirx", []byte("beside")); err != nil {
			t.Fatal(err)
		}
		f, err := d.Open(ctx, "dir/big")
		if err != nil {
			t.Fatal(err)
		}
		if f.Size() != int64(len(data)) {
			t.Fatalf("Size = %d, want %d", f.Size(), len(data))
		}
		for _, r := range []struct{ off, n int }{{0, 10}, {objectBlock - 5, 10}, {2*objectBlock - 1, objectBlock + 2}, {len(data) - 3, 3}, {7, 2 * objectBlock}} {
			buf := make([]byte, r.n)
			if n, err := f.ReadAt(buf, int64(r.off)); n != r.n || err != nil && err != io.EOF {
				t.Fatalf("ReadAt(%d, %d) = %d, %v", r.off, r.n, n, err)
			}
			if !bytes.Equal(buf, data[r.off:r.off+r.n]) {
				t.Fatalf("ReadAt(%d, %d) read other bytes", r.off, r.n)
			}
		}
		if all, err := io.ReadAll(f); err != nil || !bytes.Equal(all, data) {
			t.Fatalf("sequential read: %d bytes, %v", len(all), err)
		}
		f.Close()
		if err := d.Remove(ctx, "dir"); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Open(ctx, "dir/big"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("after Remove: %v, want not exist", err)
		}
		if got, err := ReadFile(ctx, d, "dirx"); err != nil || string(got) != "beside" {
			t.Fatalf("a file beside the removed directory: %q, %v", got, err)
		}
	})
}

// TestParseLocation checks paths, file URLs, object-store URLs and that an
// unknown scheme is refused rather than taken for a local folder.
func TestParseLocation(t *testing.T) {
	tests := []struct {
		in      string
		want    Location
		wantErr error
	}{
		{in: "out", want: Location{Path: "out"}},
		{in: "/data/out", want: Location{Path: "/data/out"}},
		{in: "file:///data/out", want: Location{Path: "/data/out"}},
		{in: "s3://bucket/a/b/", want: Location{Scheme: "s3", Bucket: "bucket", Key: "a/b"}},
		{in: "s3://bucket", want: Location{Scheme: "s3", Bucket: "bucket"}},
		{in: "gs://b/x?y=1", want: Location{Scheme: "gs", Bucket: "b", Key: "x", Query: "y=1"}},
		{in: "azblob://c/p", want: Location{Scheme: "azblob", Bucket: "c", Key: "p"}},
		{in: "s4://bucket/out", wantErr: ErrScheme},
		{in: "hdfs://nn/out", wantErr: ErrScheme},
	}
	for _, tt := range tests {
		if leftOut(tt.want.Scheme) != "" {
			continue // TestLeftOut
		}
		got, err := ParseLocation(tt.in)
		if tt.wantErr != nil {
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("ParseLocation(%q) = %+v, %v; want %v", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseLocation(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

// TestLocationCredentials checks that a location URL carrying a user or
// password, in its own user part or in an option's URL, is refused, and
// that no error shows the secret, whatever it holds (parsed or not).
func TestLocationCredentials(t *testing.T) {
	for _, h := range redacttest.Hostile() {
		for _, loc := range []string{
			"s3://" + h.Text + "@bucket/out",
			"gs://" + h.Text + "@bucket/out",
			"s3://bucket/out?endpoint=http://" + h.Text + "@minio:9000",
			"file://" + h.Text + "@/data/out",
		} {
			_, err := ParseLocation(loc)
			if err == nil {
				t.Errorf("ParseLocation(%q) took the credentials", loc)
				continue
			}
			if s := redacttest.Shown(err.Error()); s != "" {
				t.Errorf("ParseLocation(%q): the error shows %q of the secret: %v", loc, s, err)
			}
			if !h.Malformed && !errors.Is(err, ErrCredentials) {
				t.Errorf("ParseLocation(%q) = %v, want %v", loc, err, ErrCredentials)
			}
		}
	}
}

// TestLeftOut checks that the URL of an object store whose driver this
// build does not have is refused, naming the tag that adds it, and that
// the others parse: run with -tags gcs,azure (scripts/test) and without.
func TestLeftOut(t *testing.T) {
	tests := []struct{ url, scheme, tag string }{
		{"gs://b/out", "gs", "gcs"},
		{"azblob://c/out", "azblob", "azure"},
	}
	for _, tt := range tests {
		_, err := ParseLocation(tt.url)
		var lo *LeftOutError
		switch in := strings.Contains(","+buildTags()+",", ","+tt.tag+","); {
		case in && err != nil:
			t.Errorf("ParseLocation(%q): %v, want no error in a build with -tags %s", tt.url, err, tt.tag)
		case !in && !errors.As(err, &lo):
			t.Errorf("ParseLocation(%q): %v, want a LeftOutError without -tags %s", tt.url, err, tt.tag)
		case !in:
			want := tt.scheme + ":// support was left out of this build (build with -tags " + tt.tag + " to add it)"
			if !strings.Contains(err.Error(), want) {
				t.Errorf("ParseLocation(%q): %q does not say %q", tt.url, err, want)
			}
		}
	}
	if _, err := ParseLocation("s3://b/out"); err != nil {
		t.Errorf("ParseLocation(s3://b/out): %v; S3 is in every build", err)
	}
}

func TestCreateFailsInReadOnlyDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	ctx := context.Background()
	root := t.TempDir()
	d, _ := NewDir(root)
	if err := os.Chmod(root, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(root, 0o755)
	if _, err := d.Create(ctx, "f"); err == nil {
		t.Fatal("Create in a read-only directory succeeded")
	}
}

func TestLock(t *testing.T) {
	d, _ := NewDir(t.TempDir())
	unlock, err := d.Lock(".lock")
	if err != nil {
		t.Fatal(err)
	}
	// A second open file description is refused while the first holds it.
	if _, err := d.Lock(".lock"); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Lock: %v, want ErrLocked", err)
	}
	unlock()
	unlock2, err := d.Lock(".lock")
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	unlock2()
}

// TestRemoveTemporaries checks that the sweep removes a killed writer's
// temporary files and nothing else.
func TestRemoveTemporaries(t *testing.T) {
	ctx := context.Background()
	d, err := NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(ctx, d, "bands/part=00001/chunk-000001.parquet", []byte("x")); err != nil {
		t.Fatal(err)
	}
	// Two writers that never commit, as killed processes leave them.
	for _, name := range []string{"bands/part=00001/chunk-000002.parquet", "pairs/chunk-000000.parquet"} {
		if _, err := d.Create(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	n, err := d.RemoveTemporaries(ctx, ".")
	if err != nil || n != 2 {
		t.Fatalf("removed %d, err %v; want 2", n, err)
	}
	var left []string
	filepath.WalkDir(d.Root(), func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(d.Root(), p)
			left = append(left, filepath.ToSlash(rel))
		}
		return nil
	})
	if len(left) != 1 || left[0] != "bands/part=00001/chunk-000001.parquet" {
		t.Fatalf("left %v, want only the committed file", left)
	}
	if n, err := d.RemoveTemporaries(ctx, "missing"); n != 0 || err != nil {
		t.Fatalf("missing prefix: %d, %v", n, err)
	}
}

// buildTags are the -tags the test binary was built with, comma-separated.
func buildTags() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-tags" {
				return s.Value
			}
		}
	}
	return ""
}
