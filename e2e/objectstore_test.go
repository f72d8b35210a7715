package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/s3test"
	"github.com/neardup/neardup/internal/storage"
)

// sameInBucket compares the pairs, candidates, clusters and duplicates of
// a local reference job with the objects of a job written to a bucket.
func sameInBucket(t *testing.T, ref, out string) {
	t.Helper()
	ctx := context.Background()
	st, err := storage.Open(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, pattern := range []string{"pairs/*.parquet", "candidates/*.parquet", "clusters.parquet", "duplicates.parquet", "exact.parquet"} {
		files, _ := filepath.Glob(filepath.Join(ref, pattern))
		if len(files) == 0 {
			t.Fatalf("no %s in the reference", pattern)
		}
		for _, f := range files {
			rel, _ := filepath.Rel(ref, f)
			want, _ := os.ReadFile(f)
			got, err := storage.ReadFile(ctx, st, filepath.ToSlash(rel))
			if err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s differs from the local run", rel)
			}
		}
	}
	if _, err := storage.ReadFile(ctx, st, "_SUCCESS"); err != nil {
		t.Fatalf("no _SUCCESS: %v", err)
	}
	// In a bucket, verify's signatures come through the gather stage
	// (--gather auto), not by random reads of objects.
	man, err := manifest.Read(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if man.Params.Gather != "on" || man.Counts.Gathered == 0 {
		t.Errorf("gather %q, %d signatures gathered: want the gather stage on in a bucket", man.Params.Gather, man.Counts.Gathered)
	}
}

// TestObjectStorage runs multi-process jobs with no shared disk: inputs and
// output in an S3 bucket (a test server on loopback, reached through
// AWS_ENDPOINT_URL and the AWS credentials in the environment), workers
// given only the NATS URL. One worker is killed while its band file is
// being uploaded (stalled before the upload completes); the job completes
// byte-identical to a local run. A URL with an unknown scheme, or an
// s3:// URL with an option the S3 client does not know, is a usage error.
func TestObjectStorage(t *testing.T) {
	in, ref := corpusAndReference(t)
	s3test.Start(t, "crawl").PutDir(t, in, "crawl", "in")

	cmd := command("coordinator", "--out", "s4://crawl/out", "s3://crawl/in")
	if out, err := cmd.CombinedOutput(); err == nil || cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "unknown storage scheme") {
		t.Fatalf("an unknown scheme: %v, want exit status 2 naming the scheme:\n%s", err, out)
	}
	cmd = command("coordinator", "--workers", "1", "--out", "s3://crawl/out?regoin=us-east-1", "s3://crawl/in")
	if out, err := cmd.CombinedOutput(); err == nil || cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "option regoin=us-east-1") {
		t.Fatalf("a misspelt option of an s3:// location: %v, want exit status 2 naming it:\n%s", err, out)
	}

	srv, err := queue.StartEmbedded(t.TempDir(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	common := []string{"--nats", srv.URL(), "--ack-wait", "2s"}
	coord := start(t, nil, "coordinator", append(append(append([]string{"--out", "s3://crawl/out"}, common...), jobArgs...), "s3://crawl/in")...)
	victim := start(t, []string{faults.EnvVar + "=stall@commit:_work/bandruns/chunk-000001-run0000"}, "worker", append(common, "--slots", "1")...)
	victim.waitFor(t, "fault injected", 60*time.Second)
	victim.cmd.Process.Signal(syscall.SIGKILL)
	victim.wait(t, 10*time.Second)
	start(t, nil, "worker", append(common, "--slots", "2", "--data-root", "s3://crawl")...)
	if err := coord.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("coordinator: %v\n%s", err, coord.output())
	}
	sameInBucket(t, ref, "s3://crawl/out")

	// The embedded mode, one command, the same bucket.
	cmd = command("coordinator", append(append([]string{"--out", "s3://crawl/again", "--workers", "2"}, jobArgs...), "s3://crawl/in")...)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("embedded job on the bucket: %v\n%s", err, out)
	}
	sameInBucket(t, ref, "s3://crawl/again")
}

// TestObjectStorageSample runs the README's sample command with its output
// in a bucket, then runs the SQL of README.md and docs/*.md with DuckDB on
// the output and compares with the same golden results as the local run.
// DuckDB reads a copy fetched from the bucket: its httpfs extension is
// downloaded from extensions.duckdb.org, which this machine cannot reach.
func TestObjectStorageSample(t *testing.T) {
	s3test.Start(t, "crawl")
	args := sampleArgs(t)
	var out string
	for i, a := range args {
		if a == "--out" && i+1 < len(args) {
			out = args[i+1]
			args[i+1] = "s3://crawl/" + out
		}
	}
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Symlink(filepath.Join(wd, "..", "testdata"), filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	cmd := command("coordinator", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
	if log, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the sample command with --out in a bucket: %v\n%s", err, log)
	}
	ctx := context.Background()
	st, err := storage.Open(ctx, "s3://crawl/"+out)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	names, err := st.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		data, err := storage.ReadFile(ctx, st, name)
		if err != nil {
			t.Fatal(err)
		}
		local := filepath.Join(dir, out, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(local), 0o755)
		if err := os.WriteFile(local, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, out, "_SUCCESS")); err != nil {
		t.Fatalf("no _SUCCESS among the objects %v", names)
	}
	duckdbQueries(t, dir, "duckdb.golden")
}
