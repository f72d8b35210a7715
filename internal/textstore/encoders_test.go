package textstore

import (
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestEncodersDrop checks that Drop lets the idle encoders go: the next
// writer makes a new one.
func TestEncodersDrop(t *testing.T) {
	for _, drop := range []bool{false, true} {
		var encs Encoders
		enc, err := encs.get(zstd.SpeedDefault)
		if err != nil {
			t.Fatal(err)
		}
		encs.put(zstd.SpeedDefault, enc)
		if drop {
			encs.Drop()
		}
		again, err := encs.get(zstd.SpeedDefault)
		if err != nil {
			t.Fatal(err)
		}
		if reused := again == enc; reused == drop {
			t.Errorf("dropped: %v; the idle encoder reused: %v", drop, reused)
		}
	}
}
