package stage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/bands"
	"github.com/neardup/neardup/pkg/records"
)

// randomBands makes the band records of docs documents of a chunk, by
// partition and sorted: keys from a small range so that buckets hold
// several documents, and some documents sharing a fingerprint (and so
// every key: an exact group).
func randomBands(r *rand.Rand, chunk, docs, nbands, partitions int) [][]records.BandRecord {
	parts := make([][]records.BandRecord, partitions)
	for i := range docs {
		fp := int64(r.IntN(docs/2 + 1)) // about two documents a fingerprint
		for b := range nbands {
			key := int64(uint64(fp)*0x9e3779b97f4a7c15 + uint64(b))
			if r.IntN(3) > 0 { // not an exact copy in this band: a near one or none
				key = int64(r.Uint64N(12)) - 6
			}
			part := bands.Partition(uint64(key), partitions)
			parts[part] = append(parts[part], records.BandRecord{Band: int32(b), Key: key, Doc: job.Ordinal(chunk, i), FPHi: fp})
		}
	}
	for _, p := range parts {
		slices.SortFunc(p, compareBand)
	}
	return parts
}

// TestBandRunRoundTrip writes band run files of chunks with and without
// records in every partition and reads each partition back.
func TestBandRunRoundTrip(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	for _, tt := range []struct {
		name              string
		chunk, docs, part int
	}{
		{"empty", 0, 0, 4},
		{"one document", 5, 1, 4},
		{"many partitions, some empty", 1<<20 - 1, 30, 64},
		{"one partition", 2, 200, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := newStore(t)
			parts := randomBands(r, tt.chunk, tt.docs, 16, tt.part)
			info, err := writeBandRun(ctx, st, job.BandRunWorkFile(tt.chunk, 0), tt.chunk, parts)
			if err != nil {
				t.Fatal(err)
			}
			if info.Rows != int64(16*tt.docs) {
				t.Errorf("%d rows, want %d", info.Rows, 16*tt.docs)
			}
			rr, err := loadBandRun(ctx, st, info, tt.chunk, 0, math.MaxInt)
			if err != nil {
				t.Fatal(err)
			}
			for p := range tt.part + 1 { // and one past the last
				got, err := rr.readPart(p)
				if err != nil {
					t.Fatal(err)
				}
				var want []records.BandRecord
				if p < tt.part {
					want = parts[p]
				}
				if len(got) != len(want) || len(want) > 0 && !slices.Equal(got, want) {
					t.Errorf("partition %d: %d records read, %d written", p, len(got), len(want))
				}
			}
			// A range of partitions, as a reduce task loads it: the others
			// read as empty.
			first, last := tt.part/3, tt.part/2
			rr, err = loadBandRun(ctx, st, info, tt.chunk, first, last)
			if err != nil {
				t.Fatal(err)
			}
			for p := range tt.part {
				got, err := rr.readPart(p)
				if err != nil {
					t.Fatal(err)
				}
				if in := p >= first && p <= last; in && !slices.Equal(got, parts[p]) || !in && len(got) > 0 {
					t.Errorf("partitions %d to %d loaded: partition %d: %d records read, %d written", first, last, p, len(got), len(parts[p]))
				}
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		st := newStore(t)
		parts := randomBands(r, 3, 10, 4, 2)
		if _, err := writeBandRun(ctx, st, "x.bnd", 4, parts); err == nil {
			t.Error("records of chunk 3 written as chunk 4's")
		}
		parts[0][0], parts[0][1] = parts[0][1], parts[0][0]
		if _, err := writeBandRun(ctx, st, "y.bnd", 3, parts); err == nil {
			t.Error("unsorted records written")
		}
	})
}

// TestBandRunDamage damages a band run file in each of its parts and
// checks that reading it fails with an error naming the file and the
// offset of the damage, never with wrong records.
func TestBandRunDamage(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 6))
	st := newStore(t)
	parts := randomBands(r, 7, 50, 16, 4)
	name := job.BandRunWorkFile(7, 0)
	info, err := writeBandRun(ctx, st, name, 7, parts)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(st.Root(), name)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := loadBandRun(ctx, st, info, 7, 0, math.MaxInt)
	if err != nil {
		t.Fatal(err)
	}
	block1 := rr.blocks[1]
	footer := int64(len(orig)) - int64(bandRunTrailer) - 3
	for _, tt := range []struct {
		name   string
		damage func([]byte) []byte
		info   func(fileinfo.Info) fileinfo.Info
		at     int64 // the offset the error names
	}{
		{"a block", func(b []byte) []byte { b[block1.offset+5] ^= 1; return b }, nil, block1.offset},
		{"the footer", func(b []byte) []byte { b[footer] ^= 1; return b }, nil, -1},
		{"the trailer's magic", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }, nil, int64(len(orig) - len(bandRunMagic))},
		{"cut short", func(b []byte) []byte { return b[:len(b)-10] }, func(i fileinfo.Info) fileinfo.Info { i.Bytes -= 10; return i }, int64(len(orig) - 10 - len(bandRunMagic))},
		{"cut, size as written", func(b []byte) []byte { return b[:len(b)-10] }, nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(path, tt.damage(slices.Clone(orig)), 0o644); err != nil {
				t.Fatal(err)
			}
			in := info
			if tt.info != nil {
				in = tt.info(info)
			}
			rr, err := loadBandRun(ctx, st, in, 7, 0, math.MaxInt)
			if err == nil {
				for p := range 4 {
					if _, err = rr.readPart(p); err != nil {
						break
					}
				}
			}
			if !errors.Is(err, pqfile.ErrCorrupt) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "at offset") {
				t.Fatalf("got %v, want a corrupt file error naming %s and an offset", err, name)
			}
			if tt.at >= 0 && !strings.Contains(err.Error(), fmt.Sprintf("at offset %d:", tt.at)) {
				t.Errorf("got %v, want offset %d", err, tt.at)
			}
		})
	}
}

