package stagetest

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
)

// Fabricator makes up task results in the shape real tasks give, for a
// job of Chunks chunks of about 1 GiB of text (434,783 documents) and
// Parts partitions, so that a benchmark of the control plane drives every
// stage's Tasks and Done without data: every chunk holds edges and
// requests of every partition, every gather task records for every
// verify chunk, every cluster task runs for every partition.
type Fabricator struct {
	FS            storage.FS
	Chunks, Parts int
	wrote         atomic.Int64 // the bytes of the tables the tasks wrote
}

// Job is the spec and plan of the job a Fabricator makes up results for,
// its output at out (gather on, so that every stage runs).
func (f *Fabricator) Job(out string) (*job.Spec, *job.Plan, error) {
	p := job.DefaultParams()
	p.Partitions, p.Gather = f.Parts, job.GatherOn
	if err := p.Resolve(); err != nil {
		return nil, nil, err
	}
	plan := &job.Plan{}
	for c := range f.Chunks {
		plan.Chunks = append(plan.Chunks, job.Chunk{Index: c, Bytes: 1 << 30, Text: 1 << 30})
	}
	return &job.Spec{Job: "bench", Epoch: "e1", Out: out, Params: p, Format: job.SpecFormat}, plan, nil
}

// Wrote is the bytes of the route tables the made-up tasks wrote.
func (f *Fabricator) Wrote() int64 { return f.wrote.Load() }

// DocsPerChunk is a made-up chunk's documents.
const DocsPerChunk = 434_783

// Result is the result of task i of the stage (or cluster step) named
// name, of n tasks; the rows a task has for every chunk or partition go
// to its route table, as the task would write it.
func (f *Fabricator) Result(ctx context.Context, name string, i, n int) (any, error) {
	info := func(name string, rows int64) fileinfo.Info {
		return fileinfo.Info{Name: name, Rows: rows, Bytes: rows * 20, Checksum: fakeSum(name, i)}
	}
	switch {
	case name == "map":
		// Band run bytes enough for one reduce task per partition.
		runBytes := int64(f.Parts) * (96 << 20) / int64(f.Chunks)
		return job.MapResult{Chunk: i, Docs: DocsPerChunk, TextBytes: 1 << 30, InputBytes: 1 << 30, Shingles: 300 * DocsPerChunk,
			BandRecords: 16 * DocsPerChunk, DocFile: info(job.DocFile(i), DocsPerChunk), SigFile: info(job.TextFile(i), DocsPerChunk),
			BandRunFiles: []fileinfo.Info{{Name: job.BandRunWorkFile(i, 0), Bytes: runBytes, Checksum: fakeSum("r", i)}},
			IDRunFiles:   []fileinfo.Info{{Name: job.IDRunWorkFile(i, 0), Bytes: runBytes / 16, Checksum: fakeSum("i", i)}},
			Seconds:      20}, nil
	case name == "reduce":
		first, last := i*f.Parts/n, (i+1)*f.Parts/n-1
		r := job.ReduceTaskResult{First: first, Last: last, Bands: info(job.ReduceBandFile(first, last), 4<<20)}
		var slots []string
		var ranges []map[int]fileinfo.Info
		for part := first; part <= last; part++ {
			r.Parts = append(r.Parts, job.ReduceResult{Part: part, Records: 4 << 20, Groups: 4 << 20, MaxGroup: 40, Candidates: 100_000,
				ExactClaims: 1000, File: info(job.CandidateFile(part), 100_000)})
			slots = append(slots, job.EdgeFile(part), job.RequestFile(part))
			ranges = append(ranges, fakeRanges(job.EdgeFile(part), f.Chunks, 20), fakeRanges(job.RequestFile(part), f.Chunks, 12))
		}
		var err error
		r.Routes, err = f.writeRoutes(ctx, job.RouteFile("reduce", i), slots, ranges)
		return r, err
	case name == "gather":
		routes, err := f.writeRoutes(ctx, job.RouteFile("gather", i), []string{job.GatherFile(i)},
			[]map[int]fileinfo.Info{fakeRanges(job.GatherFile(i), f.Chunks, 3000)})
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
func (f *Fabricator) writeRoutes(ctx context.Context, name string, slots []string, ranges []map[int]fileinfo.Info) (*job.Routes, error) {
	r, err := workfile.WriteRoutes(ctx, f.FS, name, slots, ranges)
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

// RunSizes runs bench as a sub-benchmark named CHUNKSxPARTS for each job
// shape the control-plane benchmarks drive: a tenth of the 1B plan and
// the plan itself (docs/performance.md), so that the coordinator's
// benchmark and the NATS one measure the same jobs.
func RunSizes(b *testing.B, bench func(b *testing.B, chunks, parts int)) {
	for _, size := range []struct{ chunks, parts int }{{230, 409}, {2300, 4096}} {
		b.Run(fmt.Sprintf("%dx%d", size.chunks, size.parts), func(b *testing.B) {
			for b.Loop() {
				bench(b, size.chunks, size.parts)
			}
		})
	}
}
