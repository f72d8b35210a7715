package control

import (
	"log/slog"
	"testing"

	"github.com/neardup/neardup/internal/stages"
	"github.com/neardup/neardup/pkg/records"
)

// TestMapBuffersDropped checks that a worker keeps its map tasks' idle
// buffers for its next map task and drops them when it starts a task of
// another stage.
func TestMapBuffersDropped(t *testing.T) {
	mapStage, ok := stages.Lookup(StageMap)
	if !ok {
		t.Fatal("no map stage")
	}
	reduce, ok := stages.Lookup("reduce")
	if !ok {
		t.Fatal("no reduce stage")
	}
	tests := []struct {
		name string
		next string
		kept bool
	}{
		{"map then map", StageMap, true},
		{"map then reduce", "reduce", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWorker(nil, 1, slog.New(slog.DiscardHandler))
			// A map task ends, leaving its band records' memory.
			b := w.mapBuffers(mapStage)
			set := b.Bands.Get(4)
			set.Parts[0] = append(set.Parts[0], make([]records.BandRecord, 1000)...)
			b.Bands.Put(set)
			s := mapStage
			if tt.next != StageMap {
				s = reduce
			}
			got := w.mapBuffers(s).Bands.Get(4)
			if kept := cap(got.Parts[0]) >= 1000; kept != tt.kept {
				t.Errorf("the next task's band set holds %d records' room; want the last one's kept: %v", cap(got.Parts[0]), tt.kept)
			}
			if len(got.Parts[0]) != 0 {
				t.Errorf("a reused band set holds %d records", len(got.Parts[0]))
			}
		})
	}
}
