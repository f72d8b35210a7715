package workfile

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// tableText is n bytes of what a verified file's table holds: ids and
// urls, repetitive but not constant.
func tableText(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "doc-%07d https://host-%d.example.org/page/%d?q=%x ", i, i%977, i*7919, i*2654435761)
	}
	return b.Bytes()[:n]
}

// TestTableEncoder checks the encoder of a verified file's table: the
// bytes of zstd's fastest level with its default window, from an encoder
// that allocates about the table's size rather than 8 MiB.
func TestTableEncoder(t *testing.T) {
	old, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	for _, n := range []int{0, 1, 1000, 1024, 1025, 200_000, 1 << 20, 3 << 20, 4 << 20, 5 << 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			text := tableText(n)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			enc, err := tableEncoder(n)
			if err != nil {
				t.Fatal(err)
			}
			got := enc.EncodeAll(text, nil)
			enc.Close()
			runtime.ReadMemStats(&after)
			if want := old.EncodeAll(text, nil); !bytes.Equal(got, want) {
				t.Errorf("%d bytes: encoded in %d bytes, %d with the default window", n, len(got), len(want))
			}
			// A table of up to 200 KB: its encoder's history, tables and
			// output in under 1.5 MiB (zstd's default window: 8 MiB).
			if alloc := after.TotalAlloc - before.TotalAlloc; n <= 200_000 && alloc > 3<<19 {
				t.Errorf("%d bytes: the encoder allocated %d bytes", n, alloc)
			}
		})
	}
}
