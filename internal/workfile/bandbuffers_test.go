package workfile

import (
	"testing"

	"github.com/neardup/neardup/pkg/records"
)

// TestBandBuffers checks that a set given back is handed out again,
// emptied with its memory, only for as many partitions, and not after
// Drop; and that a nil BandBuffers makes new sets.
func TestBandBuffers(t *testing.T) {
	filled := func(parts int) *BandSet {
		s := &BandSet{Parts: make([][]records.BandRecord, parts), IDs: make([][]records.BandRecord, parts)}
		for p := range parts {
			s.Parts[p] = make([]records.BandRecord, 10, 100)
			s.IDs[p] = make([]records.BandRecord, 3, 50)
		}
		s.Scratch = make([]records.BandRecord, 0, 200)
		return s
	}
	tests := []struct {
		name   string
		buf    *BandBuffers
		before func(b *BandBuffers)
		parts  int
		reused bool
	}{
		{"nil", nil, func(*BandBuffers) {}, 4, false},
		{"none given back", &BandBuffers{}, func(*BandBuffers) {}, 4, false},
		{"given back", &BandBuffers{}, func(b *BandBuffers) { b.Put(filled(4)) }, 4, true},
		{"other partitions", &BandBuffers{}, func(b *BandBuffers) { b.Put(filled(8)) }, 4, false},
		{"dropped", &BandBuffers{}, func(b *BandBuffers) { b.Put(filled(4)); b.Drop() }, 4, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.buf != nil {
				tt.before(tt.buf)
			}
			s := tt.buf.Get(tt.parts)
			if len(s.Parts) != tt.parts || len(s.IDs) != tt.parts {
				t.Fatalf("a set of %d and %d partitions, want %d", len(s.Parts), len(s.IDs), tt.parts)
			}
			for p := range tt.parts {
				if len(s.Parts[p]) != 0 || len(s.IDs[p]) != 0 {
					t.Fatalf("partition %d holds %d band and %d id records", p, len(s.Parts[p]), len(s.IDs[p]))
				}
			}
			if reused := cap(s.Parts[0]) == 100 && cap(s.IDs[0]) == 50 && cap(s.Scratch) == 200; reused != tt.reused {
				t.Errorf("reused: %v, want %v", reused, tt.reused)
			}
		})
	}
	t.Run("at most maxFreeBandSets kept", func(t *testing.T) {
		var b BandBuffers
		for range maxFreeBandSets + 3 {
			b.Put(filled(2))
		}
		reused := 0
		for range maxFreeBandSets + 3 {
			if cap(b.Get(2).Parts[0]) == 100 {
				reused++
			}
		}
		if reused != maxFreeBandSets {
			t.Errorf("%d sets reused, want %d", reused, maxFreeBandSets)
		}
	})
}
