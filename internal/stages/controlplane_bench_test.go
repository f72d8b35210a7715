package stages

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/stagetest"
	"github.com/neardup/neardup/internal/storage"
)

// BenchmarkControlPlane drives a job of many chunks and partitions
// through every stage's Tasks and Done (stage.Drive over Of), with an
// executor that runs no task: it makes up each task's result in the shape
// real tasks give (every chunk holding edges and requests of every
// partition, every gather task records for every verify chunk, every
// cluster task runs for every partition), so that what is measured is the
// coordinator's own work. It reports the peak RSS of each stage (VmHWM
// from its tasks' start to the next stage's, reset once the memory the
// stage before left is returned to the system) and of the whole job (the
// largest), the task results' bytes, and the bytes the coordinator
// wrote (the process's, less the route tables the made-up tasks wrote).
//
// The 1B plan of docs/performance.md quotes it:
//
//	go test -run '^$' -bench 'BenchmarkControlPlane/2300x4096' -benchtime 1x ./internal/stages/
//	go test -run '^$' -bench 'BenchmarkControlPlane/230x409' -benchtime 1x ./internal/stages/
func BenchmarkControlPlane(b *testing.B) { stagetest.RunSizes(b, benchControlPlane) }

func benchControlPlane(b *testing.B, chunks, parts int) {
	ctx := context.Background()
	dir := b.TempDir()
	st, err := storage.NewDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	fab := &stagetest.Fabricator{FS: st, Chunks: chunks, Parts: parts}
	spec, plan, err := fab.Job(dir)
	if err != nil {
		b.Fatal(err)
	}
	j := &stage.Job{Spec: spec, Plan: plan, Out: st, FS: st, Manifest: stage.NewManifest(spec, plan, time.Now(), nil),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ex := &fakeExecutor{fab: fab, resultBytes: map[string]int64{}, peaks: map[string]float64{}}
	resetPeakRSS(b)
	w0 := writtenBytes(b)
	t0 := time.Now()
	if err := stage.Drive(ctx, j, Of(spec), ex); err != nil {
		b.Fatal(err)
	}
	ex.endStage(b)
	b.ReportMetric(ex.peak, "peak-RSS-MiB")
	b.ReportMetric(time.Since(t0).Seconds(), "s")
	written := writtenBytes(b) - w0
	b.ReportMetric((written-float64(ex.fab.Wrote()))/(1<<20), "coordinator-wrote-MiB")
	b.ReportMetric(float64(ex.fab.Wrote())/(1<<20), "tasks-wrote-MiB")
	for _, s := range ex.order {
		b.Logf("%s: peak RSS %.0f MiB, task results %.1f MiB", s, ex.peaks[s], float64(ex.resultBytes[s])/(1<<20))
	}
	if j.Clusters == nil || j.Manifest.Counts.Candidates == 0 {
		b.Fatalf("the job did not get through its stages: %+v", j.Manifest.Counts)
	}
}

// fakeExecutor runs no task: it makes up their results (fabricator),
// and measures each stage.
type fakeExecutor struct {
	fab         *stagetest.Fabricator
	resultBytes map[string]int64
	order       []string
	peaks       map[string]float64
	peak        float64 // of the whole job: the largest of peaks
	current     string
}

// Execute makes up the results of tasks indices of s.
func (f *fakeExecutor) Execute(ctx context.Context, s stage.Stage, indices []int) (*stage.Outcome, error) {
	name, _, _ := strings.Cut(s.Name, "-")
	if name != f.current {
		f.endStage(nil)
		f.current = name
		f.order = append(f.order, name)
	}
	results := stage.ResultMap{}
	out := &stage.Outcome{Done: slices.Sorted(slices.Values(indices)), Results: results, Published: len(indices), Timing: manifest.StageTiming{Name: s.Name, Tasks: len(indices)}}
	for _, i := range indices {
		r, err := f.fab.Result(ctx, s.Name, i, len(indices))
		if err != nil {
			return nil, fmt.Errorf("%s task %d: %w", s.Name, i, err)
		}
		data, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		results[i] = data
		f.resultBytes[name] += int64(len(data))
	}
	return out, nil
}

// Clear does nothing: nothing is recorded.
func (*fakeExecutor) Clear(context.Context, stage.Stage) error { return nil }

// endStage notes the peak RSS of the stage ending and resets it for the
// next, once the memory the stage left is returned to the system (so
// that the next stage's peak is its own).
func (f *fakeExecutor) endStage(b *testing.B) {
	if f.current == "" {
		return
	}
	peak := peakRSSMiB(b)
	f.peaks[f.current] = max(f.peaks[f.current], peak)
	f.peak = max(f.peak, peak)
	// As it goes (a stage of the large job takes minutes):
	fmt.Fprintf(os.Stderr, "%s %s: peak RSS %.0f MiB\n", time.Now().Format(time.TimeOnly), f.current, peak)
	debug.FreeOSMemory()
	resetPeakRSS(b)
}

// resetPeakRSS resets the process's VmHWM to its current RSS.
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil && b != nil {
		b.Fatalf("resetting the peak RSS: %v", err)
	}
}

// peakRSSMiB is the process's VmHWM.
func peakRSSMiB(b *testing.B) float64 {
	return procField(b, "/proc/self/status", "VmHWM:") / 1024
}

// writtenBytes is what the process wrote (wchar).
func writtenBytes(b *testing.B) float64 {
	return procField(b, "/proc/self/io", "wchar:")
}

// procField reads a number after key in a /proc file.
func procField(b *testing.B, file, key string) float64 {
	f, err := os.Open(file)
	if err != nil {
		if b != nil {
			b.Fatal(err)
		}
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key); ok {
			v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
			if err == nil {
				return v
			}
		}
	}
	if b != nil {
		b.Fatalf("%s: no %s", file, key)
	}
	return 0
}
