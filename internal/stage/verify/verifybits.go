package verify

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/records"
	"github.com/neardup/neardup/pkg/shingle"
)

// bitSets gives the documents compared often in a verify task their
// shingle sets as shingle.Bits, relabeled by one dictionary (see
// shingle.Relabeler), so that a pair's common shingles are counted a
// word of 64 ids at a time: a hundred-odd steps for two pages of a
// template family, against thousands for a merge of their hashes
// (shingle.Intersection). A pair is counted by its Bits when both
// documents have them.
//
// Relabeling a set costs about as much as merging it twenty times, so a
// document is relabeled when it takes part in at least minDegree pairs of
// its block, or when its pairs with documents that have Bits would save
// more than relabeling it costs (see worth): the pages of a template
// family, every two of them a candidate pair, are; the documents of a
// sparse corpus, in about one pair each, keep the merge. (The connected
// components of a judgeEdges call's pairs, weighed the same way, would
// miss many: in the templated corpus at 0.5 a call holds about 20 pairs
// a document, under the 25 that pay, and a block a hundred-odd for a
// page of a family.)
//
// The dictionary and the documents' Bits (about a twelfth of their sets'
// memory, for template pages) outlive a block and the task's cache: a
// document is relabeled once, however many windows pair it and however
// often it is loaded. The cache keeps a document with Bits without its
// set (see sigCache.settle); a pair that needs the set (a partner without
// Bits, a new dictionary) has it loaded again first (a setFiller), and a
// document paired with one whose set was dropped is worth relabeling for
// the load it saves (see worth). When the dictionary holds more than
// maxValues values, or the Bits more than maxBytes, both start again.
type bitSets struct {
	shards    []relabelShard
	byDoc     map[int64]shingle.Bits // by document ordinal
	bytes     int                    // held by byDoc
	maxValues int
	maxBytes  int
}

// relabelShard relabels the values of one range of the sets: the
// dictionary is cut by the values' top bits into shards relabeled at
// once, each shard's ids a range of their own.
type relabelShard struct {
	rl   shingle.Relabeler
	bits shingle.Bits // of the sets being relabeled, one after the other
	ends []bitsEnd    // where each set's end
}

// bitsEnd is where the Bits of a set end in those of several.
type bitsEnd struct{ runs, words int }

// newBitSets returns the bitSets of a verify task whose dictionary is
// relabeled by up to parts goroutines at once: a dictionary of up to
// about 2^20 values (tables of 2^21 slots of 16 bytes, 32 MiB, in all,
// and each shard's references, at most 12 bytes a value relabeled and 6
// MiB: see shingle.Relabeler) and Bits of up to 32 MiB (those of about
// 30,000 pages of 2,000 words of template families). Each is passed by at
// most one window's documents.
func newBitSets(parts int) *bitSets {
	shards := 1
	for 2*shards <= min(parts, maxShards) {
		shards *= 2
	}
	return &bitSets{shards: make([]relabelShard, shards), maxValues: 1 << 20, maxBytes: 32 << 20}
}

// shardKeyBits is the bits of the keys (ids/64) of a shard, whose keys
// are offset by shard<<shardKeyBits: a shard holds at most 2^32 ids.
const shardKeyBits = 32 - 6

// maxShards bounds the shards of a dictionary.
const maxShards = 1 << (32 - shardKeyBits)

// The costs that decide how a pair is counted, in nanoseconds, measured
// by shingle's BenchmarkIntersection, BenchmarkRelabel and
// BenchmarkBitsIntersection (and on the sets of a verify task of the
// templated corpus at 0.5): a merge takes 0.9 to 1.4 ns a value of the
// two sets, relabeling 20 ns a value (19 to 25 on the templated task's
// sets), BitsIntersection 4.7 ns a run and 0.6 ns a word. Comparing the
// Bits of two template pages costs about a tenth of merging their sets
// (300 to 400 ns against 3.8 µs on the templated task's); a document is
// relabeled counting on at most bitsShare. Loading a document again (its
// text decoded and sketched again) takes about 35 µs for the templated
// corpus's pages of 1,800 shingles: 20 ns a value.
const (
	mergeNs   = 1.0
	relabelNs = 20.0
	runNs     = 5.0
	loadNs    = 20.0
	wordNs    = 0.6
	bitsShare = 0.2
)

// minDegree is the least comparisons a document is relabeled for (25):
// each saves (1-bitsShare) of the merge of its set, in the pair's two.
const minDegree = relabelNs / ((1 - bitsShare) * mergeNs)

// blockDegrees counts the candidate pairs of each document of a block's
// edges (not its group claims).
func blockDegrees(edges []records.Candidate) map[int64]int32 {
	deg := make(map[int64]int32)
	for _, e := range edges {
		if e.Band != workfile.ClaimBand {
			deg[e.A]++
			deg[e.B]++
		}
	}
	return deg
}

