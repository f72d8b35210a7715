package minhash

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestConstructorErrors(t *testing.T) {
	tests := []struct {
		name string
		mk   func() error
		ok   bool
	}{
		{"dart 0", func() error { _, err := NewDart(0, 1); return err }, false},
		{"dart 1", func() error { _, err := NewDart(1, 1); return err }, true},
		{"dart 100", func() error { _, err := NewDart(100, 1); return err }, true},
		{"dart max", func() error { _, err := NewDart(MaxDartK, 1); return err }, true},
		{"dart too big", func() error { _, err := NewDart(MaxDartK+1, 1); return err }, false},
		{"oph 0", func() error { _, err := NewOPH(0, 1); return err }, false},
		{"oph 1", func() error { _, err := NewOPH(1, 1); return err }, true},
		{"oph max", func() error { _, err := NewOPH(MaxOPHK, 1); return err }, true},
		{"oph too big", func() error { _, err := NewOPH(MaxOPHK+1, 1); return err }, false},
		{"classic -1", func() error { _, err := NewClassic(-1, 1); return err }, false},
		{"classic 3", func() error { _, err := NewClassic(3, 1); return err }, true},
		{"classic too big", func() error { _, err := NewClassic(MaxClassicK+1, 1); return err }, false},
	}
	for _, tc := range tests {
		err := tc.mk()
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrInvalidK) {
			t.Errorf("%s: error %v, want ok=%v wrapping ErrInvalidK", tc.name, err, tc.ok)
		}
	}
}

func randomSet(r *rand.Rand, n int) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = r.Uint64()
	}
	return s
}

func sketchers(t testing.TB, k int, seed uint64) []Sketcher {
	d, err := NewDart(k, seed)
	if err != nil {
		t.Fatal(err)
	}
	o, err := NewOPH(k, seed)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClassic(k, seed)
	if err != nil {
		t.Fatal(err)
	}
	return []Sketcher{d, o, c}
}

func TestSketchBasics(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, k := range []int{1, 2, 3, 7, 64, 100, 128, 256} {
		for _, sk := range sketchers(t, k, 99) {
			name := fmt.Sprintf("%T/K=%d", sk, k)
			if got := sk.Sketch(make(Signature, 5, 10), nil); len(got) != 0 || cap(got) != 10 {
				t.Errorf("%s: empty input gave len %d cap %d, want dst[:0]", name, len(got), cap(got))
			}
			for _, n := range []int{1, 2, 5, 30, 1000} {
				set := randomSet(r, n)
				a := sk.Sketch(nil, set)
				if len(a) != k {
					t.Fatalf("%s: len %d", name, len(a))
				}
				// Order and repeats do not matter; dst is reused.
				shuffled := append(slices.Clone(set), set[:n/2+1]...)
				r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
				dst := make(Signature, 0, k)
				b := sk.Sketch(dst, shuffled)
				if !slices.Equal(a, b) || &b[0] != &dst[:1][0] {
					t.Fatalf("%s n=%d: equal sets gave different signatures or dst not reused", name, n)
				}
				if Estimate(a, b) != 1 {
					t.Fatalf("%s: Estimate of equal signatures != 1", name)
				}
				if _, ok := sk.(*OPH); ok {
					for _, v := range a {
						if v == empty {
							t.Fatalf("%s n=%d: an empty bin survived", name, n)
						}
					}
				}
			}
		}
	}
}

func TestEstimateAndStdErr(t *testing.T) {
	tests := []struct {
		a, b Signature
		want float64
	}{
		{nil, nil, 0},
		{Signature{1, 2}, Signature{1}, 0},
		{Signature{1, 2, 3, 4}, Signature{1, 0, 3, 0}, 0.5},
		{Signature{7}, Signature{7}, 1},
	}
	for _, tc := range tests {
		if got := Estimate(tc.a, tc.b); got != tc.want {
			t.Errorf("Estimate(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	if got := StdErr(0.5, 100); got != 0.05 {
		t.Errorf("StdErr(0.5, 100) = %v", got)
	}
	if !math.IsNaN(StdErr(0.5, 0)) {
		t.Error("StdErr(p, 0) is not NaN")
	}
}

// TestClassicUnrolledMatchesReference checks the 4-way loop against the
// one-value-at-a-time definition.
func TestClassicUnrolledMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, k := range []int{1, 3, 4, 5, 127, 128} {
		c, _ := NewClassic(k, uint64(k))
		for _, n := range []int{1, 4, 333} {
			set := randomSet(r, n)
			sig := c.Sketch(nil, set)
			for i := range sig {
				if want := classicValue(c.a[i], c.b[i], set); sig[i] != want {
					t.Fatalf("K=%d n=%d value %d = %d, want %d", k, n, i, sig[i], want)
				}
			}
		}
	}
}

// TestDensifyMethodsAgree checks that the rank method and probing give
// identical signatures for every number of non-empty bins.
func TestDensifyMethodsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, k := range []int{2, 5, 64, 128, 200} {
		o, _ := NewOPH(k, 7)
		for n := 1; n <= 3*k; n += 1 + n/8 {
			set := randomSet(r, n)
			a := o.Sketch(nil, set)
			for _, method := range []int{0, 1} {
				b := slices.Clone(a)
				// Undo densification: recompute raw bins, then densify.
				raw := o.rawBins(set)
				o.densify(raw, method)
				copy(b, raw)
				if !slices.Equal(a, b) {
					t.Fatalf("K=%d n=%d method %d differs from Sketch", k, n, method)
				}
			}
		}
	}
}

// rawBins is Sketch without densification.
func (o *OPH) rawBins(hashes []uint64) Signature {
	sig := make(Signature, o.k)
	for i := range sig {
		sig[i] = empty
	}
	for _, x := range hashes {
		y := (x ^ o.xor) * o.mul
		var b uint64
		if o.pow2 {
			b = (y >> (o.shift & 63)) & uint64(o.k-1)
		} else {
			b = mulHi(y, uint64(o.k))
		}
		sig[b] = min(sig[b], uint32(y))
	}
	return sig
}

func TestDensificationDependsOnlyOnSeedBinAttempt(t *testing.T) {
	// Same seed: same tables. Tables are permutations, and rank inverts order.
	a, _ := NewOPH(64, 11)
	b, _ := NewOPH(64, 11)
	c, _ := NewOPH(64, 12)
	if !slices.Equal(a.order, b.order) || slices.Equal(a.order, c.order) {
		t.Fatal("probe orders do not depend on the seed alone")
	}
	for j := range 64 {
		row := a.order[j*64 : (j+1)*64]
		seen := make([]bool, 64)
		for t2, cc := range row {
			if seen[cc] || a.rank[j*64+int(cc)] != uint16(t2) {
				t.Fatalf("bin %d: order is not a permutation inverted by rank", j)
			}
			seen[cc] = true
		}
	}
}
