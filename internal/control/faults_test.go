package control

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/dataroot"
	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/stages"
	"github.com/neardup/neardup/internal/storage"
)

// sameFiles fails unless the datasets of two outputs are byte-identical.
func sameFiles(t *testing.T, want, got string, patterns ...string) {
	t.Helper()
	for _, pattern := range patterns {
		a, _ := filepath.Glob(filepath.Join(want, pattern))
		b, _ := filepath.Glob(filepath.Join(got, pattern))
		if len(a) == 0 || len(a) != len(b) {
			t.Fatalf("%s: %d files in %s, %d in %s", pattern, len(a), want, len(b), got)
		}
		for i := range a {
			x, _ := os.ReadFile(a[i])
			y, _ := os.ReadFile(b[i])
			if filepath.Base(a[i]) != filepath.Base(b[i]) || !bytes.Equal(x, y) {
				t.Fatalf("%s differs", a[i][len(want):])
			}
		}
	}
}

// TestInjectedFaults runs jobs whose workers panic, fail or hit a full
// disk, and checks each outcome: retried to the same result, completed
// without a poison chunk (reported), or failed cleanly without _SUCCESS.
func TestInjectedFaults(t *testing.T) {
	in, _ := genCorpus(t, 400, 21, 2)
	ref := filepath.Join(t.TempDir(), "ref")
	if _, err := Run(context.Background(), testConfig(t, in, ref, 2)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		faults  string
		strict  bool
		wantErr string // "" for success
		whole   bool   // the cluster stage in one task, as small jobs run it (the reference does)
		check   func(t *testing.T, out string, m *Manifest)
	}{
		{
			name:   "transient failures are retried",
			faults: "fail@map/1#1; panic@reduce/1#1; fail@create:pairs/#1; fail@create:_work/bandruns/chunk-000001#1; fail@create:bands/parts-#1",
			check: func(t *testing.T, out string, m *Manifest) {
				sameFiles(t, ref, out, "pairs/*.parquet", "clusters.parquet", "duplicates.parquet", "candidates/*.parquet")
				if len(m.Failures) != 0 {
					t.Fatalf("failures reported for faults that healed: %+v", m.Failures)
				}
			},
		},
		{
			name: "cluster tasks that fail are retried",
			faults: "panic@cluster-ls-01/0#1; fail@cluster-comps/*#1; fail@create:_work/cluster/cluster-nodes/#1; " +
				"fail@cluster-out/0#1; fail@create:clusters.parquet#1",
			check: func(t *testing.T, out string, m *Manifest) {
				sameFiles(t, ref, out, "pairs/*.parquet", "clusters.parquet", "duplicates.parquet", "exact.parquet")
				if len(m.Failures) != 0 {
					t.Fatalf("failures reported for faults that healed: %+v", m.Failures)
				}
				if s := m.Stages[len(m.Stages)-1]; s.Name != "cluster" || s.Tasks < 6 {
					t.Fatalf("last stage %+v: want the cluster stage's tasks", s)
				}
			},
		},
		{
			name:   "poison chunk is reported and skipped",
			faults: "panic@map/1",
			check: func(t *testing.T, out string, m *Manifest) {
				if len(m.Failures) != 1 || m.Failures[0].Stage != "map" || m.Failures[0].Index != 1 ||
					!strings.Contains(m.Failures[0].Error, "panic") || m.Failures[0].Attempts != 2 {
					t.Fatalf("failures = %+v", m.Failures)
				}
				if m.Counts.FailedChunks != 1 || len(m.Warnings) == 0 {
					t.Fatalf("failed chunk not counted or warned: %+v %v", m.Counts, m.Warnings)
				}
				if _, err := os.Stat(filepath.Join(out, job.SuccessFile)); m.Status != manifest.StatusPartial || err == nil {
					t.Fatalf("status %q, _SUCCESS present %v: want partial, without _SUCCESS", m.Status, err == nil)
				}
				if _, err := os.Stat(filepath.Join(out, "docs", "chunk-000001.parquet")); err == nil {
					t.Fatal("the failed chunk's documents were written")
				}
				for _, p := range readPairs(t, out) {
					if job.ChunkOf(p.A) == 1 || job.ChunkOf(p.B) == 1 {
						t.Fatalf("pair %+v involves the failed chunk", p)
					}
				}
			},
		},
		{name: "poison chunk fails a strict job", faults: "panic@map/1", strict: true, wantErr: "map task 1 failed after 2 attempts"},
		{name: "every chunk failing fails the job", faults: "fail@map/*", wantErr: "every map task failed"},
		{name: "full disk in reduce fails the job", faults: "fail@create:candidates/part=00004", wantErr: "no space left on device"},
		{name: "failing verify fails the job", faults: "fail@verify/*", wantErr: "verify task"},
		{name: "failing cluster task fails the job", faults: "fail@cluster-comps/*", wantErr: "cluster-comps task 0 failed after 2 attempts"},
		{
			name: "a job clustered in one task retries it", faults: "panic@cluster-whole/0#1; fail@create:pairs/#1; fail@create:exact.parquet#1", whole: true,
			check: func(t *testing.T, out string, m *Manifest) {
				sameFiles(t, ref, out, "pairs/*.parquet", "clusters.parquet", "duplicates.parquet", "exact.parquet")
				if s := m.Stages[len(m.Stages)-1]; s.Name != "cluster" || s.Tasks != 1 || len(m.Failures) != 0 {
					t.Fatalf("last stage %+v, failures %+v: want the cluster stage's one task, healed", s, m.Failures)
				}
			},
		},
		{name: "a failing task of a job clustered in one task fails it", faults: "fail@cluster-whole/*", whole: true, wantErr: "cluster-whole task 0 failed after 2 attempts"},
		{name: "permission denied on verified pairs fails the job", faults: "deny@create:_work/verified/", wantErr: "permission denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cfg := faultyConfig(t, in, out, tt.faults)
			cfg.Params.Strict = tt.strict
			if !tt.whole {
				cfg.wholeClusterBytes = -1
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			m, err := Run(ctx, cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				if _, serr := os.Stat(filepath.Join(out, "_SUCCESS")); serr == nil {
					t.Fatal("_SUCCESS written for a failed job")
				}
				if _, serr := os.Stat(filepath.Join(out, "manifest.json")); serr == nil {
					t.Fatal("manifest.json written for a failed job")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, out, m)
		})
	}
}

// TestTasksIdempotent runs every task of a job a second time and checks
// that each rewrites byte-identical files, with verify reading the text
// stores, the gathered records and the set files.
func TestTasksIdempotent(t *testing.T) {
	in, _ := genCorpus(t, 300, 4, 2)
	for _, gather := range []job.Gather{job.GatherOff, job.GatherOn, job.GatherSets} {
		t.Run("gather="+gather.String(), func(t *testing.T) {
			testTasksIdempotent(t, in, gather)
		})
	}
}

func testTasksIdempotent(t *testing.T, in string, gather job.Gather) {
	out := filepath.Join(t.TempDir(), "out")
	cfg := testConfig(t, in, out, 2)
	cfg.Params.Gather = gather
	cfg.KeepWork = true
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	snapshot := func() map[string][]byte {
		files := map[string][]byte{}
		filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() && (strings.HasSuffix(p, ".parquet") || strings.HasSuffix(p, ".sig") || strings.HasSuffix(p, ".edges") || strings.HasSuffix(p, ".req") || strings.HasSuffix(p, ".sigs")) {
				files[p], _ = os.ReadFile(p)
			}
			return nil
		})
		return files
	}
	before := snapshot()
	// The tasks run again, as workers run them, from their input files:
	// every stage, in this process.
	ctx := context.Background()
	st, _ := storage.NewDir(out)
	var spec job.Spec
	var plan job.Plan
	for name, v := range map[string]any{job.SpecFile: &spec, job.PlanFile: &plan} {
		if err := storage.ReadJSON(ctx, st, name, v); err != nil {
			t.Fatal(err)
		}
	}
	j := &stage.Job{Spec: &spec, Plan: &plan, Out: st, FS: st, Manifest: stage.NewManifest(&spec, &plan, time.Now(), nil), Log: slog.New(slog.DiscardHandler),
		KeepWork: cfg.KeepWork} // as the job ran: its stages leave their work files
	env := &stage.Env{Spec: &spec, FS: st, Cache: &stage.Files{St: st}, Inputs: dataroot.Roots{}}
	if err := stage.Drive(ctx, j, stages.Of(&spec), stages.Local{Env: env}); err != nil {
		t.Fatal(err)
	}
	after := snapshot()
	if len(after) != len(before) || len(before) < 20 {
		t.Fatalf("%d task files before, %d after rerunning the tasks", len(before), len(after))
	}
	for p, b := range before {
		if !bytes.Equal(b, after[p]) {
			t.Fatalf("%s changed when its task ran again", p)
		}
	}
}

