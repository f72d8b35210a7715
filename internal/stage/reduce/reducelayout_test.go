package reduce

import (
	"context"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/internal/worktest"
	"github.com/neardup/neardup/pkg/records"
)

// TestReduceLayouts reduces the same band records from band files of the
// version 2 layout (a file per chunk and partition, Reduce) and from band
// run files (ReduceTask): the results, candidates, edge and request files
// are the same, and the bands/ file holds each partition's records in
// its own row group. A second run of the task gives the same files.
func TestReduceLayouts(t *testing.T) {
	ctx := context.Background()
	const partitions, chunks = 5, 3
	p := worktest.Resolved(t, func(p *job.Params) { p.Partitions, p.MaxBucket = partitions, 6 })
	spec := &job.Spec{Params: p}
	r := rand.New(rand.NewPCG(7, 8))
	oldSt, newSt := worktest.NewStore(t), worktest.NewStore(t)
	var maps []job.MapResult
	var runs []bandRunFile
	byPart := make([][]records.BandRecord, partitions)
	for c := range chunks {
		parts := worktest.RandomBands(r, c, 40, p.Bands, partitions)
		mr := job.MapResult{Chunk: c, BandFiles: map[int]fileinfo.Info{}}
		for part, recs := range parts {
			byPart[part] = append(byPart[part], recs...)
			old := make([]records.BandRecord, len(recs))
			for i, rec := range recs {
				rec.FPLo = ^rec.FPHi // a 128-bit fingerprint, as version 2 wrote
				old[i] = rec
			}
			info, err := pqfile.Write(ctx, oldSt, job.BandFile(part, c), old, index.BandOptions())
			if err != nil {
				t.Fatal(err)
			}
			mr.BandFiles[part] = info
		}
		maps = append(maps, mr)
		info, err := workfile.WriteBandRun(ctx, newSt, job.BandRunWorkFile(c, 0), c, parts)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, bandRunFile{Chunk: c, File: info})
	}
	var want []job.ReduceResult
	for part := range partitions {
		res, err := Reduce(ctx, oldSt, spec, part, maps)
		if err != nil {
			t.Fatal(err)
		}
		res.Seconds = 0
		want = append(want, *res)
	}
	var sum job.ReduceResult
	for _, w := range want {
		sum.Candidates += w.Candidates
		sum.ExactClaims += w.ExactClaims
		sum.BoundedBuckets += w.BoundedBuckets
	}
	if sum.Candidates == 0 || sum.ExactClaims == 0 || sum.BoundedBuckets == 0 {
		t.Fatalf("%+v: no candidates, claims or bounded bucket to compare", sum)
	}
	in := TaskInput{First: 0, Last: partitions - 1, Runs: runs}
	var first *job.ReduceTaskResult
	for run := range 2 {
		got, err := ReduceTask(ctx, newSt, spec, in)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got.Parts {
			got.Parts[i].Seconds = 0
		}
		if !reflect.DeepEqual(got.Parts, want) {
			t.Errorf("run %d: results %+v, want %+v", run, got.Parts, want)
		}
		if run == 1 && !reflect.DeepEqual(got, first) {
			t.Errorf("second run %+v, first %+v", got, first)
		}
		first = got
	}
	for _, w := range want {
		files := []fileinfo.Info{w.File}
		for _, m := range []map[int]fileinfo.Info{w.EdgeFiles, w.RequestFiles} {
			for _, info := range m {
				files = append(files, info)
			}
		}
		for _, info := range files {
			a, errA := storage.ReadFile(ctx, oldSt, info.Name)
			b, errB := storage.ReadFile(ctx, newSt, info.Name)
			if errA != nil || errB != nil || string(a) != string(b) {
				t.Errorf("%s differs (%v, %v)", info.Name, errA, errB)
			}
		}
	}
	for part := range partitions {
		recs, err := index.ReadBandPart(ctx, newSt, first.Bands, part)
		if err != nil {
			t.Fatal(err)
		}
		wantRecs := slices.SortedFunc(slices.Values(byPart[part]), workfile.CompareBand)
		if !slices.Equal(recs, wantRecs) {
			t.Errorf("partition %d: %d records in %s, want %d", part, len(recs), first.Bands.Name, len(wantRecs))
		}
	}
}

// TestPlanReduceTasks checks how partitions are cut into reduce tasks.
func TestPlanReduceTasks(t *testing.T) {
	runs := func(sizes ...int64) []job.MapResult {
		var out []job.MapResult
		for i, s := range sizes {
			out = append(out, job.MapResult{Chunk: i, BandRunFiles: []fileinfo.Info{{Name: job.BandRunWorkFile(i, 0), Bytes: s}}})
		}
		return out
	}
	for _, tt := range []struct {
		name       string
		maps       []job.MapResult
		partitions int
		want       [][2]int
	}{
		{"small: two tasks", runs(10, 20), 32, [][2]int{{0, 15}, {16, 31}}},
		{"one partition", runs(10), 1, [][2]int{{0, 0}}},
		{"nothing read", nil, 3, [][2]int{{0, 0}, {1, 2}}},
		{"by bytes", runs(reduceTaskBytes, reduceTaskBytes, reduceTaskBytes/2), 60, [][2]int{{0, 19}, {20, 39}, {40, 59}}},
		{"at most a task a partition", runs(10 * reduceTaskBytes), 4, [][2]int{{0, 0}, {1, 1}, {2, 2}, {3, 3}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tasks := PlanTasks(tt.maps, tt.partitions)
			var got [][2]int
			for i := range len(tasks) {
				got = append(got, [2]int{tasks[i].First, tasks[i].Last})
				if len(tasks[i].Runs) != len(tt.maps) {
					t.Errorf("task %d reads %d run files, want %d", i, len(tasks[i].Runs), len(tt.maps))
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("tasks %v, want %v", got, tt.want)
			}
		})
	}
}
