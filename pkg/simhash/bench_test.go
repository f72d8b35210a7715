package simhash

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/pkg/shingle"
)

// readText returns a text of ../shingle/testdata.
func readText(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "shingle", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// textDocs cuts text into documents of size whitespace-separated words,
// joined by single spaces (the last, shorter one is dropped).
func textDocs(text string, size int) []string {
	words := strings.Fields(text)
	var docs []string
	for i := 0; i+size <= len(words); i += size {
		docs = append(docs, strings.Join(words[i:i+size], " "))
	}
	return docs
}

// docHashes returns the shingle hashes of every document, in document
// order with repeats (as shingle.Shingler.Hashes gives them), and the
// total number of hashes.
func docHashes(t testing.TB, docs []string) ([][]uint64, int) {
	t.Helper()
	s, err := shingle.NewShingler(shingle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]uint64, len(docs))
	total := 0
	for i, d := range docs {
		out[i], _ = s.Hashes(nil, []byte(d))
		total += len(out[i])
	}
	return out, total
}

// reportPerShingle reports ns/shingle given the shingles per iteration.
func reportPerShingle(b *testing.B, shingles int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(shingles), "ns/shingle")
}

// BenchmarkFingerprint times the fingerprints of the 300-word documents of
// the Opticks text (word 5-grams, 296 shingles each): "set" is Fingerprint
// of the shingle.SortUnique sets (the pipeline's input, the fast path),
// "raw" Fingerprint of the hashes in document order (sorted copy first),
// "weighted" FingerprintWeighted of the raw hashes, and "branchy" and
// "branchfree" the per-bit reference loops for comparison.
func BenchmarkFingerprint(b *testing.B) {
	raw, total := docHashes(b, textDocs(readText(b, "Isaac.Newton-Opticks.txt"), 300))
	sets := make([][]uint64, len(raw))
	setTotal := 0
	for i, h := range raw {
		sets[i] = shingle.SortUnique(slices.Clone(h))
		setTotal += len(sets[i])
	}
	cases := []struct {
		name   string
		docs   [][]uint64
		shingl int
		f      func([]uint64) uint64
	}{
		{"set", sets, setTotal, Fingerprint},
		{"raw", raw, total, Fingerprint},
		{"weighted", raw, total, FingerprintWeighted},
		{"branchy", raw, total, refWeighted},
		{"branchfree", raw, total, branchFree},
	}
	for _, c := range cases {
		b.Run("opticks-300w/"+c.name, func(b *testing.B) {
			b.SetBytes(int64(8 * c.shingl))
			b.ReportAllocs()
			var sink uint64
			for b.Loop() {
				for _, h := range c.docs {
					sink ^= c.f(h)
				}
			}
			reportPerShingle(b, c.shingl)
			_ = sink
		})
	}
}

// BenchmarkWeightedSizes times the bit-sliced kernel alone on random
// hashes, from tiny to large documents.
func BenchmarkWeightedSizes(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{5, 16, 50, 296, 3000, 100000} {
		h := randomHashes(r, n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.SetBytes(int64(8 * n))
			var sink uint64
			for b.Loop() {
				sink ^= FingerprintWeighted(h)
			}
			reportPerShingle(b, n)
			_ = sink
		})
	}
}

// BenchmarkKeys times the block keys of one fingerprint.
func BenchmarkKeys(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	fps := randomHashes(r, 1024)
	for _, k := range []int{0, 3, 6, 15} {
		bl, err := NewBlocks(k)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			dst := make([]uint64, 0, bl.N())
			b.SetBytes(int64(8 * len(fps)))
			b.ReportAllocs()
			for b.Loop() {
				for _, fp := range fps {
					dst = bl.Keys(dst[:0], fp)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(fps)), "ns/fingerprint")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(fps)*bl.N()), "ns/key")
		})
	}
}
