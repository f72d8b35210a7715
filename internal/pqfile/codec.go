package pqfile

import (
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/compress"
	pqzstd "github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// zstdCodec is parquet-go's zstd codec (the same bytes: a page is one
// frame, without a checksum) whose encoders are kept from page to page
// and from collection to collection (a sync.Pool is emptied by each, and
// the 100k benchmark job's writers made 28 encoders anew), up to
// keptEncoders of them, and whose history is one window of pageWindow
// bytes (zstd's WithLowerEncoderMem), not two of its level's 8 MiB: an
// encoder made for a page of a few hundred KiB allocated 16 MiB, fresh
// memory for the few pages it wrote.
type zstdCodec struct {
	level zstd.EncoderLevel
	mu    sync.Mutex
	kept  []*zstd.Encoder // free encoders, at most keptEncoders
	dec   pqzstd.Codec
}

// keptEncoders bounds the free encoders a codec keeps: more than a job's
// writers compress at once on a machine of a few cores; each holds about
// 1.5 MiB.
const keptEncoders = 8

// pageWindow is the kept encoders' window: four times parquet-go's page
// buffer (DefaultPageBufferSize, 256 KiB), so that a page is one segment
// of a frame, whose header names no window and whose bytes are those any
// window as large gives (the level's own, as parquet-go's codec has it).
// A larger page is encoded by an encoder of the level's window.
const pageWindow = 1 << 20

var _ compress.Codec = (*zstdCodec)(nil)

// String names the codec as parquet-go's does.
func (c *zstdCodec) String() string { return "ZSTD" }

// CompressionCodec is the codec's id in a file's metadata.
func (c *zstdCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

// Decode decodes a page as parquet-go's codec does.
func (c *zstdCodec) Decode(dst, src []byte) ([]byte, error) { return c.dec.Decode(dst, src) }

// Encode compresses a page into dst's memory.
func (c *zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	if len(src) > pageWindow {
		// A page beyond the window (a large dictionary page): an encoder
		// of the level's own window, made for it, so that its bytes are
		// still parquet-go's.
		e, err := newPageEncoder(c.level, 0)
		if err != nil {
			return nil, err
		}
		defer e.Close()
		return e.EncodeAll(src, dst[:0]), nil
	}
	var e *zstd.Encoder
	c.mu.Lock()
	if n := len(c.kept); n > 0 {
		e, c.kept = c.kept[n-1], c.kept[:n-1]
	}
	c.mu.Unlock()
	if e == nil {
		var err error
		if e, err = newPageEncoder(c.level, pageWindow); err != nil {
			return nil, err
		}
	}
	out := e.EncodeAll(src, dst[:0])
	c.mu.Lock()
	if len(c.kept) < keptEncoders {
		c.kept = append(c.kept, e)
	}
	c.mu.Unlock()
	return out, nil
}

// newPageEncoder returns an encoder of the options of parquet-go's codec,
// with a history of one window of window bytes (0: the level's own).
func newPageEncoder(level zstd.EncoderLevel, window int) (*zstd.Encoder, error) {
	opts := []zstd.EOption{zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(level),
		zstd.WithZeroFrames(true), zstd.WithEncoderCRC(false), zstd.WithLowerEncoderMem(true)}
	if window > 0 {
		opts = append(opts, zstd.WithWindowSize(window))
	}
	return zstd.NewWriter(nil, opts...)
}
