package shingle

import (
	"math"
	"math/bits"
	"slices"
)

// Bits is a set of small integers held as runs of 64-bit words: bit j
// of the word of key k is set when 64·k+j is in the set. Run i holds the
// words of keys Runs[i].Start to Runs[i].Start+Runs[i].Len-1, and the
// runs' words follow each other in Words. Runs are in increasing order
// of key, apart, and start and end with a nonzero word (a run may hold a
// few zero words, which join two runs more cheaply than a run more).
// Sets relabeled by one [Relabeler] intersect as their Bits.
type Bits struct {
	Runs  []BitsRun
	Words []uint64
}

// BitsRun is a run of words of [Bits].
type BitsRun struct {
	Start, Len uint32
}

// BitsIntersection returns |a ∩ b|: the set bits of the AND of the words
// of the keys both a and b hold, run against run. Two pages of a template
// family relabeled together are a few runs, the longest their template's,
// so their intersection takes a few dozen AND and popcounts where a merge
// of their hashes takes thousands of steps.
func BitsIntersection(a, b Bits) int {
	n := 0
	i, j, wa, wb := 0, 0, 0, 0 // runs, and their first words
	for i < len(a.Runs) && j < len(b.Runs) {
		ra, rb := a.Runs[i], b.Runs[j]
		ea, eb := ra.Start+ra.Len, rb.Start+rb.Len
		if lo, hi := max(ra.Start, rb.Start), min(ea, eb); lo < hi {
			n += andCount(a.Words[wa+int(lo-ra.Start):wa+int(hi-ra.Start)], b.Words[wb+int(lo-rb.Start):wb+int(hi-rb.Start)])
		}
		if ea <= eb {
			wa += int(ra.Len)
			i++
		}
		if eb <= ea {
			wb += int(rb.Len)
			j++
		}
	}
	return n
}

// andCount returns the set bits of the AND of x and y, of equal lengths.
func andCount(x, y []uint64) int {
	y = y[:len(x)]
	n := 0
	for k, v := range x {
		n += bits.OnesCount64(v & y[k])
	}
	return n
}

// Relabeler gives the values of a group of sets the ids 0, 1, 2, ... in
// the order it first meets them, and writes each set as the [Bits] of its
// ids: two sets of the group have as many values in common as their Bits.
// The values a set brings to the group get consecutive ids, so a set is
// few words when its values are mostly its own or shared by sets that
// brought them together: the pages of a template family hold their
// template in the words of the first page relabeled, their own text in
// words of their own.
//
// Values are looked up in an open-addressing table (linear probing, at
// most three quarters full: 21 to 43 bytes a value) placed by their top
// bits, which for shingle hashes are well mixed (as [SetSorter]
// assumes): a sorted set walks the table in order, a fifth faster on the
// sets of a template family's pages than one placed by a multiplicative
// hash. Any values are relabeled correctly; skewed ones only lose speed.
// A group holds at most 2³²-1 distinct values.
//
// A look-up is a cache miss in a large table (about 20 ns a value), so a
// set takes the ids it shares with an earlier set of the group by a merge
// with it instead (1 to 2 ns a value), and looks up the rest: Append
// keeps sets it relabeled as references, by their least value (up to
// maxRefValues values in all), and a set whose three least values name
// one is merged with it first. Sets that share most of their values
// often share their least: the pages of a template family do when the
// least value of each is its template's, near copies with the
// probability of their Jaccard similarity. The ids, and so the Bits, are
// those the look-ups alone give: a value found in a reference has the id
// the table gave it, and the others are looked up in the set's order.
type Relabeler struct {
	slots   []relabelSlot
	skip    uint     // the top bits of the values that are the group's
	shift   uint     // 64 - log2(len(slots))
	n       int      // values held, the next id
	scratch []uint64 // the words of the set being written, by key; zero between sets
	touched []uint32 // the keys of its nonzero words
	sink    uint64   // keeps the touches of Append

	refs    map[uint64]relabelRef // by the reference's least value
	refVals []uint64              // the references' values, one after the other
	refIDs  []uint32              // and their ids
	missed  []uint64              // the values of the set being written not in its reference
}

// relabelRef is a set kept as a reference: its values and their ids are
// refVals[off:off+n] and refIDs[off:off+n].
type relabelRef struct{ off, n int }

// maxRefValues bounds the values of a Relabeler's references (12 bytes
// each): a few hundred template families of 2,000-word pages.
const maxRefValues = 1 << 19

// refKeys is how many of a set's least values are tried as the key of a
// reference: a template page whose own text holds the least value or two
// finds its family's reference by the next.
const refKeys = 3

type relabelSlot struct {
	v  uint64
	id uint32 // the value's id + 1; 0: empty
}

// minRelabelSlots is the least table size.
const minRelabelSlots = 1 << 8

// Reset starts a new group, of at least hint distinct values (the table
// is sized for them and grows as needed; it is reused when not much
// larger than that), whose values share their top skip bits: a group of
// the values of one range of 2^(64-skip), as a dictionary cut in 2^skip
// shards by the values' top bits has. (The values are placed by their
// next bits.)
func (r *Relabeler) Reset(hint int, skip int) {
	size := max(minRelabelSlots, 1<<bits.Len(uint(2*hint)))
	if len(r.slots) < size || len(r.slots) > 4*size {
		r.slots = make([]relabelSlot, size)
	} else {
		clear(r.slots)
	}
	r.shift = uint(64 - bits.TrailingZeros(uint(len(r.slots))))
	r.skip = uint(skip)
	r.n = 0
	clear(r.refs)
	r.refVals, r.refIDs = r.refVals[:0], r.refIDs[:0]
}

