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
	"sync/atomic"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
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
func BenchmarkControlPlane(b *testing.B) {
	for _, size := range []struct{ chunks, parts int }{{230, 409}, {2300, 4096}} {
		b.Run(fmt.Sprintf("%dx%d", size.chunks, size.parts), func(b *testing.B) {
			for b.Loop() {
				benchControlPlane(b, size.chunks, size.parts)
			}
		})
	}
}

func benchControlPlane(b *testing.B, chunks, parts int) {
	ctx := context.Background()
	dir := b.TempDir()
	st, err := storage.NewDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	p := job.DefaultParams()
	p.Partitions, p.Gather = parts, job.GatherOn
	if err := p.Resolve(); err != nil {
		b.Fatal(err)
	}
	spec := &job.Spec{Job: "bench", Epoch: "e1", Out: dir, Params: p, Format: job.SpecFormat}
	plan := &job.Plan{}
	for c := range chunks {
		plan.Chunks = append(plan.Chunks, job.Chunk{Index: c, Bytes: 1 << 30, Text: 1 << 30})
	}
	j := &stage.Job{Spec: spec, Plan: plan, Out: st, FS: st, Manifest: stage.NewManifest(spec, plan, time.Now(), nil),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ex := &fakeExecutor{fab: &fabricator{st: st, chunks: chunks, parts: parts}, resultBytes: map[string]int64{}, peaks: map[string]float64{}}
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
	b.ReportMetric((written-float64(ex.fab.wrote.Load()))/(1<<20), "coordinator-wrote-MiB")
	b.ReportMetric(float64(ex.fab.wrote.Load())/(1<<20), "tasks-wrote-MiB")
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
	fab         *fabricator
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
		r, err := f.fab.result(ctx, s.Name, i, len(indices))
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

// fabricator makes up task results in the shape real tasks give, for a
// job of chunks chunks of about 1 GiB of text (434,783 documents) and
// parts partitions.
type fabricator struct {
	st            storage.FS
	chunks, parts int
	wrote         atomic.Int64 // the bytes of the tables the tasks wrote
}

const benchDocsPerChunk = 434_783

// result is the result of task i of the stage (or cluster step) named
// name, of n tasks; the rows a task has for every chunk or partition go
// to its route table, as the task would write it.
func (f *fabricator) result(ctx context.Context, name string, i, n int) (any, error) {
	info := func(name string, rows int64) fileinfo.Info {
		return fileinfo.Info{Name: name, Rows: rows, Bytes: rows * 20, Checksum: fakeSum(name, i)}
	}
	switch {
	case name == "map":
		// Band run bytes enough for one reduce task per partition.
		runBytes := int64(f.parts) * (96 << 20) / int64(f.chunks)
		return job.MapResult{Chunk: i, Docs: benchDocsPerChunk, TextBytes: 1 << 30, InputBytes: 1 << 30, Shingles: 300 * benchDocsPerChunk,
			BandRecords: 16 * benchDocsPerChunk, DocFile: info(job.DocFile(i), benchDocsPerChunk), SigFile: info(job.TextFile(i), benchDocsPerChunk),
			BandRunFiles: []fileinfo.Info{{Name: job.BandRunWorkFile(i, 0), Bytes: runBytes, Checksum: fakeSum("r", i)}},
			IDRunFiles:   []fileinfo.Info{{Name: job.IDRunWorkFile(i, 0), Bytes: runBytes / 16, Checksum: fakeSum("i", i)}},
			Seconds:      20}, nil
	case name == "reduce":
		first, last := i*f.parts/n, (i+1)*f.parts/n-1
		r := job.ReduceTaskResult{First: first, Last: last, Bands: info(job.ReduceBandFile(first, last), 4<<20)}
		var slots []string
		var ranges []map[int]fileinfo.Info
		for part := first; part <= last; part++ {
			r.Parts = append(r.Parts, job.ReduceResult{Part: part, Records: 4 << 20, Groups: 4 << 20, MaxGroup: 40, Candidates: 100_000,
				ExactClaims: 1000, File: info(job.CandidateFile(part), 100_000)})
			slots = append(slots, job.EdgeFile(part), job.RequestFile(part))
			ranges = append(ranges, fakeRanges(job.EdgeFile(part), f.chunks, 20), fakeRanges(job.RequestFile(part), f.chunks, 12))
		}
		var err error
		r.Routes, err = f.writeRoutes(ctx, job.RouteFile("reduce", i), slots, ranges)
		return r, err
	case name == "gather":
		routes, err := f.writeRoutes(ctx, job.RouteFile("gather", i), []string{job.GatherFile(i)},
			[]map[int]fileinfo.Info{fakeRanges(job.GatherFile(i), f.chunks, 3000)})
		return job.GatherResult{Chunk: i, Requests: 330_000, Records: 300_000, Routes: routes, Seconds: 30}, err
	case name == "verify":
		return job.VerifyResult{Chunk: i, Checked: 170_000, Prefiltered: 50_000, Exact: 120_000, Verified: 60_000, ExactMembers: 10_000,
			File: new(info(job.VerifiedFile(i), 60_000)), MembersFile: new(info(job.MembersFile(i), 10_000)),
			VerifiedHist: make([]int64, job.HistBins), RejectedHist: make([]int64, job.HistBins), Seconds: 30}, nil
	}
	step, ok := strings.CutPrefix(name, "cluster-")
	if !ok {
		return nil, fmt.Errorf("no stage %q", name)
	}
	kind, _, _ := strings.Cut(step, "-")
	if kind == "out" {
		return map[string]any{"listed": 60_000}, nil
	}
	file := job.ClusterTaskFile(name, i, "runs")
	routes, err := f.writeRoutes(ctx, job.ClusterTaskFile(name, i, "routes"), []string{file}, []map[int]fileinfo.Info{fakeRanges(file, n, 32)})
	if err != nil {
		return nil, err
	}
	switch kind {
	case "contract", "ss":
		return map[string]any{"routes": routes, "edges": 250_000, "nodes": 250_000}, nil
	case "ls": // one round: every component is a star at once
		return map[string]any{"routes": routes, "edges": 250_000, "nodes": 250_000, "labels": info(job.ClusterTaskFile(name, i, "labels"), 250_000)}, nil
	case "nodes":
		return map[string]any{"routes": routes, "rows": 250_000}, nil
	case "comps":
		return map[string]any{"stats": stage.ClusterStats{Clusters: 100_000, Clustered: 250_000, Duplicates: 150_000, Largest: 40, SizeHist: make([]int64, stage.SizeBins)},
			"clusters": info(job.ClusterTaskFile(name, i, "clusters"), 250_000), "duplicates": info(job.ClusterTaskFile(name, i, "duplicates"), 150_000),
			"routes": routes}, nil
	}
	return nil, fmt.Errorf("no cluster step %q", name)
}

// writeRoutes writes a task's route table, as the task would.
func (f *fabricator) writeRoutes(ctx context.Context, name string, slots []string, ranges []map[int]fileinfo.Info) (*job.Routes, error) {
	r, err := workfile.WriteRoutes(ctx, f.st, name, slots, ranges)
	if r != nil {
		f.wrote.Add(r.File.Bytes)
	}
	return r, err
}

// fakeRanges are the ranges of a run file of one run for each of keys
// keys, of rowBytes bytes a row.
func fakeRanges(name string, keys int, rowBytes int64) map[int]fileinfo.Info {
	out := make(map[int]fileinfo.Info, keys)
	var off int64
	for k := range keys {
		rows := int64(20 + k%17)
		out[k] = fileinfo.Info{Name: name, Rows: rows, Bytes: rows * rowBytes, Offset: off, Checksum: fakeSum(name, k)}
		off += rows * rowBytes
	}
	return out
}

// fakeSum is a checksum of as many digits as a real one.
func fakeSum(name string, k int) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range []byte(name) {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return (h ^ uint64(k)) * 0x9e3779b97f4a7c15
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
