package unionfind

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestComponents(t *testing.T) {
	tests := []struct {
		name  string
		edges [][2]int64
		want  [][]int64
	}{
		{"empty", nil, nil},
		{"one edge", [][2]int64{{5, 3}}, [][]int64{{3, 5}}},
		{"self loop", [][2]int64{{7, 7}}, [][]int64{{7}}},
		{"chain", [][2]int64{{1, 2}, {3, 4}, {2, 3}}, [][]int64{{1, 2, 3, 4}}},
		{"two components", [][2]int64{{10, 11}, {1 << 40, 2}, {11, 12}}, [][]int64{{2, 1 << 40}, {10, 11, 12}}},
		{"negative ids", [][2]int64{{-5, 9}, {9, -1}}, [][]int64{{-5, -1, 9}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := New(0)
			for _, e := range tt.edges {
				f.Union(e[0], e[1])
			}
			if got := f.Components(); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Components() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestOrderIndependent checks that the components do not depend on the
// order of the edges, against a brute-force labelling.
func TestOrderIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 300
	var edges [][2]int64
	for range 200 {
		edges = append(edges, [2]int64{rng.Int64N(n), rng.Int64N(n)})
	}
	// Brute force: repeated relabelling until stable.
	label := make([]int64, n)
	for i := range label {
		label[i] = int64(i)
	}
	for changed := true; changed; {
		changed = false
		for _, e := range edges {
			m := min(label[e[0]], label[e[1]])
			for _, v := range e {
				if label[v] != m {
					label[v], changed = m, true
				}
			}
		}
	}
	seen := map[int64]bool{}
	for _, e := range edges {
		seen[e[0]], seen[e[1]] = true, true
	}
	want := map[int64][]int64{}
	for v := int64(0); v < n; v++ {
		if seen[v] {
			want[label[v]] = append(want[label[v]], v)
		}
	}
	for trial := range 5 {
		rng.Shuffle(len(edges), func(i, j int) { edges[i], edges[j] = edges[j], edges[i] })
		f := New(10)
		for _, e := range edges {
			f.Union(e[0], e[1])
		}
		comps := f.Components()
		if len(comps) != len(want) {
			t.Fatalf("trial %d: %d components, want %d", trial, len(comps), len(want))
		}
		for _, c := range comps {
			if !reflect.DeepEqual(c, want[c[0]]) {
				t.Fatalf("trial %d: component %v, want %v", trial, c, want[c[0]])
			}
		}
	}
}

func BenchmarkUnion(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	edges := make([][2]int64, 1<<16)
	for i := range edges {
		edges[i] = [2]int64{rng.Int64N(1 << 17), rng.Int64N(1 << 17)}
	}
	b.ReportAllocs()
	for b.Loop() {
		f := New(len(edges))
		for _, e := range edges {
			f.Union(e[0], e[1])
		}
		f.Components()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(edges)), "ns/edge")
}