// prepare returns the Bits of the documents of the edges xs (in parts)
// that have them, and relabels those worth it (see worth) given the
// pairs of their block, deg, after fill loaded again the dropped sets the
// edges need: of the documents to relabel, and of both documents of a
// pair that its Bits cannot count.
func (bs *bitSets) prepare(ctx context.Context, xs [][]exactEdge, deg map[int64]int32, fill setFiller) (*edgeBits, error) {
	if bs == nil {
		return &edgeBits{}, nil
	}
	nd := numberDocs(xs)
	eb := &edgeBits{ends: nd.ends, docs: make([]shingle.Bits, len(nd.docs))}
	if bs.byDoc == nil || bs.values() > bs.maxValues || bs.bytes > bs.maxBytes {
		// A new dictionary: every document is to be relabeled again.
		for k := range bs.shards {
			bs.shards[k].rl.Reset(0, bits.TrailingZeros(uint(len(bs.shards))))
		}
		bs.byDoc, bs.bytes = map[int64]shingle.Bits{}, 0
	}
	has := make([]bool, len(nd.docs))
	for i, id := range nd.ids {
		eb.docs[i], has[i] = bs.byDoc[id]
	}
	fresh := nd.worth(has, deg)
	if err := fill(ctx, nd.setsNeeded(has, fresh)); err != nil {
		return nil, err
	}
	if len(fresh) == 0 {
		return eb, nil
	}
	sets := make([][]uint64, len(fresh))
	for k, i := range fresh {
		if nd.docs[i].dropped() {
			return nil, fmt.Errorf("relabeling document %d: %w", nd.ids[i], errDropped)
		}
		sets[k] = nd.docs[i].set
	}
	relabeled, err := bs.relabel(ctx, sets)
	if err != nil {
		return nil, err
	}
	for k, i := range fresh {
		eb.docs[i] = relabeled[k]
		bs.byDoc[nd.ids[i]] = relabeled[k]
		bs.bytes += 8*len(relabeled[k].Runs) + 8*len(relabeled[k].Words) + 64
	}
	return eb, nil
}

// setFiller loads again the sets the entries of docs dropped (see
// blockJudge.fill).
type setFiller func(ctx context.Context, docs map[int64]*sigEntry) error

// errDropped is a pair judged, or a set relabeled, without the shingle
// set its entry dropped: a fault of verify's, not of the data.
var errDropped = errors.New("a shingle set dropped from the cache was not loaded again")

// has reports whether doc has Bits in the dictionary.
func (bs *bitSets) has(doc int64) bool {
	if bs == nil {
		return false
	}
	_, ok := bs.byDoc[doc]
	return ok
}

// values returns the number of values the dictionary holds.
func (bs *bitSets) values() int {
	n := 0
	for k := range bs.shards {
		n += bs.shards[k].rl.Len()
	}
	return n
}

