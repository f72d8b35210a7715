package simhash

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestNewBlocksRange(t *testing.T) {
	tests := []struct {
		k  int
		ok bool
	}{
		{-1, false}, {0, true}, {1, true}, {3, true}, {MaxK, true}, {MaxK + 1, false}, {64, false},
	}
	for _, tc := range tests {
		b, err := NewBlocks(tc.k)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrInvalidK) {
			t.Errorf("NewBlocks(%d): error %v, want ok=%v wrapping ErrInvalidK", tc.k, err, tc.ok)
		}
		if tc.ok && (b.N() != tc.k+1 || b.K() != tc.k) {
			t.Errorf("NewBlocks(%d): N() = %d, K() = %d", tc.k, b.N(), b.K())
		}
	}
	var zero Blocks
	if zero.N() != 0 || len(zero.Keys(nil, 42)) != 0 {
		t.Error("the zero Blocks has blocks")
	}
}

// TestBlocksLayout checks that the blocks are contiguous, cover the 64
// bits exactly once and differ in width by at most one.
func TestBlocksLayout(t *testing.T) {
	for k := 0; k <= MaxK; k++ {
		b, _ := NewBlocks(k)
		next, minW, maxW := 0, 64, 0
		for i := range b.N() {
			shift, w := b.block(i)
			if shift != next {
				t.Fatalf("k=%d block %d: starts at bit %d, want %d", k, i, shift, next)
			}
			// Keys sees exactly the bits of the block.
			fp := ^uint64(0) >> uint(64-w) << uint(shift)
			for j, key := range b.Keys(nil, fp) {
				if inside := key != b.Keys(nil, 0)[j]; inside != (j == i) {
					t.Fatalf("k=%d: the bits of block %d change key %d: %v", k, i, j, inside)
				}
			}
			next += w
			minW, maxW = min(minW, w), max(maxW, w)
		}
		if next != 64 || maxW-minW > 1 {
			t.Errorf("k=%d: blocks cover %d bits, widths %d..%d", k, next, minW, maxW)
		}
	}
}

// flipBits returns fp with count distinct random bits flipped.
func flipBits(r *rand.Rand, fp uint64, count int) uint64 {
	for _, i := range r.Perm(64)[:count] {
		fp ^= 1 << uint(i)
	}
	return fp
}

// sharedKeys returns the number of blocks on which the keys of a and b
// are equal.
func sharedKeys(b Blocks, a, c uint64) int {
	ka, kc := b.Keys(nil, a), b.Keys(nil, c)
	n := 0
	for i := range ka {
		if ka[i] == kc[i] {
			n++
		}
	}
	return n
}

// TestPigeonhole checks, for every k, that fingerprints at distance <= k
// share a key (randomly placed differences, and the worst case of one
// difference in each of k blocks, which leaves exactly one block equal),
// and that one difference in every block shares none: k+1 blocks are
// needed.
func TestPigeonhole(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for k := 0; k <= MaxK; k++ {
		b, _ := NewBlocks(k)
		for range 2000 {
			fp := r.Uint64()
			d := r.IntN(k + 1)
			if sharedKeys(b, fp, flipBits(r, fp, d)) == 0 {
				t.Fatalf("k=%d: distance %d, no shared key", k, d)
			}
			// One bit flipped in each block but one (chosen at random).
			spare := r.IntN(b.N())
			worst, all := fp, fp
			for i := range b.N() {
				shift, w := b.block(i)
				bit := uint64(1) << uint(shift+r.IntN(w))
				all ^= bit
				if i != spare {
					worst ^= bit
				}
			}
			if got := sharedKeys(b, fp, worst); got != 1 || Distance(fp, worst) != k {
				t.Fatalf("k=%d: distance %d with one spare block shares %d keys, want 1", k, Distance(fp, worst), got)
			}
			if got := sharedKeys(b, fp, all); got != 0 {
				t.Fatalf("k=%d: a difference in every block still shares %d keys", k, got)
			}
		}
	}
}

// TestKeysDistinct checks that keys are distinct across blocks and
// values: exhaustively for 4-bit (k=15) and 8-bit (k=7) blocks, and that
// Keys appends.
func TestKeysDistinct(t *testing.T) {
	for _, k := range []int{7, 15} {
		b, _ := NewBlocks(k)
		w := 64 / b.N()
		seen := map[uint64]string{}
		for v := range uint64(1) << uint(w) {
			// The fingerprint with value v in every block.
			var fp uint64
			for i := range b.N() {
				shift, _ := b.block(i)
				fp |= v << uint(shift)
			}
			for i, key := range b.Keys(nil, fp) {
				id := fmt.Sprintf("block %d value %d", i, v)
				if prev, dup := seen[key]; dup {
					t.Fatalf("k=%d: %s and %s have the same key", k, prev, id)
				}
				seen[key] = id
			}
		}
	}
	b, _ := NewBlocks(3)
	dst := b.Keys([]uint64{7}, 0xfeed)
	if len(dst) != 5 || dst[0] != 7 || !slices.Equal(dst[1:], b.Keys(nil, 0xfeed)) {
		t.Errorf("Keys did not append: %v", dst)
	}
}

