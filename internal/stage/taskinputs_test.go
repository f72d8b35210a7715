package stage

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
)

// TestTaskInputsTranspose builds random stage results and checks that
// every task's input list holds exactly its column of them, in the order
// of the producing tasks.
func TestTaskInputsTranspose(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	info := func(kind string, a, b int) fileinfo.Info {
		return fileinfo.Info{Name: fmt.Sprintf("%s-%d-%d", kind, a, b), Rows: int64(a*1000 + b)}
	}
	const chunks, parts = 7, 5
	var maps []job.MapResult
	for c := range chunks {
		m := job.MapResult{Chunk: c, Docs: int64(c), BandFiles: map[int]fileinfo.Info{}}
		for p := range parts {
			if rng.IntN(3) > 0 {
				m.BandFiles[p] = info("band", c, p)
			}
		}
		m.BandRunFiles = []fileinfo.Info{info("run", c, 0)}
		maps = append(maps, m)
	}
	var reduces []job.ReduceResult
	for p := range parts {
		r := job.ReduceResult{Part: p, EdgeFiles: map[int]fileinfo.Info{}, RequestFiles: map[int]fileinfo.Info{}}
		for c := range chunks {
			if rng.IntN(2) == 0 {
				r.EdgeFiles[c] = info("edges", p, c)
			}
			if rng.IntN(2) == 0 {
				r.RequestFiles[c] = info("requests", p, c)
			}
		}
		reduces = append(reduces, r)
	}
	edges := map[int][]job.ReduceResult{}
	for c, in := range EdgeInputs(reduces) {
		edges[c] = ReduceResults(in, c)
	}
	var gathers []job.GatherResult
	for c := range chunks {
		var want, got []string
		for _, r := range reduces {
			for _, m := range []map[int]fileinfo.Info{r.EdgeFiles, r.RequestFiles} {
				if i, ok := m[c]; ok {
					want = append(want, i.Name)
				}
			}
		}
		for _, r := range edges[c] {
			if len(r.EdgeFiles)+len(r.RequestFiles) == 0 || len(r.EdgeFiles) > 1 || len(r.RequestFiles) > 1 {
				t.Fatalf("chunk %d: input %+v", c, r)
			}
			for _, m := range []map[int]fileinfo.Info{r.EdgeFiles, r.RequestFiles} {
				if i, ok := m[c]; ok {
					got = append(got, i.Name)
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("chunk %d: %v, want %v", c, got, want)
		}
		g := job.GatherResult{Chunk: c, Ranges: map[int]fileinfo.Info{}}
		for d := range chunks {
			if rng.IntN(2) == 0 {
				g.Ranges[d] = info("gather", c, d)
			}
		}
		gathers = append(gathers, g)
	}
	gathered := map[int][]job.GatherResult{}
	for c, in := range GatheredInputs(gathers) {
		gathered[c] = GatherResults(in, c)
	}
	for d := range chunks {
		var want, got []string
		for _, g := range gathers {
			if i, ok := g.Ranges[d]; ok {
				want = append(want, fmt.Sprint(g.Chunk, i.Name))
			}
		}
		for _, g := range gathered[d] {
			if len(g.Ranges) != 1 {
				t.Fatalf("verify chunk %d: input %+v", d, g)
			}
			got = append(got, fmt.Sprint(g.Chunk, g.Ranges[d].Name))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("verify chunk %d: %v, want %v", d, got, want)
		}
	}
}
