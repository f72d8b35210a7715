package accuracy

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/corpus"
	"github.com/neardup/neardup/pkg/shingle"
)

// randomSets returns n sets over a small universe: families of a random
// base set and copies with a few tokens dropped or added, tiny sets, exact
// repeats and empty sets, so that every similarity from 0 to 1 occurs.
func randomSets(r *rand.Rand, n, universe int) [][]uint64 {
	sets := make([][]uint64, 0, n)
	for len(sets) < n {
		switch r.IntN(10) {
		case 0:
			sets = append(sets, nil)
			continue
		case 1:
			if len(sets) > 0 {
				sets = append(sets, slices.Clone(sets[r.IntN(len(sets))]))
				continue
			}
		}
		size := 1 + r.IntN(40)
		if r.IntN(4) == 0 {
			size = 1 + r.IntN(4)
		}
		base := make([]uint64, 0, size)
		for range size {
			base = append(base, uint64(r.IntN(universe)))
		}
		sets = append(sets, shingle.SortUnique(base))
		for range r.IntN(4) {
			c := slices.Clone(sets[len(sets)-1])
			for range r.IntN(1 + len(c)/3) {
				if len(c) > 1 {
					k := r.IntN(len(c))
					c = slices.Delete(c, k, k+1)
				}
			}
			for range r.IntN(1 + len(c)/3) {
				c = append(c, uint64(r.IntN(universe)))
			}
			sets = append(sets, shingle.SortUnique(c))
		}
	}
	return sets[:n]
}

// TestJoinMatchesBruteForce checks that the prefix-filtering join finds
// exactly the pairs, with exactly the similarities, that comparing every
// pair finds.
func TestJoinMatchesBruteForce(t *testing.T) {
	type corpusCase struct {
		name string
		sets [][]uint64
	}
	var cases []corpusCase
	for seed := range uint64(6) {
		r := rand.New(rand.NewPCG(seed, 42))
		universe := []int{30, 200, 2000}[seed%3]
		cases = append(cases, corpusCase{fmt.Sprintf("random-%d-u%d", seed, universe), randomSets(r, 400, universe)})
	}
	pool, err := corpus.BundledPool()
	if err != nil {
		t.Fatal(err)
	}
	cfg := corpus.AccuracyConfig(600, 5)
	cfg.TemplatePages = 60
	g, err := corpus.New(pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	docs := make([][]uint64, g.Len())
	for i := range docs {
		docs[i] = ShingleSet(g.Text(i), shingle.Options{})
	}
	cases = append(cases, corpusCase{"accuracy-corpus", docs})

	for _, c := range cases {
		for _, minJ := range []float64{0.1, 0.3, 0.5, 0.8, 0.85, 1} {
			want := BruteForce(c.sets, minJ)
			got, err := Join(c.sets, minJ)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s, J >= %v: join found %d pairs, brute force %d; first difference %s",
					c.name, minJ, len(got), len(want), firstDiff(got, want))
			}
			if minJ == 0.5 {
				t.Logf("%s: %d pairs with J >= 0.5", c.name, len(want))
			}
		}
	}
}

// firstDiff describes the first pair where two sorted pair lists differ.
func firstDiff(got, want []Pair) string {
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			return fmt.Sprintf("missing %+v", want[i])
		case i >= len(want):
			return fmt.Sprintf("extra %+v", got[i])
		case got[i] != want[i]:
			return fmt.Sprintf("got %+v, want %+v", got[i], want[i])
		}
	}
	return "none"
}

func TestJoinEdgeCases(t *testing.T) {
	tests := []struct {
		name string
		sets [][]uint64
		minJ float64
		want []Pair
	}{
		{"empty sets pair with nothing", [][]uint64{nil, {}, nil}, 0.5, nil},
		{"empty beside equal sets", [][]uint64{{1, 2}, nil, {1, 2}}, 1, []Pair{{0, 2, 1}}},
		{"exactly at the threshold", [][]uint64{{1, 2, 3, 4}, {1, 2, 5, 6}}, 1.0 / 3, []Pair{{0, 1, 1.0 / 3}}},
		{"just below", [][]uint64{{1, 2, 3, 4}, {1, 2, 5, 6}}, 0.34, nil},
		{"half", [][]uint64{{1, 2, 3}, {1, 2, 3, 4, 5, 6}}, 0.5, []Pair{{0, 1, 0.5}}},
		{"single shingles", [][]uint64{{7}, {7}, {8}}, 0.9, []Pair{{0, 1, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Join(tt.sets, tt.minJ)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Join = %v, want %v", got, tt.want)
			}
			if bf := BruteForce(tt.sets, tt.minJ); !slices.Equal(bf, tt.want) {
				t.Errorf("BruteForce = %v, want %v", bf, tt.want)
			}
		})
	}
	for _, bad := range []float64{0, -0.1, 1.01} {
		if _, err := Join(nil, bad); err == nil {
			t.Errorf("Join(minJ=%v) succeeded", bad)
		}
	}
}

// BenchmarkJoin20k joins the shingle sets of the 20,000-document accuracy
// corpus (with its 1,000-page template family) at J >= 0.5:
//
//	go test -run '^$' -bench Join20k -benchtime 1x -cpu 1 ./internal/accuracy
func BenchmarkJoin20k(b *testing.B) {
	pool, err := corpus.BundledPool()
	if err != nil {
		b.Fatal(err)
	}
	g, err := corpus.New(pool, corpus.AccuracyConfig(20000, 1))
	if err != nil {
		b.Fatal(err)
	}
	docs := DocsOf(g, shingle.Options{})
	sets := make([][]uint64, len(docs))
	for i, d := range docs {
		sets[i] = d.Set
	}
	for b.Loop() {
		pairs, err := Join(sets, 0.5)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(pairs)), "pairs")
	}
}
