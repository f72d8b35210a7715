package textstore

import (
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Encoders keeps the zstd encoders of finished writers for the next ones,
// by level, with their frame buffers. It is safe for concurrent use; the
// zero value is ready.
type Encoders struct {
	mu   sync.Mutex
	free map[zstd.EncoderLevel][]*encoder
}

// encoder is a zstd encoder and the buffers of a writer's frames: the
// texts and the entries of the open frame, and the frame compressed.
type encoder struct {
	zs              *zstd.Encoder
	raw, meta, comp []byte
}

// maxFreeEncoders is how many idle encoders of a level Encoders keeps.
const maxFreeEncoders = 8

// get returns an idle encoder of level, or a new one.
func (p *Encoders) get(level zstd.EncoderLevel) (*encoder, error) {
	if p != nil {
		p.mu.Lock()
		free := p.free[level]
		if n := len(free); n > 0 {
			enc := free[n-1]
			p.free[level] = free[:n-1]
			p.mu.Unlock()
			return enc, nil
		}
		p.mu.Unlock()
	}
	// A history of one window (WithLowerEncoderMem: 8 MiB, not 16): the
	// same bytes, 16 MB less of a map task's live heap for two workers,
	// which the collector lets grow threefold (GOGC 200; TestEncoderMemory).
	zs, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false),
		zstd.WithLowerEncoderMem(true))
	if err != nil {
		return nil, err
	}
	return &encoder{zs: zs}, nil
}

// put keeps enc for the next writer, or closes it.
func (p *Encoders) put(level zstd.EncoderLevel, enc *encoder) {
	if p != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.free[level]) < maxFreeEncoders {
			if p.free == nil {
				p.free = map[zstd.EncoderLevel][]*encoder{}
			}
			p.free[level] = append(p.free[level], enc)
			return
		}
	}
	enc.zs.Close()
}

// Drop closes the idle encoders.
func (p *Encoders) Drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, free := range p.free {
		for _, enc := range free {
			enc.zs.Close()
		}
	}
	p.free = nil
}
