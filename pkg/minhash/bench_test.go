package minhash

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func BenchmarkSketch(b *testing.B) {
	const k = 128
	r := rand.New(rand.NewPCG(9, 9))
	oph, _ := NewOPH(k, 1)
	classic, _ := NewClassic(k, 1)
	for _, n := range []int{5, 30, 300, 3000} {
		set := randomSet(r, n)
		for _, sk := range []struct {
			name string
			s    Sketcher
		}{{"oph", oph}, {"classic", classic}} {
			b.Run(fmt.Sprintf("%s/n=%d", sk.name, n), func(b *testing.B) {
				var sig Signature
				b.SetBytes(int64(8 * n))
				b.ReportAllocs()
				for b.Loop() {
					sig = sk.s.Sketch(sig, set)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/shingle")
			})
		}
	}
}

// BenchmarkDensify times both densification methods for a given number of
// non-empty bins at K=128; it chose OPH's sparse cut-off.
func BenchmarkDensify(b *testing.B) {
	const k = 128
	o, _ := NewOPH(k, 1)
	r := rand.New(rand.NewPCG(10, 10))
	for _, nz := range []int{1, 2, 4, 8, 12, 16, 20, 24, 32, 48, 64, 96, 120} {
		// Raw bins with exactly nz non-empty bins.
		raw := make(Signature, k)
		for i := range raw {
			raw[i] = empty
		}
		for _, c := range r.Perm(k)[:nz] {
			raw[c] = r.Uint32() >> 1
		}
		for _, method := range []int{0, 1} {
			name := []string{"rank", "probe"}[method]
			b.Run(fmt.Sprintf("nz=%d/%s", nz, name), func(b *testing.B) {
				sig := make(Signature, k)
				for b.Loop() {
					copy(sig, raw)
					o.densify(sig, method)
				}
			})
		}
	}
}
