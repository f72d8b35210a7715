package minhash

import (
	"fmt"
	"math/bits"
	"sync"
)

// MaxDartK is the largest K accepted by [NewDart].
const MaxDartK = 4096

// Dart is MinHash with K independent values, computed in expected
// O(n + K log K) time for a set of n hashes: a Poissonised one-permutation
// hashing in the spirit of Christiani's DartMinHash (2020). It is the
// default sketch.
//
// # Model
//
// Let C be K rounded up to a power of two. Cells (t, j), round t >= 0 and
// column j < C, are numbered c = t*C + j. Every element x (a shingle hash)
// occupies every cell independently with probability 1/C and gives each
// cell it occupies a 32-bit tie. For j < K, value j of the signature of a
// set is the tie of the least point (t, tie), rounds first, among the
// occupied cells of column j of its elements (columns K..C-1 are not
// used). Since cells are independent, the element that wins a column is
// uniform over the set and independent of the winners of the other
// columns: this is classic MinHash with K ideal independent permutations.
// Two sets agree on a value with probability J (plus 2^-32 for a tie
// coincidence) independently of the other values, so [Estimate] is
// binomial and two sets share a band key of r rows out of b bands with
// probability 1-(1-J^r)^b, at every set size. Signatures of sets of any two
// sizes are comparable.
//
// # Sampling
//
// Element x has the stream s_i = (x xor s1)*s2 + i*0x9e3779b97f4a7c15,
// i = 1, 2, ... (s1 and s2 come from the sketch seed), with outputs
// u_i = mix64(s_i): the high and low halves of s_i * (s_i xor
// 0xe7037ed1a0b428db), xored (wyrand's output function). Draw i gives the
// element's next occupied cell: G ~ Geometric(1/C) empty cells are
// skipped, G being the least g with u >= thr[g], where thr[g] is
// 2^64 (1-1/C)^(g+1) rounded to a multiple of 2^32 (computed in 128-bit
// fixed point), plus g. So G depends only on the top 32 bits of u, except
// when they are those of a threshold (probability below 2^-32), and the
// tie, the low 32 bits of u, is independent of G up to that event. A guide
// table indexed by the top bits of u gives G with one look-up and one
// comparison (an entry is the threshold in its bucket, whose low 32 bits
// are its index g, or just the least g below the bucket).
// Thresholds exist for g < M, where (1-1/C)^M is about 1/16; a draw below
// the last threshold means G >= M, and then, the geometric law being
// memoryless, the element skips M cells without a point (a "virtual"
// point, never merged) and draws again. Everything that decides a signature is integer
// arithmetic: signatures are bit-identical on every platform, with or
// without the assembly kernels.
//
// # Enumeration
//
// All elements advance together, slab by slab: every point in cells
// [c0, c1) of every element is merged into the per-column minima before
// any point at or beyond c1. A column that holds a point after a slab
// keeps it, since its later cells are in later rounds; once the K columns
// all hold one, the signature is final. Slab ends are predicted from n and
// the number of empty columns; they change the speed, never the result.
// Expected cost: a draw per element to start its stream, a draw per point
// and a virtual draw per 15 others, about n + max(n, C (ln K + 1)) draws in
// all: 3.6 per hash for n = 300 and K = 128, 2 for large sets, and about
// 800 for K = 128 however small the set (filling K columns is a coupon
// collector's problem), against n K hash evaluations for [Classic]. Small sets run their slabs element by element, large ones
// pass by pass (see depthFirstBelow).
//
// A Dart keeps its working memory in an internal pool: it is safe for
// concurrent use, and Sketch allocates nothing once the pool holds scratch
// for sets of that size (sets of more than 65536 hashes allocate theirs on
// every call). Its tables take about 150 C bytes (19 KiB for K = 128,
// 600 KiB for K = 4096), and each pooled scratch 32 KiB plus 20 bytes per
// hash.
type Dart struct {
	k    int
	s1   uint64 // element stream seed: (x ^ s1) * s2
	s2   uint64
	geo  geometric
	pool sync.Pool // of *dartScratch
}

