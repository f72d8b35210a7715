package textstore

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"strings"
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

// TestEncoderMemory checks the encoders Encoders makes: the bytes of an
// encoder of zstd's defaults, for frames up to past the window, from an
// encoder whose history is one window (8 MiB), not two.
func TestEncoderMemory(t *testing.T) {
	text := []byte(strings.Repeat("the quick brown fox jumps over the lazy dog; ", 1<<18)) // 11.25 MiB
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range text { // not a plain repeat: matches of every length
		if rng.IntN(50) == 0 {
			text[i] = byte('a' + rng.IntN(26))
		}
	}
	for _, level := range []zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedDefault} {
		ref, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1000, 1 << 20, 8 << 20, len(text)} {
			var encs Encoders
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			enc, err := encs.get(level)
			if err != nil {
				t.Fatal(err)
			}
			got := enc.zs.EncodeAll(text[:n], nil)
			runtime.ReadMemStats(&after)
			enc.zs.Close()
			if want := ref.EncodeAll(text[:n], nil); !bytes.Equal(got, want) {
				t.Errorf("level %v, %d bytes: encoded in %d bytes, %d by zstd's defaults", level, n, len(got), len(want))
			}
			// The history (8 MiB and a block), the tables and the
			// output: two windows' history would be 16 MiB alone.
			if alloc := after.TotalAlloc - before.TotalAlloc; n == 8<<20 && alloc > 8<<20+uint64(len(got))+5<<20 {
				t.Errorf("level %v: an encoder of an 8 MiB frame allocated %d bytes", level, alloc)
			}
		}
		ref.Close()
	}
}
