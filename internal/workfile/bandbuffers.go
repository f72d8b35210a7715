package workfile

import (
	"sync"

	"github.com/neardup/neardup/pkg/records"
)

// BandSet is what a map task holds of its band records until it writes a
// run: its band records and its documents' id records by partition, and
// the scratch of their sort (SortBandRecords).
type BandSet struct {
	Parts, IDs [][]records.BandRecord
	Scratch    []records.BandRecord
}

// BandBuffers keeps the band sets of finished map tasks for the next
// ones, with the memory they grew to (a run's records: about 9 MiB for
// job.RunText of documents of 2.4 KB, the benchmark's, and more for
// shorter ones): a worker's map tasks then reuse it rather than each
// growing its own, a chunk at a time (the 100k benchmark job: 226 of its
// 1,270 MB of allocations). It is safe for concurrent use; the zero value
// is ready.
type BandBuffers struct {
	mu   sync.Mutex
	free []*BandSet
}

// maxFreeBandSets is how many idle sets BandBuffers keeps.
const maxFreeBandSets = 8

// Get returns an idle set of partitions partitions, emptied, or a new
// one.
func (b *BandBuffers) Get(partitions int) *BandSet {
	if b != nil {
		b.mu.Lock()
		defer b.mu.Unlock()
		for i := len(b.free) - 1; i >= 0; i-- {
			if s := b.free[i]; len(s.Parts) == partitions {
				b.free = append(b.free[:i], b.free[i+1:]...)
				for p := range partitions {
					s.Parts[p], s.IDs[p] = s.Parts[p][:0], s.IDs[p][:0]
				}
				return s
			}
		}
	}
	return &BandSet{Parts: make([][]records.BandRecord, partitions), IDs: make([][]records.BandRecord, partitions)}
}

// Put keeps s for the next task, or lets it go.
func (b *BandBuffers) Put(s *BandSet) {
	if b == nil || s == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.free) < maxFreeBandSets {
		b.free = append(b.free, s)
	}
}

// Drop lets the idle sets go.
func (b *BandBuffers) Drop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.free = nil
}
