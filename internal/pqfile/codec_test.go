package pqfile

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/klauspost/compress/zstd"
	pqzstd "github.com/parquet-go/parquet-go/compress/zstd"
)

// pageText is n bytes like a page of ids and urls: repetitive, not
// constant.
func pageText(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "doc-%07d https://host-%d.example.org/page/%d?q=%x ", i, i%977, i*7919, i*2654435761)
	}
	return b.Bytes()[:n]
}

// TestZstdCodec checks the codec of the files pqfile writes against
// parquet-go's at both levels: the same bytes, pages of up to beyond a
// window, which decode to the page; a new encoder allocates one history
// of pageWindow, not two of the level's window; and the codec keeps its
// encoders through a collection.
func TestZstdCodec(t *testing.T) {
	// The most a new encoder may allocate to encode a page of 1 MiB: its
	// history, tables and output. With two histories of the level's 8 MiB
	// window, fastest allocates 11.5 MB and default 21.5 (measured with
	// klauspost/compress v1.20.3); with one, 7.3 and 13.1; with one of
	// pageWindow, 2.8 and 4.3.
	maxAlloc := map[zstd.EncoderLevel]uint64{zstd.SpeedFastest: 4 << 20, zstd.SpeedDefault: 6 << 20}
	for _, level := range []zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedDefault} {
		ours := &zstdCodec{level: level}
		theirs := &pqzstd.Codec{Level: level}
		for _, n := range []int{0, 1, 1000, 256 << 10, 1 << 20, 9 << 20} {
			t.Run(fmt.Sprint(level, "/", n), func(t *testing.T) {
				page := pageText(n)
				got, err := ours.Encode(nil, page)
				if err != nil {
					t.Fatal(err)
				}
				want, err := theirs.Encode(nil, page)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%d bytes: encoded in %d bytes, parquet-go's codec in %d", n, len(got), len(want))
				}
				back, err := ours.Decode(nil, got)
				if err != nil || !bytes.Equal(back, page) {
					t.Errorf("%d bytes: decoded %d bytes (%v)", n, len(back), err)
				}
			})
		}
		t.Run(fmt.Sprint(level, "/memory"), func(t *testing.T) {
			page := pageText(1 << 20)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			enc, err := newPageEncoder(level, pageWindow)
			if err != nil {
				t.Fatal(err)
			}
			enc.EncodeAll(page, nil)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > maxAlloc[level] {
				t.Errorf("an encoder of a 1 MiB page allocated %d bytes, want at most %d", alloc, maxAlloc[level])
			}
		})
		t.Run(fmt.Sprint(level, "/kept"), func(t *testing.T) {
			// Ten pages after a collection, into a buffer of a page: the
			// encoder is the one kept (a new one is 2.8 MB or more).
			c := &zstdCodec{level: level}
			page := pageText(256 << 10)
			if _, err := c.Encode(nil, page); err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			dst := make([]byte, 0, 2*len(page))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range 10 {
				if _, err := c.Encode(dst, page); err != nil {
					t.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
				t.Errorf("ten pages after a collection allocated %d bytes: the encoder was not kept", alloc)
			}
		})
	}
}