// relabel returns the Bits of sets, in order, relabeled by the shards at
// once: shard k relabels, in each set, the values whose top bits are k.
func (bs *bitSets) relabel(ctx context.Context, sets [][]uint64) ([]shingle.Bits, error) {
	n := len(bs.shards)
	shift := uint(64 - bits.TrailingZeros(uint(n))) // a value's shard is v>>shift
	err := inParts(ctx, n, n, 1, func(_ context.Context, _, lo, hi int) error {
		for k := lo; k < hi; k++ {
			sh := &bs.shards[k]
			sh.bits = shingle.Bits{Runs: sh.bits.Runs[:0], Words: sh.bits.Words[:0]}
			sh.ends = sh.ends[:0]
			for _, s := range sets {
				from, _ := slices.BinarySearch(s, uint64(k)<<shift)
				to := len(s)
				if k+1 < n {
					to, _ = slices.BinarySearch(s, uint64(k+1)<<shift)
				}
				sh.bits = sh.rl.Append(sh.bits, s[from:to])
				sh.ends = append(sh.ends, bitsEnd{len(sh.bits.Runs), len(sh.bits.Words)})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]shingle.Bits, len(sets))
	for i := range out {
		out[i] = bs.joined(i)
	}
	return out, nil
}

// joined returns the Bits of the i-th set the shards relabeled: theirs,
// one after the other, each shard's keys offset.
func (bs *bitSets) joined(i int) shingle.Bits {
	var size bitsEnd
	for k := range bs.shards {
		from, to := bs.shards[k].start(i), bs.shards[k].ends[i]
		size.runs += to.runs - from.runs
		size.words += to.words - from.words
	}
	b := shingle.Bits{Runs: make([]shingle.BitsRun, 0, size.runs), Words: make([]uint64, 0, size.words)}
	for k := range bs.shards {
		sh := &bs.shards[k]
		from, to := sh.start(i), sh.ends[i]
		for _, run := range sh.bits.Runs[from.runs:to.runs] {
			run.Start |= uint32(k) << shardKeyBits
			b.Runs = append(b.Runs, run)
		}
		b.Words = append(b.Words, sh.bits.Words[from.words:to.words]...)
	}
	return b
}

// start returns where the Bits of set i start in the shard's.
func (sh *relabelShard) start(i int) bitsEnd {
	if i == 0 {
		return bitsEnd{}
	}
	return sh.ends[i-1]
}

// edgeBits holds the Bits of the documents of a judgeEdges call's edges
// that need their exact similarity, those that have them.
type edgeBits struct {
	docs []shingle.Bits // by number (see numberDocs); none without a bitSets
	ends [][2]int32     // the edges' documents' numbers
}

// intersection returns the number of shingles the documents of x, the
// k-th edge, have in common: from their Bits when both have them and
// comparing them costs less than merging the sets (or a set was
// dropped), else by merging the sets.
func (eb *edgeBits) intersection(k int, x exactEdge) (int, error) {
	if x.a.n == 0 || x.b.n == 0 {
		return 0, nil
	}
	dropped := x.a.dropped() || x.b.dropped()
	if eb.docs != nil {
		a, b := eb.docs[eb.ends[k][0]], eb.docs[eb.ends[k][1]]
		if len(a.Runs) > 0 && len(b.Runs) > 0 && (dropped || bitsCost(a, b) < mergeNs*float64(x.a.n+x.b.n)) {
			return shingle.BitsIntersection(a, b), nil
		}
	}
	if dropped {
		return 0, fmt.Errorf("candidate %d and %d: %w", x.e.A, x.e.B, errDropped)
	}
	return shingle.Intersection(x.a.set, x.b.set), nil
}

// bitsCost bounds the cost of shingle.BitsIntersection(a, b), in
// nanoseconds: a turn a run, an AND a word of the smaller.
func bitsCost(a, b shingle.Bits) float64 {
	return runNs*float64(len(a.Runs)+len(b.Runs)) + wordNs*float64(min(len(a.Words), len(b.Words)))
}

// docNumbers numbers the documents of edges in order of appearance.
type docNumbers struct {
	docs []*sigEntry
	ids  []int64    // the documents' ordinals
	ends [][2]int32 // the edges' documents' numbers
}

func numberDocs(xs [][]exactEdge) *docNumbers {
	nd := &docNumbers{}
	num := make(map[int64]int32)
	number := func(id int64, d *sigEntry) int32 {
		i, ok := num[id]
		if !ok {
			i = int32(len(nd.docs))
			num[id] = i
			nd.docs = append(nd.docs, d)
			nd.ids = append(nd.ids, id)
		}
		return i
	}
	for _, part := range xs {
		for _, x := range part {
			nd.ends = append(nd.ends, [2]int32{number(x.e.A, x.a), number(x.e.B, x.b)})
		}
	}
	return nd
}

// setsNeeded returns the documents whose sets the edges need: those to
// relabel (fresh), and both of a pair but one of which has Bits (has) or
// gets them.
func (nd *docNumbers) setsNeeded(has []bool, fresh []int) map[int64]*sigEntry {
	gets := slices.Clone(has)
	for _, i := range fresh {
		gets[i] = true
	}
	need := map[int64]*sigEntry{}
	for _, i := range fresh {
		need[nd.ids[i]] = nd.docs[i]
	}
	for _, e := range nd.ends {
		if a, b := e[0], e[1]; !gets[a] || !gets[b] {
			need[nd.ids[a]], need[nd.ids[b]] = nd.docs[a], nd.docs[b]
		}
	}
	return need
}

// fillCost is what loading again the set of document i costs if it was
// dropped (see sigCache.settle), which relabeling a document it is paired
// with saves.
func (nd *docNumbers) fillCost(i int32) float64 {
	if !nd.docs[i].dropped() {
		return 0
	}
	return loadNs * float64(nd.docs[i].n)
}

// worth returns, in order, the numbers of the documents without Bits
// (has) worth relabeling: those that take part in at least minDegree
// pairs of their block (deg), and those whose pairs with documents that
// have Bits or get them would save more than relabeling them costs, a
// pair with a document whose set was dropped the load of that set too.
// (A page of a template family paired in a window with the block's pages
// of its family has a dozen pairs there, those a hundred-odd each; a page
// paired with one dropped page of its family is worth it.)
func (nd *docNumbers) worth(has []bool, deg map[int64]int32) []int {
	gets := make([]bool, len(nd.docs))
	for i, id := range nd.ids {
		gets[i] = !has[i] && float64(deg[id]) >= minDegree
	}
	gain := make([]float64, len(nd.docs))
	for _, e := range nd.ends {
		a, b := e[0], e[1]
		v := (1 - bitsShare) * mergeNs * float64(nd.docs[a].n+nd.docs[b].n)
		if has[a] || gets[a] {
			gain[b] += v + nd.fillCost(a)
		}
		if has[b] || gets[b] {
			gain[a] += v + nd.fillCost(b)
		}
	}
	var out []int
	for i, d := range nd.docs {
		if gets[i] || !has[i] && gain[i] >= relabelNs*float64(d.n) {
			out = append(out, i)
		}
	}
	return out
}
