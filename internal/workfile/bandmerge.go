package workfile

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/neardup/neardup/pkg/records"
)

// BandMerge merges sorted lists of band records in CompareBand's order,
// stable as Merge is (records that compare equal come in the order of
// their lists), checking that each list is in order: a list out of order
// is an error naming it, not a wrong result.
//
// It is Merge over such lists specialised to band records, kept for its
// speed on the reduce stage's hot path, where Merge's calls of its
// comparison and its sources' Next were a quarter of the stage's CPU at
// 10M documents (docs/performance.md): each list's current record is a
// 256-bit key compared without a call or a branch (as EdgeMerger's).
type BandMerge struct {
	lists [][]records.BandRecord
	names []string
	pos   []int
	keys  []bandKey // each list's current record's; overBandKey once it is over
	// tree[0] is the list of the least current record; tree[n], for n in
	// 1..len(lists)-1, the list that lost the match at node n, whose
	// children are 2n and 2n+1: node len(lists)+i is list i.
	tree []int
}

// bandKey is a record of list src as one 256-bit number, (band, key, doc,
// src) from the most significant word, each flipped to order as its signed
// value: keys order as CompareBand orders their records, then by list.
type bandKey struct{ band, key, doc, src uint64 }

func bandKeyOf(r *records.BandRecord, src int) bandKey {
	return bandKey{uint64(uint32(r.Band) ^ 1<<31), uint64(r.Key) ^ 1<<63, uint64(r.Doc) ^ 1<<63, uint64(src)}
}

// overBandKey is the key of a list that is over: above every record's,
// whose band word is at most 2^32-1.
func overBandKey() bandKey {
	return bandKey{math.MaxUint64, math.MaxUint64, math.MaxUint64, math.MaxUint64}
}

// before reports whether x < y, by subtraction with borrow.
func (x bandKey) before(y bandKey) bool {
	_, c := bits.Sub64(x.src, y.src, 0)
	_, c = bits.Sub64(x.doc, y.doc, c)
	_, c = bits.Sub64(x.key, y.key, c)
	_, c = bits.Sub64(x.band, y.band, c)
	return c != 0
}

// NewBandMerge merges lists, whose names the errors give.
func NewBandMerge(lists [][]records.BandRecord, names []string) *BandMerge {
	m := &BandMerge{lists: lists, names: names, pos: make([]int, len(lists)), keys: make([]bandKey, len(lists)), tree: make([]int, len(lists))}
	for i, l := range lists {
		m.keys[i] = overBandKey()
		if len(l) > 0 {
			m.keys[i] = bandKeyOf(&l[0], i)
		}
	}
	playLosers(m.tree, func(x, y int) bool { return m.keys[x].before(m.keys[y]) })
	return m
}

// Next returns the least record not yet returned; ok is false when none
// is left. A list whose next record comes before the one it follows is
// an error.
func (m *BandMerge) Next() (rec records.BandRecord, ok bool, err error) {
	if len(m.lists) == 0 {
		return rec, false, nil
	}
	w := m.tree[0]
	l, p := m.lists[w], m.pos[w]
	if p == len(l) {
		return rec, false, nil
	}
	rec = l[p]
	p++
	m.pos[w] = p
	key := overBandKey()
	if p < len(l) {
		if CompareBand(l[p], rec) < 0 {
			return records.BandRecord{}, false, fmt.Errorf("%s: band file not sorted at record %+v", m.names[w], l[p])
		}
		key = bandKeyOf(&l[p], w)
	}
	m.keys[w] = key
	// The list's next record plays the matches on its way up.
	for n := (w + len(m.lists)) / 2; n > 0; n /= 2 {
		if t := m.tree[n]; m.keys[t].before(key) {
			m.tree[n], w, key = w, t, m.keys[t]
		}
	}
	m.tree[0] = w
	return rec, true, nil
}
