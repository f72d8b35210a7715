package pqfile

import (
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/compress"
	pqzstd "github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// zstdCodec is parquet-go's zstd codec (the same bytes: a page is one
// frame, without a checksum) whose encoders keep a history of one window
// (zstd's WithLowerEncoderMem: 8 MiB), not two: an encoder made for a
// page of a few hundred KiB allocated 16 MiB, which the writers of a
// job made anew after every collection emptied the pool (89 of the 100k
// benchmark job's 1,085 MB of allocations, 16 MB of its live heap while
// map wrote docs/).
type zstdCodec struct {
	level zstd.EncoderLevel
	enc   sync.Pool // of *zstd.Encoder
	dec   pqzstd.Codec
}

var _ compress.Codec = (*zstdCodec)(nil)

// String names the codec as parquet-go's does.
func (c *zstdCodec) String() string { return "ZSTD" }

// CompressionCodec is the codec's id in a file's metadata.
func (c *zstdCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

// Decode decodes a page as parquet-go's codec does.
func (c *zstdCodec) Decode(dst, src []byte) ([]byte, error) { return c.dec.Decode(dst, src) }

// Encode compresses a page into dst's memory.
func (c *zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	e, _ := c.enc.Get().(*zstd.Encoder)
	if e == nil {
		var err error
		if e, err = newPageEncoder(c.level); err != nil {
			return nil, err
		}
	}
	defer c.enc.Put(e)
	return e.EncodeAll(src, dst[:0]), nil
}

// newPageEncoder returns an encoder of the options of parquet-go's codec,
// with a history of one window.
func newPageEncoder(level zstd.EncoderLevel) (*zstd.Encoder, error) {
	return zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(level),
		zstd.WithZeroFrames(true), zstd.WithEncoderCRC(false), zstd.WithLowerEncoderMem(true))
}