// NewDart returns a Dart sketch with k values (1..MaxDartK).
func NewDart(k int, seed uint64) (*Dart, error) {
	if k < 1 || k > MaxDartK {
		return nil, fmt.Errorf("minhash: Dart K = %d, want 1..%d: %w", k, MaxDartK, ErrInvalidK)
	}
	g := splitmix64{seed}
	d := &Dart{k: k, geo: newGeometric(k)}
	d.s1, d.s2 = g.next(), g.next()|1
	return d, nil
}

// K returns the signature length.
func (d *Dart) K() int { return d.k }

// golden is the increment of the element streams (splitmix64's).
const golden = 0x9e3779b97f4a7c15

// mixKey is the constant of mix64 (wyrand's).
const mixKey = 0xe7037ed1a0b428db

// mix64 is the output function of the element streams.
func mix64(z uint64) uint64 {
	hi, lo := bits.Mul64(z, z^mixKey)
	return hi ^ lo
}

// A pending point is packed in a uint64 as tie<<32 | virtual<<31 | c. Its
// merge key, the point rotated by 32 bits, is virtual<<63 | c<<32 | tie:
// points of one column compare by round, then tie, and virtual points
// compare above emptyKey, the key of an empty column, so they are never
// merged.
const (
	cellMask = 1<<31 - 1
	virtual  = 1 << 31
	emptyKey = 1<<63 - 1
)

// maxCell bounds the cells a slab may reach (c has 31 bits, and a pending
// point is at most M+1 cells past the end of its slab).
const maxCell = 1<<31 - 1<<20

// tailLog2 sets M, the least g with thr[g] below 2^(64-tailLog2): a draw
// skips M cells with probability about 2^-tailLog2. The guide then needs
// about 2^tailLog2 C buckets.
const tailLog2 = 4

// geometric holds the tables of the gap sampler for C columns.
type geometric struct {
	cols  uint64   // C, K rounded up to a power of two
	thr   []uint64 // thr[g] = 2^64 (1-1/C)^(g+1) rounded to a multiple of 2^32, + g; g < M
	tail  uint64   // thr[M-1]: u < tail means G >= M
	m     uint64   // M
	guide []uint64 // by u >> shift: the threshold in the bucket, or the least gap below it
	shift uint     // 64 - guide bits
}

// newGeometric builds the sampler for K = k (k >= 2).
//
// G is the least g with u >= thr[g]. The guide has 2^B buckets, u >> (64-B);
// B is the least number of bits with at most one threshold per bucket
// above tail. Let g0 be the least g whose threshold is at or below the top
// of a bucket: the bucket's entry is thr[g0] if that is in the bucket
// (its low 32 bits are g0), else g0; either way G = g0 + (u < entry), g0
// being the entry's low 32 bits. Buckets at or below tail hold M-1, so
// that any u < tail advances M cells, as a virtual point.
func newGeometric(k int) geometric {
	cols := uint64(1) << bits.Len(uint(k-1))
	g := geometric{cols: cols}
	if cols == 1 {
		return g // K = 1 is computed without the sampler
	}
	// x = 2^128 (1-1/C)^(g+1) in 128-bit fixed point (hi, lo), computed as
	// x - ceil(x/C) at each step: the error, at most g+1 units, is far
	// below 2^96, the unit of the rounding to a multiple of 2^32.
	logC := uint(bits.TrailingZeros64(cols))
	hi, lo := -(uint64(1) << (64 - logC)), uint64(0) // x = 2^128 (1-1/C)
	for {
		t := (hi + 1<<31) >> 32 << 32 // x/2^64 rounded to a multiple of 2^32
		if t < 1<<(64-tailLog2) {
			break
		}
		g.thr = append(g.thr, t+uint64(len(g.thr)))  // + g, the entry's low bits
		qhi, qlo := hi>>logC, lo>>logC|hi<<(64-logC) // q = ceil(x/C)
		if lo<<(64-logC) != 0 {
			var carry uint64
			qlo, carry = bits.Add64(qlo, 1, 0)
			qhi += carry
		}
		var borrow uint64
		lo, borrow = bits.Sub64(lo, qlo, 0)
		hi -= qhi + borrow
	}
	g.m = uint64(len(g.thr))
	g.tail = g.thr[g.m-1]
	// Thresholds above tail are at least 2^(64-tailLog2)/C apart: with
	// B = log2 C + tailLog2 bits, no bucket holds two of them.
	for b := uint(bits.Len64(cols)) - 1 + tailLog2; ; b++ {
		if guide, ok := buildGuide(g.thr, b); ok {
			g.guide, g.shift = guide, 64-b
			return g
		}
	}
}

