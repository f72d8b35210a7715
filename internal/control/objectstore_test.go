package control

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/s3test"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
	"github.com/parquet-go/parquet-go"
)

// sameObjects compares every result file of a local job with the object of
// the same name under an object-store output.
// Document records name their file: in docs/ the local input directory
// in stands for the object-store input prefix inURL.
func sameObjects(t *testing.T, ref, out, in, inURL string) {
	t.Helper()
	ctx := context.Background()
	st, err := storage.Open(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	compared := 0
	for _, pattern := range []string{"pairs/*.parquet", "candidates/*.parquet", "docs/*.parquet", "clusters.parquet", "duplicates.parquet", "exact.parquet"} {
		docs := strings.HasPrefix(pattern, "docs/")
		files, _ := filepath.Glob(filepath.Join(ref, pattern))
		for _, f := range files {
			rel, _ := filepath.Rel(ref, f)
			want, _ := os.ReadFile(f)
			got, err := storage.ReadFile(ctx, st, filepath.ToSlash(rel))
			if err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			if docs {
				a, err := parquet.Read[records.DocRecord](bytes.NewReader(want), int64(len(want)))
				if err != nil {
					t.Fatal(err)
				}
				b, err := parquet.Read[records.DocRecord](bytes.NewReader(got), int64(len(got)))
				if err != nil {
					t.Fatal(err)
				}
				for i := range a {
					a[i].File = inURL + filepath.ToSlash(strings.TrimPrefix(a[i].File, in))
				}
				if !slices.Equal(a, b) {
					t.Fatalf("%s: other document records in the object-store job", rel)
				}
				compared++
				continue
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s differs between the local and the object-store job", rel)
			}
			compared++
		}
	}
	if compared < 6 {
		t.Fatalf("only %d result files compared", compared)
	}
	if _, err := storage.ReadFile(ctx, st, "_SUCCESS"); err != nil {
		t.Fatalf("no _SUCCESS in the bucket: %v", err)
	}
	if left, _ := st.List(ctx, "_work"); len(left) > 0 {
		t.Fatalf("the work area was left in the bucket: %v", left[:min(len(left), 5)])
	}
}

// TestObjectStorage runs a job whose inputs and output are in an S3
// bucket (a test server on loopback): its results are byte-identical to
// the same job on local files, and the bucket holds no work area after.
func TestObjectStorage(t *testing.T) {
	in, _ := genCorpus(t, 400, 31, 3)
	ref := filepath.Join(t.TempDir(), "ref")
	if _, err := Run(context.Background(), testConfig(t, in, ref, 2)); err != nil {
		t.Fatal(err)
	}
	s3test.Start(t, "crawl").PutDir(t, in, "crawl", "in")
	cfg := testConfig(t, "s3://crawl/in", "s3://crawl/out", 2)
	cfg.NATSStore = filepath.Join(t.TempDir(), "nats")
	man, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range man.Inputs {
		if !strings.HasPrefix(in.Path, "s3://crawl/in/") {
			t.Errorf("manifest input %s is not the object's URL", in.Path)
		}
	}
	sameObjects(t, ref, "s3://crawl/out", in, "s3://crawl/in")
}

// outage takes the S3 test server down when the first task of a stage
// ends: closed (connection refused) after the first map task, answering
// 503 SlowDown after the first reduce task, each for a while, and counts
// the task runs that failed meanwhile and the deliveries after a task's
// first.
type outage struct {
	noObserver
	s3  *s3test.Server
	dur time.Duration

	mu          sync.Mutex
	began       map[string]bool
	failed      int
	redelivered int
	errs        []error // restarting the server
	done        sync.WaitGroup
}

func (o *outage) TaskStarted(_ string, attempt int) {
	if attempt > 1 {
		o.mu.Lock()
		o.redelivered++
		o.mu.Unlock()
	}
}

func (o *outage) TaskEnded(stage string, _ time.Duration, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err != nil {
		o.failed++
	}
	if err != nil || o.began[stage] || stage != StageMap && stage != StageReduce {
		return
	}
	o.began[stage] = true
	o.done.Go(func() {
		if stage == StageMap {
			o.s3.Stop()
			time.Sleep(o.dur)
			if err := o.s3.Restart(); err != nil {
				o.mu.Lock()
				o.errs = append(o.errs, err)
				o.mu.Unlock()
			}
			return
		}
		o.s3.SlowDown(true)
		time.Sleep(o.dur)
		o.s3.SlowDown(false)
	})
}

// TestObjectStoreOutage runs a job on S3 whose server is stopped (then
// restarted on the same port) and later throttles (503 SlowDown), each for
// a few seconds while tasks run: the tasks that met the outage retry
// within --transient-retry, in their first delivery, no input is counted
// unread, and the results are byte-identical to the same job on local
// files, with no failed task.
func TestObjectStoreOutage(t *testing.T) {
	in, _ := genCorpus(t, 400, 31, 3)
	ref := filepath.Join(t.TempDir(), "ref")
	if _, err := Run(context.Background(), testConfig(t, in, ref, 2)); err != nil {
		t.Fatal(err)
	}
	srv := s3test.Start(t, "crawl")
	srv.PutDir(t, in, "crawl", "in")
	cfg := testConfig(t, "s3://crawl/in", "s3://crawl/out", 2)
	cfg.NATSStore = filepath.Join(t.TempDir(), "nats")
	cfg.Queue.TransientRetry = time.Minute
	o := &outage{s3: srv, dur: 8 * time.Second, began: map[string]bool{}}
	cfg.Tasks = o
	man, err := Run(context.Background(), cfg)
	o.done.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(o.errs) > 0 {
		t.Fatal(o.errs[0])
	}
	if !o.began[StageMap] || !o.began[StageReduce] || o.failed == 0 {
		t.Fatalf("outages after map %v and reduce %v, %d task runs failed: the outages did not meet a task", o.began[StageMap], o.began[StageReduce], o.failed)
	}
	if o.redelivered > 0 {
		t.Errorf("%d deliveries after a task's first: an outage cost deliveries", o.redelivered)
	}
	if len(man.Failures) > 0 || man.Status != "complete" || man.Counts.UnreadFiles > 0 || len(man.Warnings) > 0 {
		t.Fatalf("status %q, failures %v, %d unread files, warnings %q", man.Status, man.Failures, man.Counts.UnreadFiles, man.Warnings)
	}
	t.Logf("%d task runs failed during the outages and were retried", o.failed)
	sameObjects(t, ref, "s3://crawl/out", in, "s3://crawl/in")
}

// TestObjectStoreCacheRemoved runs a job on S3 with the embedded server
// and no --nats-store: its store, in the user's cache directory while the
// job runs, is gone after the job succeeds.
func TestObjectStoreCacheRemoved(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	in, _ := genCorpus(t, 100, 32, 2)
	s3test.Start(t, "crawl").PutDir(t, in, "crawl", "in")
	cfg := testConfig(t, "s3://crawl/in", "s3://crawl/out", 2)
	st, err := storage.Open(context.Background(), cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	store := natsStore(cfg, st)
	if !strings.HasPrefix(store, cache) {
		t.Fatalf("the store %s is not under the cache %s", store, cache)
	}
	var seen atomic.Bool
	cfg.Tasks = storeSeen{dir: store, seen: &seen}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if !seen.Load() {
		t.Fatalf("the store %s was not there while the job ran", store)
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Fatalf("the embedded store %s is left after the job: %v", store, err)
	}
}

// storeSeen notes whether the directory exists when a task ends.
type storeSeen struct {
	noObserver
	dir  string
	seen *atomic.Bool
}

func (s storeSeen) TaskEnded(string, time.Duration, error) {
	if _, err := os.Stat(s.dir); err == nil {
		s.seen.Store(true)
	}
}
