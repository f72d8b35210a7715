package kept_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/internal/s3test"
	"github.com/neardup/neardup/internal/storage"
)

// TestObjectStorage reads a job from an S3 bucket (a test server on
// loopback) and writes its corpus into the bucket: the objects are the
// files a local job and directory get, byte for byte. A corpus is not
// written into the job's prefix, under it or around it.
func TestObjectStorage(t *testing.T) {
	jobDir := runJob(t, 32<<20, "../../testdata/sample/sample.warc.gz", "../../testdata/sample/broken.jsonl")
	local, _ := writeCorpus(t, jobDir, kept.Options{Annotate: true})
	s3test.Start(t, "crawl").PutDir(t, jobDir, "crawl", "job")
	ctx := context.Background()
	st, err := storage.Open(ctx, "s3://crawl")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list := func(prefix string) []string {
		names, err := st.List(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	before := list("job")
	for _, dir := range []string{"s3://crawl/job", "s3://crawl/job/docs", "s3://crawl/job/index/", "s3://crawl", "s3://crawl/?region=elsewhere"} {
		_, err := kept.Write(ctx, kept.Options{Job: "s3://crawl/job", Dir: dir, Roots: ranWith(t, jobDir), Overwrite: true})
		if err == nil || !strings.Contains(err.Error(), "the job") {
			t.Errorf("Write into %s: %v, want a refusal naming the job", dir, err)
		}
	}
	if after := list("job"); !slices.Equal(after, before) {
		t.Fatalf("refused writes changed the job: %v, was %v", after, before)
	}
	if _, err := kept.Write(ctx, kept.Options{Job: "s3://crawl/job", Dir: "s3://crawl/kept", Annotate: true, Roots: ranWith(t, jobDir)}); err != nil {
		t.Fatal(err)
	}
	got := list("kept")
	var want []string
	filepath.WalkDir(local, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(local, p)
			want = append(want, "kept/"+filepath.ToSlash(rel))
		}
		return err
	})
	if !slices.Equal(got, want) {
		t.Fatalf("the bucket holds %v, the local directory %v", got, want)
	}
	for _, name := range want {
		if name == "kept/"+kept.SummaryFile || name == "kept/"+kept.MarkerFile {
			continue // name the job's location
		}
		a, _ := os.ReadFile(filepath.Join(local, filepath.FromSlash(strings.TrimPrefix(name, "kept/"))))
		b, err := storage.ReadFile(ctx, st, name)
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: the object differs from the local file (%v)", name, err)
		}
	}
}