// TestKeysMixed checks that every bit of the keys of random fingerprints
// is set about half the time (the keys are used for hash partitioning).
func TestKeysMixed(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	b, _ := NewBlocks(3)
	const n = 4000
	var ones [64]int
	keys := 0
	for range n {
		for _, key := range b.Keys(nil, r.Uint64()) {
			keys++
			for i := range ones {
				ones[i] += int(key >> uint(i) & 1)
			}
		}
	}
	// Binomial(16000, 1/2): standard deviation 63; allow 5.
	for i, c := range ones {
		if d := c - keys/2; d < -5*63 || d > 5*63 {
			t.Errorf("key bit %d set %d times in %d keys", i, c, keys)
		}
	}
}

// pair is a pair of fingerprint indices, i < j.
type pair struct{ i, j int32 }

// bruteForce returns every pair of fingerprints within distance k.
func bruteForce(fps []uint64, k int) map[pair]bool {
	out := map[pair]bool{}
	for i, a := range fps {
		for j := i + 1; j < len(fps); j++ {
			if Distance(a, fps[j]) <= k {
				out[pair{int32(i), int32(j)}] = true
			}
		}
	}
	return out
}

// blockSearch indexes every fingerprint under its block keys and returns
// the pairs that share a key (the candidates) and those of them within
// distance k.
func blockSearch(fps []uint64, b Blocks) (candidates int, found map[pair]bool) {
	index := map[uint64][]int32{}
	var keys []uint64
	for i, fp := range fps {
		keys = b.Keys(keys[:0], fp)
		for _, key := range keys {
			index[key] = append(index[key], int32(i))
		}
	}
	cand := map[pair]bool{}
	for _, ids := range index {
		for x, i := range ids {
			for _, j := range ids[x+1:] {
				cand[pair{min(i, j), max(i, j)}] = true
			}
		}
	}
	found = map[pair]bool{}
	for p := range cand {
		if Distance(fps[p.i], fps[p.j]) <= b.K() {
			found[p] = true
		}
	}
	return len(cand), found
}

// TestBlockSearchComplete plants near pairs (every distance 0..k+3) and
// clusters among a few thousand random fingerprints and checks that the
// block search finds every pair within distance k that the O(n^2) scan
// finds.
func TestBlockSearchComplete(t *testing.T) {
	tests := []struct {
		k     int
		seed  uint64
		nrand int
	}{
		{0, 31, 3000},
		{1, 32, 3000},
		{3, 33, 3000},
		{6, 34, 3000},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("k=%d", tc.k), func(t *testing.T) {
			r := rand.New(rand.NewPCG(tc.seed, 0))
			b, err := NewBlocks(tc.k)
			if err != nil {
				t.Fatal(err)
			}
			fps := randomHashes(r, tc.nrand)
			// Planted pairs: 20 at every distance 0..k+3.
			const perDistance = 20
			for d := 0; d <= tc.k+3; d++ {
				for range perDistance {
					base := r.Uint64()
					fps = append(fps, base, flipBits(r, base, d))
				}
			}
			// Clusters: a centre and 6 neighbours within k, pairwise up
			// to 2k apart.
			for range 30 {
				centre := r.Uint64()
				fps = append(fps, centre)
				for range 6 {
					fps = append(fps, flipBits(r, centre, r.IntN(tc.k+1)))
				}
			}
			r.Shuffle(len(fps), func(i, j int) { fps[i], fps[j] = fps[j], fps[i] })
			want := bruteForce(fps, tc.k)
			candidates, got := blockSearch(fps, b)
			missed := 0
			for p := range want {
				if !got[p] {
					missed++
					if missed <= 5 {
						t.Errorf("missed %016x %016x at distance %d", fps[p.i], fps[p.j], Distance(fps[p.i], fps[p.j]))
					}
				}
			}
			if len(got) != len(want) {
				t.Errorf("found %d pairs, brute force %d", len(got), len(want))
			}
			n := len(fps)
			within := perDistance * (tc.k + 1)
			t.Logf("%d fingerprints: brute force %d pairs within %d (%d planted pairs within k), block search %d candidates (%d beyond k, %.2g of all pairs), missed %d",
				n, len(want), tc.k, within, candidates, candidates-len(got), float64(candidates)/float64(n*(n-1)/2), missed)
			if len(want) < within {
				t.Errorf("brute force found %d pairs, fewer than the %d planted", len(want), within)
			}
		})
	}
}
