package minhash

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkSketch times one K=128 signature of a set of n random hashes.
// It cycles through 2^19 hashes cut into sets (at least 64), so that
// branch predictors cannot learn the sets: Dart's loops branch on the data,
// and a few sets sketched again and again run faster than new ones.
func BenchmarkSketch(b *testing.B) {
	const k = 128
	r := rand.New(rand.NewPCG(9, 9))
	dart, _ := NewDart(k, 1)
	classic, _ := NewClassic(k, 1)
	for _, n := range []int{1, 10, 100, 300, 1000, 10000} {
		m := max(64, 1<<19/n)
		all := randomSet(r, m*n)
		sets := make([][]uint64, m)
		for i := range sets {
			sets[i] = all[i*n : (i+1)*n]
		}
		for _, sk := range []struct {
			name string
			s    Sketcher
		}{{"dart", dart}, {"classic", classic}} {
			b.Run(fmt.Sprintf("%s/n=%d", sk.name, n), func(b *testing.B) {
				var sig Signature
				b.SetBytes(int64(8 * n))
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					sig = sk.s.Sketch(sig, sets[i%m])
					i++
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/shingle")
			})
		}
	}
}

// BenchmarkNewDart times the construction of a Dart (its tables).
func BenchmarkNewDart(b *testing.B) {
	for _, k := range []int{128, MaxDartK} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewDart(k, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