// Len returns the number of distinct values of the group so far.
func (r *Relabeler) Len() int { return r.n }

// Append relabels set, a set of the group (repeat-free; in increasing
// order it is looked up fastest), and appends the runs and words of its
// Bits to dst.
func (r *Relabeler) Append(dst Bits, set []uint64) Bits {
	if r.slots == nil {
		r.Reset(len(set), 0)
	}
	r.touched = r.touched[:0]
	if ref, ok := r.ref(set); ok {
		r.missed = r.missed[:0]
		vals, ids := r.refVals[ref.off:ref.off+ref.n], r.refIDs[ref.off:ref.off+ref.n]
		j := 0
		for _, v := range set {
			for j < len(vals) && vals[j] < v {
				j++
			}
			if j < len(vals) && vals[j] == v {
				r.add(ids[j])
				j++
				continue
			}
			r.missed = append(r.missed, v)
		}
		r.lookUp(r.missed, false)
	} else {
		keep := len(set) > 0 && len(r.refVals)+len(set) <= maxRefValues
		r.lookUp(set, keep)
		if keep {
			if r.refs == nil {
				r.refs = make(map[uint64]relabelRef)
			}
			r.refs[set[0]] = relabelRef{off: len(r.refVals), n: len(set)}
			r.refVals = append(r.refVals, set...)
		}
	}
	// Most keys come in order already: the new values' are consecutive
	// and the shared ones' mostly those of the sets that brought them.
	slices.Sort(r.touched)
	first := len(dst.Runs) // this set's
	for _, k := range r.touched {
		if last := len(dst.Runs) - 1; last >= first {
			run := &dst.Runs[last]
			if end := run.Start + run.Len; k-end <= maxRunGap { // k >= end
				for ; end < k; end++ {
					dst.Words = append(dst.Words, 0)
				}
				run.Len = k + 1 - run.Start
				dst.Words = append(dst.Words, r.scratch[k])
				r.scratch[k] = 0
				continue
			}
		}
		dst.Runs = append(dst.Runs, BitsRun{Start: k, Len: 1})
		dst.Words = append(dst.Words, r.scratch[k])
		r.scratch[k] = 0
	}
	return dst
}

// maxRunGap is the most zero words Append puts in a run to join it to the
// next nonzero word: an AND of a zero word costs less than a run's turn
// in BitsIntersection.
const maxRunGap = 2

// relabelAhead is how many values Append touches ahead of looking them up.
const relabelAhead = 32

// ref returns the reference named by one of the least values of set, if
// any.
func (r *Relabeler) ref(set []uint64) (relabelRef, bool) {
	if len(r.refs) == 0 {
		return relabelRef{}, false
	}
	for _, v := range set[:min(refKeys, len(set))] {
		if ref, ok := r.refs[v]; ok {
			return ref, true
		}
	}
	return relabelRef{}, false
}

// lookUp adds the ids of vals to the set being written, giving new values
// the next ids in order, and appends them to refIDs when keep is set.
func (r *Relabeler) lookUp(vals []uint64, keep bool) {
	for lo := 0; lo < len(vals); lo += relabelAhead {
		part := vals[lo:min(lo+relabelAhead, len(vals))]
		// Touch the part's slots first, without a branch, so that
		// their cache misses overlap: the look-ups' branches (found at
		// the first slot, or further) stall each miss in turn.
		var x uint64
		for _, v := range part {
			x += r.slots[r.home(v)].v
		}
		r.sink += x
		for _, v := range part {
			id := r.id(v)
			r.add(id)
			if keep {
				r.refIDs = append(r.refIDs, id)
			}
		}
	}
}

// add adds id to the set being written.
func (r *Relabeler) add(id uint32) {
	k := id >> 6
	if int(k) >= len(r.scratch) {
		r.scratch = append(r.scratch, make([]uint64, int(k)+1-len(r.scratch))...)
	}
	if r.scratch[k] == 0 {
		r.touched = append(r.touched, k)
	}
	r.scratch[k] |= 1 << (id & 63)
}

// home returns the slot where the look-up of v starts: its top bits
// after the skip bits its group's values share.
func (r *Relabeler) home(v uint64) int {
	return int(v << r.skip >> r.shift)
}

// id returns the id of v, giving it the next one if it is new.
func (r *Relabeler) id(v uint64) uint32 {
	mask := len(r.slots) - 1
	for i := r.home(v); ; i = (i + 1) & mask {
		s := &r.slots[i]
		if s.id == 0 {
			if 4*(r.n+1) > 3*len(r.slots) {
				r.grow()
				return r.id(v)
			}
			if r.n == math.MaxUint32 {
				panic("shingle: a Relabeler group of more than 2^32-1 values")
			}
			r.n++
			*s = relabelSlot{v: v, id: uint32(r.n)}
			return uint32(r.n - 1)
		}
		if s.v == v {
			return s.id - 1
		}
	}
}

// grow doubles the table, keeping every value's id.
func (r *Relabeler) grow() {
	old := r.slots
	r.slots = make([]relabelSlot, 2*len(old))
	r.shift--
	mask := len(r.slots) - 1
	for _, s := range old {
		if s.id == 0 {
			continue
		}
		i := r.home(s.v)
		for r.slots[i].id != 0 {
			i = (i + 1) & mask
		}
		r.slots[i] = s
	}
}