// TestPartialJob makes map task 1 fail for good: the job ends partial (its
// manifest says so, no _SUCCESS), and running the same command again
// retries the missing chunk and finishes byte-identical to an undisturbed
// run. With AllowPartial the partial result is marked _PARTIAL instead and
// is final.
func TestPartialJob(t *testing.T) {
	in, _ := genCorpus(t, 500, 23, 2)
	ref := filepath.Join(t.TempDir(), "ref")
	if _, err := Run(context.Background(), testConfig(t, in, ref, 2)); err != nil {
		t.Fatal(err)
	}
	poison, err := faults.Parse("fail@map/1", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprintf("allow-partial=%v", allow), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cfg := testConfig(t, in, out, 2)
			cfg.Queue.MaxDeliver = 2
			cfg.Faults, cfg.AllowPartial = poison, allow
			m, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if m.Status != manifest.StatusPartial || len(m.Failures) != 1 {
				t.Fatalf("status %q with %d failures, want partial with 1", m.Status, len(m.Failures))
			}
			if _, err := os.Stat(filepath.Join(out, job.SuccessFile)); err == nil {
				t.Fatal("_SUCCESS written for a partial job")
			}
			var onDisk Manifest
			if err := readJSONFile(filepath.Join(out, job.ManifestFile), &onDisk); err != nil || onDisk.Status != manifest.StatusPartial {
				t.Fatalf("manifest.json status %q (%v), want partial", onDisk.Status, err)
			}
			_, perr := os.Stat(filepath.Join(out, job.PartialFile))
			if allow != (perr == nil) {
				t.Fatalf("_PARTIAL present: %v, want %v", perr == nil, allow)
			}

			cfg = testConfig(t, in, out, 2)
			m, err = Run(context.Background(), cfg)
			if allow {
				if !errors.Is(err, ErrComplete) {
					t.Fatalf("rerun of an accepted partial result: %v, want ErrComplete", err)
				}
				return
			}
			if err != nil || m.Status != manifest.StatusComplete {
				t.Fatalf("rerun: status %v, err %v; want complete", m, err)
			}
			if _, err := os.Stat(filepath.Join(out, job.SuccessFile)); err != nil {
				t.Fatal("no _SUCCESS after the rerun")
			}
			sameFiles(t, ref, out, "pairs/*.parquet", "candidates/*.parquet", "clusters.parquet", "duplicates.parquet", "exact.parquet", "docs/*.parquet")
		})
	}
}

