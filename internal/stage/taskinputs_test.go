package stage

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
)

// randomRanges are ranges of file by key below keys, about half of them.
func randomRanges(rng *rand.Rand, file string, keys int) map[int]fileinfo.Info {
	out := map[int]fileinfo.Info{}
	for k := range keys {
		if rng.IntN(2) == 0 {
			rows := 1 + rng.Int64N(50)
			out[k] = fileinfo.Info{Name: file, Rows: rows, Bytes: 20 * rows, Offset: int64(k) * 1000, Checksum: rng.Uint64()}
		}
	}
	return out
}

// fixture is what each test of task inputs starts from: a store and
// random numbers.
func fixture(t *testing.T) (context.Context, *storage.Dir, *rand.Rand) {
	t.Helper()
	st, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return context.Background(), st, rand.New(rand.NewPCG(5, 5))
}

// TestTranspose checks that every key gets its column of the sources'
// tables, whatever the window: each source's ranges of the key, in
// order, none for a source without a table or without the key.
func TestTranspose(t *testing.T) {
	ctx, st, rng := fixture(t)
	const keys = 11
	var tables []*job.Routes
	var ranges [][]map[int]fileinfo.Info // by source, by slot
	for i := range 9 {
		var slots []string
		var rs []map[int]fileinfo.Info
		for s := range 1 + i%3 {
			slots = append(slots, fmt.Sprintf("file-%d-%d", i, s))
			rs = append(rs, randomRanges(rng, slots[s], keys-i%4)) // some tables shorter
		}
		if i == 4 { // a source that wrote nothing
			rs = make([]map[int]fileinfo.Info, len(slots))
		}
		r, err := workfile.WriteRoutes(ctx, st, fmt.Sprintf("routes-%d", i), slots, rs)
		if err != nil {
			t.Fatal(err)
		}
		tables, ranges = append(tables, r), append(ranges, rs)
	}
	if tables[4] != nil {
		t.Fatalf("a table of no ranges: %+v", tables[4])
	}
	for _, budget := range []int64{1, 1200, 1800, 5000, 1 << 20} { // windows of 1, 2, 3, 8 and every key
		var mu sync.Mutex
		seen := map[int]bool{}
		err := transpose(ctx, st, tables, keys, budget, func(k int, entries [][]fileinfo.Info) error {
			mu.Lock()
			defer mu.Unlock()
			if seen[k] {
				t.Errorf("budget %d: key %d twice", budget, k)
			}
			seen[k] = true
			for i, rs := range ranges {
				if tables[i] == nil || k >= tables[i].Keys {
					if len(entries[i]) != 0 {
						t.Errorf("budget %d, key %d, source %d: %v, want none", budget, k, i, entries[i])
					}
					continue
				}
				for s := range rs {
					if entries[i][s] != rs[s][k] {
						t.Errorf("budget %d, key %d, source %d, slot %d: %+v, want %+v", budget, k, i, s, entries[i][s], rs[s][k])
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != keys {
			t.Errorf("budget %d: %d keys emitted, want %d", budget, len(seen), keys)
		}
	}
}

// TestTaskInputsTranspose builds random reduce and gather results and
// checks that each chunk's input file, written from their route tables,
// holds exactly its column of them, in the order of the producing tasks
// and partitions: the bytes the coordinator wrote when it held every
// result (EdgeInputs and GatheredInputs before route tables).
func TestTaskInputsTranspose(t *testing.T) {
	ctx, st, rng := fixture(t)
	const chunks = 7
	// Reduce tasks of 1 to 3 partitions each.
	var tables []*job.Routes
	var parts [][]int
	var reduces [][]job.ReduceResult
	part := 0
	for i := range 4 {
		var rs []job.ReduceResult
		var slots []string
		var ranges []map[int]fileinfo.Info
		for range 1 + i%3 {
			r := job.ReduceResult{Part: part, EdgeFiles: randomRanges(rng, job.EdgeFile(part), chunks), RequestFiles: randomRanges(rng, job.RequestFile(part), chunks)}
			rs = append(rs, r)
			slots = append(slots, job.EdgeFile(part), job.RequestFile(part))
			ranges = append(ranges, r.EdgeFiles, r.RequestFiles)
			part++
		}
		routes, err := workfile.WriteRoutes(ctx, st, job.RouteFile("reduce", i), slots, ranges)
		if err != nil {
			t.Fatal(err)
		}
		tables, reduces = append(tables, routes), append(reduces, rs)
		parts = append(parts, partsOf(rs))
	}
	gather, verify, err := WriteEdgeInputs(ctx, st, tables, parts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int][]EdgeInput{}
	wantGather, wantVerify := map[int]bool{}, map[int]bool{}
	for _, rs := range reduces {
		for _, r := range rs {
			for c := range chunks {
				e := EdgeInput{Part: r.Part}
				if info, ok := r.EdgeFiles[c]; ok {
					e.Edges, wantVerify[c] = &info, true
				}
				if info, ok := r.RequestFiles[c]; ok {
					e.Requests, wantGather[c] = &info, true
				}
				if e.Edges != nil || e.Requests != nil {
					want[c] = append(want[c], e)
				}
			}
		}
	}
	if !slices.Equal(gather, slices.Sorted(maps.Keys(wantGather))) || !slices.Equal(verify, slices.Sorted(maps.Keys(wantVerify))) {
		t.Errorf("gather chunks %v, verify chunks %v; want %v, %v", gather, verify, slices.Sorted(maps.Keys(wantGather)), slices.Sorted(maps.Keys(wantVerify)))
	}
	checkInputs(t, st, job.InputsEdges, chunks, want)

	// Gather tasks, one per chunk with requests, each writing ranges for
	// some verify chunks.
	tables = tables[:0]
	var gathers []job.GatherResult
	for _, c := range gather {
		g := job.GatherResult{Chunk: c, Ranges: randomRanges(rng, job.GatherFile(c), chunks)}
		routes, err := workfile.WriteRoutes(ctx, st, job.RouteFile("gather", c), []string{job.GatherFile(c)}, []map[int]fileinfo.Info{g.Ranges})
		if err != nil {
			t.Fatal(err)
		}
		tables, gathers = append(tables, routes), append(gathers, g)
	}
	if err := WriteGatheredInputs(ctx, st, tables, gather); err != nil {
		t.Fatal(err)
	}
	wantGathered := map[int][]GatheredInput{}
	for _, g := range gathers {
		for _, d := range slices.Sorted(maps.Keys(g.Ranges)) {
			wantGathered[d] = append(wantGathered[d], GatheredInput{Chunk: g.Chunk, Range: g.Ranges[d]})
		}
	}
	checkInputs(t, st, job.InputsGathered, chunks, wantGathered)
}

// partsOf are the partitions of results.
func partsOf(results []job.ReduceResult) []int {
	var out []int
	for _, r := range results {
		out = append(out, r.Part)
	}
	return out
}

// checkInputs checks that the input file of each key below keys of kind
// holds want's list, as the bytes json.Marshal gives, and that keys
// without one have no file.
func checkInputs[T any](t *testing.T, st *storage.Dir, kind string, keys int, want map[int][]T) {
	t.Helper()
	for k := range keys {
		got, err := storage.ReadFile(context.Background(), st, job.TaskInputFile(kind, k))
		if want[k] == nil {
			if err == nil {
				t.Errorf("%s %d: input %s, want no file", kind, k, got)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(want[k])
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(data) {
			t.Errorf("%s %d:\n got %s\nwant %s", kind, k, got, data)
		}
	}
}