// buildGuide returns the guide with 2^b buckets, or false if a bucket above
// tail holds two thresholds.
func buildGuide(thr []uint64, b uint) ([]uint64, bool) {
	m := len(thr)
	guide := make([]uint64, 1<<b)
	w := 64 - b
	g0 := 0
	for i := len(guide) - 1; i >= 0; i-- {
		lo := uint64(i) << w
		hi := lo | (1<<w - 1)
		for g0 < m && thr[g0] > hi {
			g0++
		}
		if g0 >= m-1 { // at or below tail
			guide[i] = uint64(m - 1)
			continue
		}
		if thr[g0] >= lo {
			if thr[g0+1] >= lo {
				return nil, false
			}
			guide[i] = thr[g0] // its low 32 bits are g0
		} else {
			guide[i] = uint64(g0)
		}
	}
	return guide, true
}

// elem is an element's state: the state of its stream (the last s_i drawn)
// and its pending point, the next one not yet merged. Lists of elements
// hold their offsets in a []elem, elemSize times their index.
type elem struct{ s, pt uint64 }

const elemSize = 16

// dartScratch is Sketch's working memory.
type dartScratch struct {
	el   []elem
	act  []uint32 // offsets (16 i) of the elements el[i] whose pending point is in the slab
	mins [MaxDartK]uint64
}

// maxPooledN is the largest set whose scratch is kept in the pool.
const maxPooledN = 1 << 16

// Sketch returns the signature of the set of hashes (repeats allowed),
// reusing dst. It returns dst[:0] when hashes is empty, and panics for
// 2^28 hashes or more.
func (d *Dart) Sketch(dst Signature, hashes []uint64) Signature {
	n := len(hashes)
	if n == 0 {
		return dst[:0]
	}
	if n >= 1<<28 { // act holds 32-bit offsets into el
		panic(fmt.Sprintf("minhash: Dart sketch of %d hashes", n))
	}
	sig := resize(dst, d.k)
	if d.k == 1 {
		// C = 1: every cell is occupied, the first point of every element
		// is in cell 0.
		m := ^uint32(0)
		for _, x := range hashes {
			m = min(m, uint32(mix64((x^d.s1)*d.s2+golden)))
		}
		sig[0] = m
		return sig
	}
	sc, _ := d.pool.Get().(*dartScratch)
	if sc == nil {
		sc = new(dartScratch)
	}
	el, act := sc.el, sc.act
	if cap(el) < n {
		el, act = make([]elem, n), make([]uint32, n)
		if n <= maxPooledN {
			sc.el, sc.act = el, act
		}
	}
	d.sketch(sig, hashes, el[:n], act[:n], &sc.mins)
	d.pool.Put(sc)
	return sig
}

// kernel is what the inner loops read. The assembly kernels read p by
// the indices below.
type kernel struct {
	guide []uint64
	mins  *[MaxDartK]uint64
	p     [kParams]uint64
}

