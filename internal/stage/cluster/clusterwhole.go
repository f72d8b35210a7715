package cluster

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/unionfind"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/records"
	"golang.org/x/sync/errgroup"
)

// A job of few edges and documents (see WholeBytes) runs the cluster
// stage as one task, in memory: the steps' work without their files. Union-find
// labels the components; the rows the nodes step would send (see
// labelledRows) are taken whole by takeComponents, as the components
// step does with one partition; and the outputs are written as the output
// step writes them (expandChunk, writeExact), clusters.parquet and
// duplicates.parquet straight from the sorted rows instead of merged
// runs. The files are byte-identical to the distributed steps' (the
// tests run both).

// stepWhole is the kind of the one step of a job clustered in one task.
const stepWhole = "whole"

// wholeResult is what the task of the whole step reports: what the
// components step and the output step's tasks would have.
type wholeResult struct {
	Components componentsResult `json:"components"`
	Outputs    []outputResult   `json:"outputs"`
}

// whole runs the stage as one task: it returns its results as those of
// one components task and of the output step's tasks.
func (d driver) whole(ctx context.Context, vf []verifyFiles, docs map[int]fileinfo.Info, dropped map[int]droppedRows) ([]componentsResult, []outputResult, error) {
	// As for the output step: pairs/ is written whole.
	if err := d.st.Remove(ctx, job.PairsDir); err != nil {
		return nil, nil, err
	}
	res, err := runStep[wholeResult](ctx, d, &clusterStep{Name: StepPrefix + stepWhole, Kind: stepWhole, Parts: 1, Tasks: 1, Verifies: vf, Docs: docs, Dropped: dropped, DensePairs: d.densePairs})
	if err != nil {
		return nil, nil, err
	}
	return []componentsResult{res[0].Components}, res[0].Outputs, nil
}

// wholeTask finds the components of all the verified pairs and groups
// of s by union-find, takes them whole and writes the stage's outputs
// (see the comment above stepWhole).
func wholeTask(ctx context.Context, st storage.FS, spec *job.Spec, s *clusterStep) (*wholeResult, error) {
	if s.Parts != 1 {
		return nil, fmt.Errorf("%w: step %s has %d partitions, not 1", ErrNoTask, s.Name, s.Parts)
	}
	uf := unionfind.New(0)
	for _, v := range s.Verifies {
		err := readVerified(ctx, st, v, func(r pairEnds) error {
			uf.Union(r.A, r.B)
			return nil
		}, func(r records.ExactMember) error {
			uf.Union(r.Group, r.Doc)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("clusters: %w", err)
		}
	}
	var labels []records.Candidate // (document, label)
	for _, c := range uf.Components() {
		if len(c) < 2 {
			continue
		}
		for _, v := range c {
			labels = append(labels, records.Candidate{A: v, B: c[0]})
		}
	}
	workfile.SortEdgesGrouped(labels, 1, nil)
	rows, err := labelledRows(ctx, st, s, 0, labels)
	if err != nil {
		return nil, err
	}
	sortCompRows(rows)
	t, err := takeComponents(ctx, spec, rows, 1)
	if err != nil {
		return nil, err
	}
	stats, _ := foldComponents([]componentsResult{*t.res})
	top := boundedTop(stats)

	// The outputs, at once: the pairs/ files, then clusters.parquet,
	// duplicates.parquet and exact.parquet, in the output step's order.
	n := len(s.Verifies)
	out := make([]outputResult, n+3)
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, v := range s.Verifies {
		g.Go(func() error {
			r, err := expandChunk(ctx, st, spec, v, chunkLookups(t.lookups, v.Chunk), top, s.DensePairs)
			if err != nil {
				return fmt.Errorf("%s: %w", job.PairFile(v.Chunk), err)
			}
			out[i] = *r
			return nil
		})
	}
	g.Go(func() error {
		info, err := pqfile.Write(ctx, st, job.ClustersFile, t.clusters, outputFile("cluster", "doc"))
		out[n] = outputResult{Rows: info.Rows}
		return err
	})
	g.Go(func() error {
		info, err := pqfile.Write(ctx, st, job.DuplicatesFile, t.dups, outputFile("doc"))
		out[n+1] = outputResult{Rows: info.Rows}
		return err
	})
	g.Go(func() error {
		r, err := writeExact(ctx, st, spec, s.Verifies)
		if err == nil {
			out[n+2] = *r
		}
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return &wholeResult{Components: *t.res, Outputs: out}, nil
}

// chunkLookups returns the lookup rows of chunk c of lookups, sorted by
// chunk.
func chunkLookups(lookups []lookupRow, c int) []lookupRow {
	at := func(r lookupRow, c int) int { return cmp.Compare(int(r.Chunk), c) }
	lo, _ := slices.BinarySearchFunc(lookups, c, at)
	hi, _ := slices.BinarySearchFunc(lookups, c+1, at)
	return lookups[lo:hi]
}