// TestReduceLayouts reduces the same band records from band files of the
// version 2 layout (a file per chunk and partition, Reduce) and from band
// run files (ReduceTask): the results, candidates, edge and request files
// are the same, and the bands/ file holds each partition's records in
// its own row group. A second run of the task gives the same files.
func TestReduceLayouts(t *testing.T) {
	ctx := context.Background()
	const partitions, chunks = 5, 3
	p := resolved(t, func(p *job.Params) { p.Partitions, p.MaxBucket = partitions, 6 })
	spec := &job.Spec{Params: p}
	r := rand.New(rand.NewPCG(7, 8))
	oldSt, newSt := newStore(t), newStore(t)
	var maps []job.MapResult
	var runs []bandRunFile
	byPart := make([][]records.BandRecord, partitions)
	for c := range chunks {
		parts := randomBands(r, c, 40, p.Bands, partitions)
		mr := job.MapResult{Chunk: c, BandFiles: map[int]fileinfo.Info{}}
		for part, recs := range parts {
			byPart[part] = append(byPart[part], recs...)
			old := make([]records.BandRecord, len(recs))
			for i, rec := range recs {
				rec.FPLo = ^rec.FPHi // a 128-bit fingerprint, as version 2 wrote
				old[i] = rec
			}
			info, err := pqfile.Write(ctx, oldSt, job.BandFile(part, c), old, bandOptions())
			if err != nil {
				t.Fatal(err)
			}
			mr.BandFiles[part] = info
		}
		maps = append(maps, mr)
		info, err := writeBandRun(ctx, newSt, job.BandRunWorkFile(c, 0), c, parts)
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
	in := bandTaskInput{First: 0, Last: partitions - 1, Runs: runs}
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
		recs, err := ReadBandPart(ctx, newSt, first.Bands, part)
		if err != nil {
			t.Fatal(err)
		}
		wantRecs := slices.SortedFunc(slices.Values(byPart[part]), compareBand)
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
			tasks := planReduceTasks(tt.maps, tt.partitions)
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

// reduceMaps runs the reduce tasks of map results as the reduce stage
// plans them and returns the partitions' results, in order.
func reduceMaps(ctx context.Context, st storage.FS, spec *job.Spec, maps []job.MapResult) ([]job.ReduceResult, error) {
	tasks := planReduceTasks(maps, spec.Params.Partitions)
	var out []job.ReduceResult
	for i := range len(tasks) {
		tr, err := ReduceTask(ctx, st, spec, tasks[i])
		if err != nil {
			return nil, err
		}
		out = append(out, tr.Parts...)
	}
	return out, nil
}
