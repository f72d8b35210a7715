package simhash

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// refWeighted is the reference definition: one signed counter per bit,
// +1 or -1 per element of hashes.
func refWeighted(hashes []uint64) uint64 {
	var sum [64]int
	for _, h := range hashes {
		for i := range sum {
			if h>>uint(i)&1 == 1 {
				sum[i]++
			} else {
				sum[i]--
			}
		}
	}
	var fp uint64
	for i, s := range sum {
		if s > 0 {
			fp |= 1 << uint(i)
		}
	}
	return fp
}

// refSet is the reference definition of Fingerprint: refWeighted of the
// distinct hashes.
func refSet(hashes []uint64) uint64 {
	seen := make(map[uint64]bool, len(hashes))
	var set []uint64
	for _, h := range hashes {
		if !seen[h] {
			seen[h] = true
			set = append(set, h)
		}
	}
	return refWeighted(set)
}

// branchFree is the per-bit loop without branches, for the benchmarks.
func branchFree(hashes []uint64) uint64 {
	var sum [64]int
	for _, h := range hashes {
		for i := range sum {
			sum[i] += int(h>>uint(i)&1)*2 - 1
		}
	}
	var fp uint64
	for i, s := range sum {
		fp |= uint64(-s) >> 63 << uint(i)
	}
	return fp
}

func randomHashes(r *rand.Rand, n int) []uint64 {
	h := make([]uint64, n)
	for i := range h {
		h[i] = r.Uint64()
	}
	return h
}

// biased returns n hashes whose bit i is 1 with probability about 1/2 +
// (i-32)/256, so that the column counts straddle n/2 at various margins
// and ties are frequent for small n.
func biased(r *rand.Rand, n int) []uint64 {
	h := make([]uint64, n)
	for j := range h {
		for i := range 64 {
			if r.IntN(256) < 128+i-32 {
				h[j] |= 1 << uint(i)
			}
		}
	}
	return h
}

// TestMatchesReference compares Fingerprint and FingerprintWeighted with
// the reference definitions on lengths around every boundary of the
// bit-sliced kernel (blocks of 16, plane counts at powers of two) and on
// inputs built to produce ties and near-ties.
func TestMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var lengths []int
	for n := range 70 {
		lengths = append(lengths, n)
	}
	for _, p := range []int{128, 256, 512, 1024, 4096, 65536} {
		lengths = append(lengths, p-17, p-16, p-1, p, p+1, p+15, p+16)
	}
	gens := []struct {
		name string
		gen  func(n int) []uint64
	}{
		{"random", func(n int) []uint64 { return randomHashes(r, n) }},
		{"biased", func(n int) []uint64 { return biased(r, n) }},
		{"all ones", func(n int) []uint64 {
			h := make([]uint64, n)
			for i := range h {
				h[i] = ^uint64(0)
			}
			return h
		}},
		{"zeros", func(n int) []uint64 { return make([]uint64, n) }},
		{"x and ^x", func(n int) []uint64 { // every column ties when n is even
			h := randomHashes(r, n)
			for i := 1; i < n; i += 2 {
				h[i] = ^h[i-1]
			}
			return h
		}},
		{"repeats", func(n int) []uint64 { // a few values, many repeats
			vals := randomHashes(r, 1+n/10)
			h := make([]uint64, n)
			for i := range h {
				h[i] = vals[r.IntN(len(vals))]
			}
			return h
		}},
	}
	for _, g := range gens {
		for _, n := range lengths {
			if n > 5000 && g.name == "biased" {
				continue // slow to generate, and covered by random
			}
			h := g.gen(n)
			orig := slices.Clone(h)
			if got, want := FingerprintWeighted(h), refWeighted(h); got != want {
				t.Fatalf("%s n=%d: FingerprintWeighted = %016x, want %016x", g.name, n, got, want)
			}
			if got, want := Fingerprint(h), refSet(h); got != want {
				t.Fatalf("%s n=%d: Fingerprint = %016x, want %016x", g.name, n, got, want)
			}
			set := slices.Compact(slices.Sorted(slices.Values(h)))
			if got, want := Fingerprint(set), refSet(h); got != want {
				t.Fatalf("%s n=%d: Fingerprint(sorted set) = %016x, want %016x", g.name, n, got, want)
			}
			if !slices.Equal(h, orig) {
				t.Fatalf("%s n=%d: input modified", g.name, n)
			}
		}
	}
}

func TestFingerprintProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	tests := []struct {
		name string
		h    []uint64
		want uint64
	}{
		{"empty", nil, 0},
		{"one", []uint64{0xdeadbeef}, 0xdeadbeef},
		{"tie", []uint64{0x00ff, 0xff00}, 0},
		{"majority of three", []uint64{0b1100, 0b1010, 0b0110}, 0b1110},
	}
	for _, tc := range tests {
		if got := Fingerprint(tc.h); got != tc.want {
			t.Errorf("Fingerprint(%s) = %#x, want %#x", tc.name, got, tc.want)
		}
		if got := FingerprintWeighted(tc.h); got != tc.want {
			t.Errorf("FingerprintWeighted(%s) = %#x, want %#x", tc.name, got, tc.want)
		}
	}
	for _, n := range []int{1, 5, 296, 3000} {
		h := randomHashes(r, n)
		fp, fw := Fingerprint(h), FingerprintWeighted(h)
		// Identical documents, in any order and with repeats for the
		// unweighted fingerprint, give equal fingerprints.
		shuffled := slices.Clone(h)
		r.Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if Fingerprint(shuffled) != fp || FingerprintWeighted(shuffled) != fw {
			t.Errorf("n=%d: order changed the fingerprint", n)
		}
		repeated := append(slices.Clone(h), h[:n/2+1]...)
		if Fingerprint(repeated) != fp {
			t.Errorf("n=%d: repeats changed Fingerprint", n)
		}
		// Weighted: doubling every count changes nothing.
		if FingerprintWeighted(append(slices.Clone(h), h...)) != fw {
			t.Errorf("n=%d: doubled multiset changed FingerprintWeighted", n)
		}
	}
	// Weighted counts repeats: a hash repeated three times outvotes two
	// others, which outvote it when it counts once.
	votes := []uint64{0xf0, 0xf0, 0xf0, 0x0f, 0x3c}
	if got := FingerprintWeighted(votes); got != 0xf0 {
		t.Errorf("weighted vote = %#x, want 0xf0", got)
	}
	if got := Fingerprint(votes); got != 0x3c {
		t.Errorf("unweighted vote = %#x, want 0x3c", got)
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b uint64
		want int
	}{
		{0, 0, 0},
		{0, ^uint64(0), 64},
		{0b1011, 0b0110, 3},
		{1 << 63, 1, 2},
	}
	for _, tc := range tests {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%#x, %#x) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func FuzzFingerprint(f *testing.F) {
	f.Add([]byte{}, uint8(0))
	f.Add([]byte("the quick brown fox jumps over the lazy dog, twice over"), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, dup uint8) {
		h := make([]uint64, 0, len(data)/8+int(dup))
		for i := 0; i+8 <= len(data); i += 8 {
			var v uint64
			for _, c := range data[i : i+8] {
				v = v<<8 | uint64(c)
			}
			h = append(h, v)
		}
		for i := range int(dup) {
			if len(h) > 0 {
				h = append(h, h[i%len(h)])
			}
		}
		if got, want := FingerprintWeighted(h), refWeighted(h); got != want {
			t.Fatalf("FingerprintWeighted = %#x, want %#x", got, want)
		}
		if got, want := Fingerprint(h), refSet(h); got != want {
			t.Fatalf("Fingerprint = %#x, want %#x", got, want)
		}
	})
}

func ExampleDistance() {
	// The first two hashes are complements and cancel out.
	a := Fingerprint([]uint64{0x0123456789abcdef, 0xfedcba9876543210, 0x0f0f0f0f0f0f0f0f})
	b := Fingerprint([]uint64{0x0123456789abcdef, 0xfedcba9876543210, 0x0f0f0f0f0f0f0f00})
	fmt.Println(Distance(a, b))
	// Output: 4
}
