package verify

import (
	"cmp"
	"slices"
)

// verifyWindowDocs bounds the first documents of a block of edges, and
// the second documents of a window of the block, whose signatures (and
// shingle sets) a verify task holds at once.
const verifyWindowDocs = 1 << 12

// verifyBlockEdges bounds the edges of a block.
const verifyBlockEdges = 1 << 18

// verifyCacheBytes bounds the entries a verify task keeps from earlier
// windows (see sigCache).
const verifyCacheBytes = 64 << 20

// sigCache keeps what a verify task loaded for its earlier windows, up to
// a budget of bytes, the least recently used going first: a document
// paired in many windows (a page of a large template family, in every
// window of its family's first documents) is read, and from a text store
// re-sketched, once while it fits, not once a window. A document whose
// pairs its set's Bits count (see bitSets) is kept without its set once
// its window is judged (see settle): a tenth of the bytes for a page of
// 2,000 words, so that the task's template pages all fit where a few
// thousand did, and its set is loaded again only for the pairs that need
// it (see blockJudge.fill).
type sigCache struct {
	budget, bytes int64
	window        int // the number of the window being loaded
	entries       map[int64]*cachedSig
}

type cachedSig struct {
	e    *sigEntry
	used int // the last window that needed it
	size int64
}

func newSigCache(budget int64) *sigCache {
	return &sigCache{budget: budget, entries: map[int64]*cachedSig{}}
}

// get returns the cached entry of doc, marked used by this window.
func (c *sigCache) get(doc int64) *sigEntry {
	ce, ok := c.entries[doc]
	if !ok {
		return nil
	}
	ce.used = c.window
	return ce.e
}

func (c *sigCache) add(doc int64, e *sigEntry) {
	size := entryBytes(e)
	c.entries[doc] = &cachedSig{e: e, used: c.window, size: size}
	c.bytes += size
}

// entryBytes is about the memory of e.
func entryBytes(e *sigEntry) int64 {
	return int64(8*len(e.set)+8*len(e.sig.MinHash)+8*len(e.keys)+len(e.id)+len(e.url)) + 128
}

// settle drops the sets of the entries of docs, a window's documents just
// judged, whose pairs the Bits of their sets count (hasBits), and counts
// again the bytes of those cached (a set loaded again by fill counts
// until it is dropped).
func (c *sigCache) settle(docs map[int64]*sigEntry, hasBits func(doc int64) bool) {
	for doc, e := range docs {
		if e.n > 0 && e.set != nil && hasBits(doc) {
			e.set = nil
		}
		if ce, ok := c.entries[doc]; ok && ce.e == e {
			size := entryBytes(e)
			c.bytes += size - ce.size
			ce.size = size
		}
	}
}

// next ends a window, once judged (and its entries settled): over the
// budget, entries go, those of earlier windows first, of them those that
// hold their sets (the bytes of a dozen without), and the least recently
// used first. (During a window, its own entries are all held whatever
// the budget: the window bounds them.) The budget is at least twice the
// window's own entries, so that a window of long documents (a template
// family's pages, whose sets alone can fill the budget) still keeps
// those the next windows meet again.
func (c *sigCache) next() {
	var own int64
	for _, ce := range c.entries {
		if ce.used == c.window {
			own += ce.size
		}
	}
	if budget := max(c.budget, 2*own); c.bytes > budget {
		// The order's keys copied out, so that the sort reads no map.
		old := make([]evictKey, 0, len(c.entries))
		for doc, ce := range c.entries {
			old = append(old, evictKey{rank: c.rank(ce), used: ce.used, doc: doc, size: ce.size})
		}
		slices.SortFunc(old, func(x, y evictKey) int {
			return cmp.Or(cmp.Compare(x.rank, y.rank), cmp.Compare(x.used, y.used), cmp.Compare(x.doc, y.doc))
		})
		for _, k := range old {
			if c.bytes <= budget {
				break
			}
			c.bytes -= k.size
			delete(c.entries, k.doc)
		}
	}
	c.window++
}

// evictKey is an entry's place in the order entries go in (next).
type evictKey struct {
	rank, used int
	doc, size  int64
}

// rank orders the entries that go over the budget: of earlier windows,
// those that hold their sets (0), then the others (1); the window's own
// last (2).
func (c *sigCache) rank(ce *cachedSig) int {
	switch {
	case ce.used == c.window:
		return 2
	case ce.e.set == nil:
		return 1
	}
	return 0
}
