package kept

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/s3test"
	"github.com/neardup/neardup/internal/storage"
)

// TestObjectStorage reads a job from an S3 bucket (a test server on
// loopback) and writes its corpus into the bucket: the objects are the
// files a local job and directory get, byte for byte.
func TestObjectStorage(t *testing.T) {
	jobDir := runJob(t, 32<<20, "../../testdata/sample/sample.warc.gz", "../../testdata/sample/broken.jsonl")
	local, _ := writeCorpus(t, jobDir, Options{Annotate: true})
	s3test.Start(t, "crawl").PutDir(t, jobDir, "crawl", "job")
	ctx := context.Background()
	if _, err := Write(ctx, Options{Job: "s3://crawl/job", Dir: "s3://crawl/kept", Annotate: true}); err != nil {
		t.Fatal(err)
	}
	st, err := storage.Open(ctx, "s3://crawl/kept")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	filepath.WalkDir(local, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(local, p)
			want = append(want, filepath.ToSlash(rel))
		}
		return err
	})
	if !slices.Equal(got, want) {
		t.Fatalf("the bucket holds %v, the local directory %v", got, want)
	}
	for _, name := range want {
		if name == SummaryFile {
			continue // names the job's location
		}
		a, _ := os.ReadFile(filepath.Join(local, filepath.FromSlash(name)))
		b, err := storage.ReadFile(ctx, st, name)
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: the object differs from the local file (%v)", name, err)
		}
	}
}
