package workfile

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/pkg/records"
)

// sliceSource is a Source of a slice's rows; it fails with err, if set,
// when asked for its row at failAt.
type sliceSource[T any] struct {
	rows   []T
	pos    int
	failAt int
	err    error
}

func (s *sliceSource[T]) Next() (T, bool, error) {
	var zero T
	if s.err != nil && s.pos == s.failAt {
		return zero, false, s.err
	}
	if s.pos == len(s.rows) {
		return zero, false, nil
	}
	s.pos++
	return s.rows[s.pos-1], true, nil
}

// tagged is a row of a merge test: its key, which many rows share, and
// where it comes from, which tells rows of one key apart.
type tagged struct{ key, src, pos int }

func compareKey(x, y tagged) int { return cmp.Compare(x.key, y.key) }

// mergeRows merges runs with Merge, by key only.
func mergeRows(t *testing.T, runs [][]tagged) []tagged {
	t.Helper()
	srcs := make([]Source[tagged], len(runs))
	for i, r := range runs {
		srcs[i] = &sliceSource[tagged]{rows: r}
	}
	m, err := NewMerge(compareKey, srcs...)
	if err != nil {
		t.Fatal(err)
	}
	out := drain(t, m.Next)
	// Over, it stays over.
	if _, ok, err := m.Next(); ok || err != nil {
		t.Fatalf("a row (%v) after the end", err)
	}
	return out
}

// randomRuns returns n sorted runs of up to size rows with keys below
// keys: few keys make many ties, within a run and across runs.
func randomRuns(r *rand.Rand, n, size, keys int) [][]tagged {
	runs := make([][]tagged, n)
	for i := range runs {
		run := make([]tagged, r.IntN(size+1))
		for j := range run {
			run[j].key = r.IntN(keys)
		}
		slices.SortFunc(run, compareKey)
		for j := range run {
			run[j].src, run[j].pos = i, j
		}
		runs[i] = run
	}
	return runs
}

// TestMerge checks the merge of runs against a reference stable merge:
// the stable sort of the runs one after the other. Rows of equal keys
// come in the order of their runs, then of their places in them.
func TestMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	run := func(src int, keys ...int) []tagged {
		out := make([]tagged, len(keys))
		for i, k := range keys {
			out[i] = tagged{k, src, i}
		}
		return out
	}
	tests := []struct {
		name string
		runs [][]tagged
	}{
		{"no run", nil},
		{"one run", [][]tagged{run(0, 1, 1, 2, 5)}},
		{"empty runs among others", [][]tagged{nil, run(1, 3), nil, run(3, 1, 3, 3), nil}},
		{"one key everywhere", [][]tagged{run(0, 4, 4), run(1, 4), run(2, 4, 4, 4)}},
		{"ties, later runs first", [][]tagged{run(0, 2, 9), run(1, 1, 2), run(2, 0, 2)}},
	}
	for _, n := range []int{2, 3, 5, 7, 8, 13, 32, 33} {
		for _, keys := range []int{1, 3, 50} {
			tests = append(tests, struct {
				name string
				runs [][]tagged
			}{fmt.Sprintf("%d random runs of %d keys", n, keys), randomRuns(r, n, 40, keys)})
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mergeRows(t, tt.runs)
			want := slices.Concat(tt.runs...)
			slices.SortStableFunc(want, compareKey)
			if !slices.Equal(got, want) {
				t.Errorf("merged %v, want %v", got[:min(len(got), 12)], want[:min(len(want), 12)])
			}
		})
	}
}

// TestMergeErrors checks that a source's error, when it starts or after
// some rows, is the merge's.
func TestMergeErrors(t *testing.T) {
	bad := errors.New("bad source")
	for _, at := range []int{0, 2} {
		t.Run(fmt.Sprint("failing at row ", at), func(t *testing.T) {
			srcs := []Source[int]{
				&sliceSource[int]{rows: []int{1, 2, 3, 4}},
				&sliceSource[int]{rows: []int{0, 1, 2, 3}, failAt: at, err: bad},
			}
			m, err := NewMerge(cmp.Compare[int], srcs...)
			for err == nil {
				var ok bool
				if _, ok, err = m.Next(); !ok && err == nil {
					t.Fatal("the merge ended without the source's error")
				}
			}
			if !errors.Is(err, bad) {
				t.Fatalf("err = %v, want %v", err, bad)
			}
		})
	}
}

// BenchmarkMerge times the merge of a reduce partition's band records
// from sorted lists (one a map run), reporting the time a record.
func BenchmarkMerge(b *testing.B) {
	for _, lists := range []int{32, 4} {
		b.Run(fmt.Sprintf("lists=%d", lists), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			in := make([][]records.BandRecord, lists)
			for i := range in {
				in[i] = randomBands(r, i, 8000/lists, 16, 1)[0]
			}
			srcs := make([]Source[records.BandRecord], lists)
			n := 0
			for b.Loop() {
				for i, l := range in {
					srcs[i] = &sliceSource[records.BandRecord]{rows: l}
				}
				m, err := NewMerge(CompareBand, srcs...)
				if err != nil {
					b.Fatal(err)
				}
				for n = 0; ; n++ {
					if _, ok, _ := m.Next(); !ok {
						break
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/record")
		})
	}
}
