package rates

import (
	"container/heap"
	"math"
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
	err int64
	at  int // its index in the heap
}

// rank is the host's Space-Saving count: the duplicates it may have.
func (e *hostEntry) rank() int64 { return e.Duplicates + e.err }

// hostHeap orders the listed hosts by rank, fewest first (then the
// fewest bytes removed, then by name: a total order, so that which host
// gives up its place depends on the documents' order alone).
type hostHeap []*hostEntry

func (h hostHeap) Len() int { return len(h) }
func (h hostHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.rank() != b.rank() {
		return a.rank() < b.rank()
	}
	if a.BytesRemoved != b.BytesRemoved {
		return a.BytesRemoved < b.BytesRemoved
	}
	return strings.Compare(a.Name, b.Name) < 0
}
func (h hostHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].at, h[j].at = i, j
}
func (h *hostHeap) Push(x any) {
	e := x.(*hostEntry)
	e.at = len(*h)
	*h = append(*h, e)
}
func (h *hostHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// hostTally tallies documents by host in at most max entries.
type hostTally struct {
	max     int
	byName  map[string]*hostEntry
	heap    hostHeap
	evicted bool
	// distinct: the smallest host hashes met (a max-heap), for the count
	// of distinct hosts once there are more than max
	smallest maxHeap
	seen     map[uint64]bool
}

func newHostTally(max int) *hostTally {
	return &hostTally{max: max, byName: map[string]*hostEntry{}, seen: map[uint64]bool{}}
}

// add counts a document of host holding bytes, repeated of them in
// repeated units, a duplicate if dup.
func (t *hostTally) add(host string, bytes, repeated int64, dup bool) {
	t.distinct(host)
	e, ok := t.byName[host]
	if !ok {
		e = &hostEntry{Rate: manifest.Rate{Name: host}}
		if len(t.heap) == t.max {
			least := heap.Pop(&t.heap).(*hostEntry)
			delete(t.byName, least.Name)
			e.err = least.rank()
			t.evicted = true
		}
		t.byName[host] = e
		heap.Push(&t.heap, e)
	}
	e.Docs++
	e.Bytes += bytes
	e.RepeatedBytes += repeated
	if dup {
		e.Duplicates++
		e.BytesRemoved += bytes
		heap.Fix(&t.heap, e.at)
	}
}

// distinct adds host to the sketch of the smallest hashes.
func (t *hostTally) distinct(host string) {
	h := xxhash.Sum64String(host)
	if t.seen[h] {
		return
	}
	if len(t.smallest) == distinctSketch {
		if h >= t.smallest[0] {
			return
		}
		delete(t.seen, heap.Pop(&t.smallest).(uint64))
	}
	t.seen[h] = true
	heap.Push(&t.smallest, h)
}

// count is the number of distinct hosts, and whether it is an estimate:
// exact while every host has its tally.
func (t *hostTally) count() (int64, bool) {
	if !t.evicted {
		return int64(len(t.byName)), false
	}
	if len(t.smallest) < distinctSketch {
		// every distinct hash is in the sketch
		return int64(len(t.smallest)), false
	}
	// k minimum values: k-1 over the k-th smallest hash as a fraction.
	kth := float64(t.smallest[0]) / math.Exp2(64)
	return int64(math.Round(float64(distinctSketch-1) / kth)), true
}

// listed returns the hosts' tallies with their errors.
func (t *hostTally) listed() []*hostEntry {
	return t.heap
}

// maxHeap is a max-heap of hashes.
type maxHeap []uint64

func (h maxHeap) Len() int           { return len(h) }
func (h maxHeap) Less(i, j int) bool { return h[i] > h[j] }
func (h maxHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *maxHeap) Push(x any)        { *h = append(*h, x.(uint64)) }
func (h *maxHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