// TestPartialRerunOutsideWorker runs a partial job and its rerun against a
// NATS server on loopback with one long-lived outside worker, which keeps
// what it learnt of the job between the two runs: the rerun must reload
// it (the retried chunk's band files) and redo reduce and verify, ending
// byte-identical to an undisturbed run.
func TestPartialRerunOutsideWorker(t *testing.T) {
	in, _ := genCorpus(t, 500, 29, 2)
	ref := filepath.Join(t.TempDir(), "ref")
	if _, err := Run(context.Background(), testConfig(t, in, ref, 2)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	qc := queue.DefaultConfig()
	qc.AckWait, qc.MaxDeliver, qc.TransientRetry = 5*time.Second, 2, 0
	url := outsideWorker(t, ctx, qc, 2, "fail@map/1#2") // both deliveries of the first run

	out := filepath.Join(t.TempDir(), "out")
	cfg := testConfig(t, in, out, 0)
	cfg.NATSURL, cfg.Queue = url, qc
	m, err := Run(ctx, cfg)
	if err != nil || m.Status != manifest.StatusPartial {
		t.Fatalf("first run: %v, status %v; want partial", err, m)
	}
	m, err = Run(ctx, cfg)
	if err != nil || m.Status != manifest.StatusComplete {
		t.Fatalf("rerun: %v, status %v; want complete", err, m)
	}
	sameFiles(t, ref, out, "pairs/*.parquet", "candidates/*.parquet", "clusters.parquet", "duplicates.parquet", "exact.parquet", "docs/*.parquet")
}

// faultyConfig is testConfig with two workers, the faults of spec
// injected (see package faults) and every task delivered at most twice.
func faultyConfig(t testing.TB, in, out, spec string) Config {
	t.Helper()
	cfg := testConfig(t, in, out, 2)
	cfg.Queue.MaxDeliver = 2
	f, err := faults.Parse(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Faults = f
	return cfg
}
