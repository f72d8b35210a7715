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
	c, err := NewClassic(k, seed)
	if err != nil {
		t.Fatal(err)
	}
	return []Sketcher{d, c}
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
