package rates

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/manifest"
)

// MaxHosts is how many hosts a tally holds at once (about 150 bytes each:
// 10 MB). A crawl of a billion pages has tens of millions of hosts, which
// the coordinator must not hold; up to MaxHosts every host's tally is
// exact, and beyond it the hosts are tallied by the Space-Saving
// algorithm (Metwally, Agrawal and El Abbadi, 2005): a new host takes the
// place of the one with the fewest duplicates, whose tallies go to the
// other hosts' row, and it carries that host's duplicates as its error,
// so that a host with more than Duplicates/MaxHosts duplicates of the
// job's is always listed. A listed host's tallies then count its
// documents since it last took a place: each is short of the truth by at
// most the bound the manifest gives (Rates.HostsBound).
const MaxHosts = 1 << 16

// distinctSketch is how many of the smallest host hashes estimate the
// number of distinct hosts beyond MaxHosts (k minimum values: a relative
// error of about 1/sqrt(16384), 0.8%).
const distinctSketch = 16384

// hostEntry is a listed host's tally: Rate since the host last took a
// place, err the duplicates of the host it took it from.
type hostEntry struct {
	manifest.Rate
	err  int64
	hash uint64 // of Name
	at   int    // its index in the heap
}

// rank is the host's Space-Saving count: the duplicates it may have.
func (e *hostEntry) rank() int64 { return e.Duplicates + e.err }

// heapItem is a listed host in the heap, with the keys of its order
// beside it (the heap's comparisons then read no entry).
type heapItem struct {
	rank, removed int64
	hash          uint64
	e             *hostEntry
}

// item is e's heap item.
func item(e *hostEntry) heapItem {
	return heapItem{rank: e.rank(), removed: e.BytesRemoved, hash: e.hash, e: e}
}

// less is the heap's order: by rank, fewest first, then the fewest bytes
// removed, then by the hash of the name and the name (a total order, so
// that which host gives up its place depends on the documents' order
// alone).
func less(a, b *heapItem) bool {
	switch {
	case a.rank != b.rank:
		return a.rank < b.rank
	case a.removed != b.removed:
		return a.removed < b.removed
	case a.hash != b.hash:
		return a.hash < b.hash
	}
	return a.e.Name < b.e.Name
}

// hostHeap is a min-heap of the listed hosts in that order.
type hostHeap []heapItem

// set puts x at i.
func (h hostHeap) set(i int, x heapItem) {
	h[i] = x
	x.e.at = i
}

// down moves the item at i down to its place.
func (h hostHeap) down(i int) {
	x := h[i]
	for {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if r := c + 1; r < len(h) && less(&h[r], &h[c]) {
			c = r
		}
		if !less(&h[c], &x) {
			break
		}
		h.set(i, h[c])
		i = c
	}
	h.set(i, x)
}

// up moves the item at i up to its place.
func (h hostHeap) up(i int) {
	x := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if !less(&x, &h[p]) {
			break
		}
		h.set(i, h[p])
		i = p
	}
	h.set(i, x)
}

// push adds e.
func (h *hostHeap) push(e *hostEntry) {
	*h = append(*h, item(e))
	h.up(len(*h) - 1)
}

// pop removes the least host.
func (h *hostHeap) pop() *hostEntry {
	old := *h
	least := old[0].e
	n := len(old) - 1
	old.set(0, old[n])
	old[n] = heapItem{}
	*h = old[:n]
	if n > 0 {
		h.down(0)
	}
	return least
}