// Indices in kernel.p.
const (
	kGolden = iota // golden
	kMixKey        // mixKey
	kTail          // geometric.tail
	kMask          // C-1
	kEnd           // end of the slab (a cell)
	kShift         // geometric.shift
	kS1            // Dart.s1
	kS2            // Dart.s2
	kParams
)

// sketch computes the signature of the n = len(hashes) elements into sig.
func (d *Dart) sketch(sig Signature, hashes []uint64, el []elem, act []uint32, mins *[MaxDartK]uint64) {
	n := len(hashes)
	geo := &d.geo
	cols := geo.cols
	for j := range mins[:cols] {
		mins[j] = emptyKey
	}
	end := d.firstEnd(n)
	kn := &kernel{guide: geo.guide, mins: mins}
	kn.p = [kParams]uint64{
		kGolden: golden, kMixKey: mixKey,
		kTail: geo.tail, kMask: cols - 1, kEnd: end, kShift: uint64(geo.shift),
		kS1: d.s1, kS2: d.s2,
	}
	na := kn.start(el, act, hashes)
	for {
		if n < depthFirstBelow {
			kn.slab(el, act[:na])
		} else {
			for na > 0 {
				na = kn.pass(el, act[:na])
			}
		}
		end = d.nextEnd(end, mins[:d.k], n)
		if end == 0 {
			break
		}
		if end > maxCell {
			panic("minhash: Dart ran past 2^31 cells") // probability < 2^-1000
		}
		kn.p[kEnd] = end
		na = 0
		for i := range el {
			act[na] = uint32(i) * elemSize
			_, in := bits.Sub64(el[i].pt&cellMask, end, 0)
			na += int(in)
		}
	}
	for j := range sig {
		sig[j] = uint32(mins[j])
	}
}

// start seeds every element's stream and draws its first point; it lists
// in act the elements whose point is in the first slab and returns their
// number.
func (kn *kernel) start(el []elem, act []uint32, hashes []uint64) int {
	if useAsm {
		return dartStartAMD64(&el[0], &act[0], &hashes[0], len(hashes), &kn.guide[0], &kn.p)
	}
	return kn.startGo(el, act, hashes)
}

// pass merges the pending point of every listed element into the column
// minima and draws the element's next point; it keeps in act the elements
// whose new point is still in the slab and returns their number.
func (kn *kernel) pass(el []elem, act []uint32) int {
	if useAsm {
		return dartPassAMD64(&el[0], &act[0], len(act), &kn.mins[0], &kn.guide[0], &kn.p)
	}
	return kn.passGo(el, act)
}

// depthFirstBelow is the set size below which a slab is run element by
// element (slab) rather than pass by pass. With few elements, each has
// many points in a slab, and a loop per element, with its state in
// registers, beats passes over short lists; with many, each element has a
// few points and the loop's exit is mispredicted about once per element.
// Measured with the assembly kernels on sets never seen before (seen sets
// train the branch predictor), time relative to passes: 0.25 at 1 hash,
// 0.7 at 16, 0.9 at 72, 1.08 at 96, 1.6 at 300.
const depthFirstBelow = 80

// slab merges every point in the slab of the listed elements, one element
// at a time: the same points as repeated passes, in another order
// (merging takes minima, so the order does not matter).
func (kn *kernel) slab(el []elem, act []uint32) {
	if len(act) == 0 {
		return
	}
	if useAsm {
		dartSlabAMD64(&el[0], &act[0], len(act), &kn.mins[0], &kn.guide[0], &kn.p)
		return
	}
	kn.slabGo(el, act)
}

// slabGo is slab in Go.
func (kn *kernel) slabGo(el []elem, act []uint32) {
	mask, end, tail, shift := kn.p[kMask]&(MaxDartK-1), kn.p[kEnd], kn.p[kTail], kn.p[kShift]&63
	guide, mins := kn.guide, kn.mins
	for _, off := range act {
		e := &el[off/elemSize]
		s, pt := e.s, e.pt
		c := pt & cellMask
		for {
			col := pt & mask
			mins[col] = min(mins[col], bits.RotateLeft64(pt, 32))
			s += golden
			u := mix64(s)
			g := guide[u>>shift]
			_, b := bits.Sub64(u, g, 0)
			c += g&0xffffffff + 1 + b
			_, v := bits.Sub64(u, tail, 0)
			pt = u<<32 | v*virtual | c
			if c >= end {
				break
			}
		}
		e.s, e.pt = s, pt
	}
}