// init orders h.
func (h hostHeap) init() {
	for i := range h {
		h[i].e.at = i
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// hostTally tallies documents by host in at most max entries.
type hostTally struct {
	max     int
	byName  hostIndex
	heap    hostHeap
	evicted bool
	// floor: the most duplicates a host without an entry may have (the
	// rank of the last host that gave up its place; 0 while none has)
	floor int64
	// distinct: the smallest host hashes met (a max-heap), for the count
	// of distinct hosts once there are more than max
	smallest maxHeap
	seen     map[uint64]bool
}

func newHostTally(max int) *hostTally {
	return &hostTally{max: max, byName: hostIndex{byHash: map[uint64]*hostEntry{}}, seen: map[uint64]bool{}}
}

// hostIndex finds listed hosts by name through the hash of the name that
// every entry carries: a map of integers, not of strings, which the
// tally consults for every document. Hosts whose hash an entry already
// holds (a collision of 64-bit hashes) are kept by name.
type hostIndex struct {
	byHash   map[uint64]*hostEntry
	collided map[string]*hostEntry
}

// get returns the entry of host name, of hash h.
func (x *hostIndex) get(name string, h uint64) (*hostEntry, bool) {
	if e, ok := x.byHash[h]; ok && e.Name == name {
		return e, true
	}
	e, ok := x.collided[name]
	return e, ok
}

// put adds e, which must not be in x.
func (x *hostIndex) put(e *hostEntry) {
	if _, ok := x.byHash[e.hash]; !ok {
		x.byHash[e.hash] = e
		return
	}
	if x.collided == nil {
		x.collided = map[string]*hostEntry{}
	}
	x.collided[e.Name] = e
}

// del removes e, which must be in x.
func (x *hostIndex) del(e *hostEntry) {
	if x.byHash[e.hash] == e {
		delete(x.byHash, e.hash)
		return
	}
	delete(x.collided, e.Name)
}

// len is the number of entries.
func (x *hostIndex) len() int { return len(x.byHash) + len(x.collided) }

// add counts a document of host holding bytes, repeated of them in
// repeated units, a duplicate if dup.
func (t *hostTally) add(host string, bytes, repeated int64, dup bool) {
	h := xxhash.Sum64String(host)
	t.distinct(h)
	e, ok := t.byName.get(host, h)
	if !ok {
		// a copy: host may be part of a longer string
		e = &hostEntry{Rate: manifest.Rate{Name: strings.Clone(host)}, hash: h}
		if len(t.heap) < t.max {
			t.byName.put(e)
			t.heap.push(e)
		} else {
			// e takes the place of the least host
			least := t.heap[0].e
			t.byName.del(least)
			t.byName.put(e)
			e.err = least.rank()
			t.floor = e.err
			t.evicted = true
			t.heap.set(0, item(e))
			t.heap.down(0)
		}
	}
	e.Docs++
	e.Bytes += bytes
	e.RepeatedBytes += repeated
	if dup {
		e.Duplicates++
		e.BytesRemoved += bytes
		t.heap[e.at].rank++
		t.heap[e.at].removed += bytes
		t.heap.down(e.at)
	}
}

// distinct adds a host's hash to the sketch of the smallest hashes.
func (t *hostTally) distinct(h uint64) {
	full := len(t.smallest) == distinctSketch
	if full && h >= t.smallest[0] || t.seen[h] {
		return
	}
	t.seen[h] = true
	if full {
		delete(t.seen, t.smallest[0])
		t.smallest.replaceTop(h)
		return
	}
	t.smallest.push(h)
}

// count is the number of distinct hosts, and whether it is an estimate:
// exact while every host has its tally.
func (t *hostTally) count() (int64, bool) {
	if !t.evicted {
		return int64(t.byName.len()), false
	}
	if len(t.smallest) < distinctSketch {
		// every distinct hash is in the sketch
		return int64(len(t.smallest)), false
	}
	// k minimum values: k-1 over the k-th smallest hash as a fraction.
	kth := float64(t.smallest[0]) / math.Exp2(64)
	return int64(math.Round(float64(distinctSketch-1) / kth)), true
}

// merge adds o's tallies to t's: a host's tallies are the sum of its
// rows in both, and t keeps at most max hosts. It is the merge of
// Misra-Gries summaries (Agarwal et al., "Mergeable summaries", 2012) on
// the Space-Saving ranks: with floor the most duplicates of a host
// without an entry, a rank less the floor is a Misra-Gries count. A host
// of one tally only has the other's floor added to its rank (its error);
// when more than max hosts remain, the max of highest rank keep their
// places and the floor rises to the rank of the first one left out. So a
// merged tally keeps the bounds of one that counted every document
// itself: a listed host's tallies are never above its own, its duplicates
// short of them by at most its error, at most floor; a host not listed
// has at most floor duplicates; and floor is at most the job's duplicates
// over max. Tallies that never gave a place up and hold max hosts
// together merge exactly. A host of o only takes o's entry: o is not used
// again.
func (t *hostTally) merge(o *hostTally) {
	for _, h := range o.smallest {
		t.distinct(h)
	}
	if o.floor > 0 {
		for _, it := range t.heap {
			if _, ok := o.byName.get(it.e.Name, it.e.hash); !ok {
				it.e.err += o.floor
			}
		}
	}
	t.heap = slices.Grow(t.heap, len(o.heap))
	for _, it := range o.heap {
		e := it.e
		if x, ok := t.byName.get(e.Name, e.hash); ok {
			addRate(&x.Rate, &e.Rate)
			x.err += e.err
			continue
		}
		e.err += t.floor
		t.byName.put(e)
		t.heap = append(t.heap, heapItem{e: e})
	}
	t.floor += o.floor
	t.evicted = t.evicted || o.evicted
	for i := range t.heap {
		t.heap[i] = item(t.heap[i].e)
	}
	t.heap.init()
	// The hosts of least rank give up their places, the last of them the
	// one of highest rank left out.
	for len(t.heap) > t.max {
		least := t.heap.pop()
		t.byName.del(least)
		t.floor = least.rank()
		t.evicted = true
	}
}

// listed returns the hosts' tallies with their errors.
func (t *hostTally) listed() []*hostEntry {
	out := make([]*hostEntry, len(t.heap))
	for i, it := range t.heap {
		out[i] = it.e
	}
	return out
}

// compareHosts is the order of the hosts the rates list: the most
// duplicates first, then the most bytes removed, the most documents, and
// by name (a total order).
func compareHosts(a, b *hostEntry) int {
	return cmp.Or(cmp.Compare(b.Duplicates, a.Duplicates), cmp.Compare(b.BytesRemoved, a.BytesRemoved),
		cmp.Compare(b.Docs, a.Docs), strings.Compare(a.Name, b.Name))
}

// topHosts returns the first k of entries in compareHosts's order, in
// that order, choosing them through a heap of k rather than sorting all
// (up to MaxHosts).
func topHosts(entries []*hostEntry, k int) []*hostEntry {
	if k <= 0 {
		return nil
	}
	if len(entries) <= k {
		out := slices.Clone(entries)
		slices.SortFunc(out, compareHosts)
		return out
	}
	// top is a heap with the last of the k in compareHosts's order on top.
	top := slices.Clone(entries[:k])
	worse := func(i, j int) bool { return compareHosts(top[i], top[j]) > 0 }
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= k {
				return
			}
			if r := c + 1; r < k && worse(r, c) {
				c = r
			}
			if !worse(c, i) {
				return
			}
			top[i], top[c] = top[c], top[i]
			i = c
		}
	}
	for i := k/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, e := range entries[k:] {
		if compareHosts(e, top[0]) < 0 {
			top[0] = e
			down(0)
		}
	}
	slices.SortFunc(top, compareHosts)
	return top
}

// maxHeap is a max-heap of hashes.
type maxHeap []uint64

// push adds v.
func (h *maxHeap) push(v uint64) {
	*h = append(*h, v)
	x := *h
	i := len(x) - 1
	for i > 0 {
		p := (i - 1) / 2
		if x[p] >= v {
			break
		}
		x[i] = x[p]
		i = p
	}
	x[i] = v
}

// replaceTop puts v in the place of the largest hash.
func (h maxHeap) replaceTop(v uint64) {
	i := 0
	for {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if r := c + 1; r < len(h) && h[r] > h[c] {
			c = r
		}
		if h[c] <= v {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = v
}