// startGo is start in Go.
func (kn *kernel) startGo(el []elem, act []uint32, hashes []uint64) int {
	s1, s2, tail, end, shift := kn.p[kS1], kn.p[kS2], kn.p[kTail], kn.p[kEnd], kn.p[kShift]&63
	na := 0
	el = el[:len(hashes)]
	for i, x := range hashes {
		s := (x^s1)*s2 + golden
		u := mix64(s)
		g := kn.guide[u>>shift]
		_, b := bits.Sub64(u, g, 0)
		c := g&0xffffffff + b // from cell -1, the point is in cell G
		act[na] = uint32(i) * elemSize
		_, in := bits.Sub64(c, end, 0)
		na += int(in)
		_, v := bits.Sub64(u, tail, 0)
		el[i] = elem{s, u<<32 | v*virtual | c}
	}
	return na
}

// passGo is pass in Go.
func (kn *kernel) passGo(el []elem, act []uint32) int {
	nn := 0
	for _, off := range act {
		e := &el[off/elemSize]
		pt := e.pt
		col := pt & kn.p[kMask] & (MaxDartK - 1)
		kn.mins[col] = min(kn.mins[col], bits.RotateLeft64(pt, 32))
		c := pt & cellMask
		e.s += golden
		u := mix64(e.s)
		g := kn.guide[u>>(kn.p[kShift]&63)]
		_, b := bits.Sub64(u, g, 0)
		c += g&0xffffffff + 1 + b
		act[nn] = off
		_, in := bits.Sub64(c, kn.p[kEnd], 0)
		nn += int(in)
		_, v := bits.Sub64(u, kn.p[kTail], 0)
		e.pt = u<<32 | v*virtual | c
	}
	return nn
}

// firstEnd returns the end of the first slab for n elements: after column
// K-1 of round l-1, l being about C ln K / n rounds and at least 1. A
// column stays empty through a round with probability (1-1/C)^n, about
// e^(-n/C), so about one column of K is expected to be empty after l.
func (d *Dart) firstEnd(n int) uint64 {
	cols := int(d.geo.cols)
	l := (cols*bits.Len(uint(d.k))*11/16 + n/2) / n
	return uint64(max(l, 1)-1)*uint64(cols) + uint64(d.k)
}

// nextEnd returns the end of the slab after the one that ended at end,
// given the column minima (emptyKey when empty), or 0 if no column is
// empty. The new slab covers l more cells of every empty column, l
// predicted from n and the number of empty columns: it ends after the l-th
// next cell of the empty column that comes last from end on.
func (d *Dart) nextEnd(end uint64, mins []uint64, n int) uint64 {
	cols := d.geo.cols
	r, j := end/cols, int(end%cols)
	empty := 0
	for _, m := range mins {
		empty += int((m + 1) >> 63) // m == emptyKey, the largest minimum
	}
	if empty == 0 {
		return 0
	}
	last, wrap := -1, uint64(1) // the empty column that comes last; +1 round if below j
	for c := min(j, len(mins)) - 1; c >= 0 && last < 0; c-- {
		if mins[c] == emptyKey {
			last = c
		}
	}
	if last < 0 {
		wrap = 0
		for c := len(mins) - 1; last < 0; c-- {
			if mins[c] == emptyKey {
				last = c
			}
		}
	}
	l := uint64(max((int(cols)*bits.Len(uint(empty))*11/16+n/2)/n, 1))
	return (r+l-1+wrap)*cols + uint64(last+1)
}
