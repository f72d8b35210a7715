// Package textstore stores the documents of a chunk (id, url and text)
// compactly, zstd-compressed in frames of documents (as many as its
// writer's options allow), for random access by slot: reading a slot
// decodes its frame, and the reader keeps the frame it decoded last, so
// reading slots in order decodes each frame once. Every frame and the
// frame table carry an xxhash, so a damaged or truncated file is an error
// naming the file and the offset, never a wrong answer.
//
// Layout: frames, then the frame table (per frame its first slot, its
// offset and the xxhash of its compressed bytes, 24 bytes, then the end
// offset), then a trailer: the slot count, the frame count, the table's
// xxhash and the magic "NDTXT4\x00\x00". A frame decompresses to the texts
// of its slots, one after the other, then one entry per slot:
// uvarint(len(id)+1) (0 for an empty slot, which has nothing else), id,
// uvarint-prefixed url, uvarint(len(text)); then the length of the entries
// as 4 bytes, little-endian. Texts apart from the ids and urls compress
// faster and smaller (docs/performance.md, 2026-11-29, session 50).
//
// Files of the format before (magic "NDTXT3\x00\x00", written until
// 2026-11-29) are read too: their frames hold each slot's entry with its
// text after the url, uvarint-prefixed.
package textstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
)

// Magic ends every text store file the writer writes; IsTextStore tells
// a file by it, or by MagicV3.
const Magic = "NDTXT4\x00\x00"

// MagicV3 ends the files of the format before, whose frames hold each
// slot's text in its entry.
const MagicV3 = "NDTXT3\x00\x00"

const trailerLen = 32

// ErrCorrupt marks a file whose bytes do not match their checksums.
var ErrCorrupt = errors.New("text store is corrupt")

// Doc is one document's entry.
type Doc struct {
	ID   string
	URL  string
	Text []byte
}

// Options choose the compression.
type Options struct {
	// Level is the zstd level (zstd.SpeedDefault when 0).
	Level zstd.EncoderLevel
	// FrameDocs is the most documents of a frame (DefaultFrameDocs when 0).
	FrameDocs int
	// FrameBytes is the most bytes of text of a frame, beyond which a
	// frame ends early (DefaultFrameBytes when 0): bounds what reading
	// one slot decodes.
	FrameBytes int
	// Encoders, when not nil, lends the writer its encoder, which Close
	// gives back: the writers of a process's many chunks then share the
	// encoders' buffers (a window's worth, 16 MiB at the default level)
	// and their frame buffers (FrameBytes and what it compresses to)
	// rather than each allocating and touching its own.
	Encoders *Encoders
}

// Defaults, chosen by measurement on the generated 100k corpus (see
// docs/footprint-plan.md).
const (
	DefaultFrameDocs  = 64
	DefaultFrameBytes = 1 << 20
)

// Writer writes documents slot by slot.
type Writer struct {
	w     io.Writer
	o     Options
	enc   *encoder
	off   uint64
	slots uint64
	table []byte
	// the open frame: its texts (raw), then its entries (meta)
	first uint64
	n     int
	raw   []byte
	meta  []byte
	comp  []byte
	err   error
}

// NewWriter starts a file on w.
func NewWriter(w io.Writer, o Options) (*Writer, error) {
	if o.Level == 0 {
		o.Level = zstd.SpeedDefault
	}
	if o.FrameDocs <= 0 {
		o.FrameDocs = DefaultFrameDocs
	}
	if o.FrameBytes <= 0 {
		o.FrameBytes = DefaultFrameBytes
	}
	enc, err := o.Encoders.get(o.Level)
	if err != nil {
		return nil, err
	}
	// A frame ends past FrameBytes by at most its last document: room
	// for most, so that the buffer rarely grows.
	if want := o.FrameBytes + o.FrameBytes/8; cap(enc.raw) < want {
		enc.raw = make([]byte, 0, want)
	}
	return &Writer{w: w, o: o, enc: enc, raw: enc.raw[:0], meta: enc.meta[:0], comp: enc.comp[:0]}, nil
}

// Add writes the document of the next slot; nil leaves it empty. The
// document is copied.
func (w *Writer) Add(d *Doc) error {
	if w.err != nil {
		return w.err
	}
	if d == nil {
		w.meta = binary.AppendUvarint(w.meta, 0)
	} else {
		w.raw = append(w.raw, d.Text...)
		w.meta = binary.AppendUvarint(w.meta, uint64(len(d.ID))+1)
		w.meta = append(w.meta, d.ID...)
		w.meta = binary.AppendUvarint(w.meta, uint64(len(d.URL)))
		w.meta = append(w.meta, d.URL...)
		w.meta = binary.AppendUvarint(w.meta, uint64(len(d.Text)))
	}
	w.slots++
	if w.n++; w.n >= w.o.FrameDocs || len(w.raw)+len(w.meta) >= w.o.FrameBytes {
		w.flush()
	}
	return w.err
}

func (w *Writer) flush() {
	if w.n == 0 || w.err != nil {
		return
	}
	if len(w.meta) > math.MaxUint32 {
		w.err = fmt.Errorf("textstore: a frame's entries of %d bytes", len(w.meta))
		return
	}
	w.raw = append(w.raw, w.meta...)
	w.raw = binary.LittleEndian.AppendUint32(w.raw, uint32(len(w.meta)))
	w.comp = w.enc.zs.EncodeAll(w.raw, w.comp[:0])
	w.table = binary.LittleEndian.AppendUint64(w.table, w.first)
	w.table = binary.LittleEndian.AppendUint64(w.table, w.off)
	w.table = binary.LittleEndian.AppendUint64(w.table, xxhash.Sum64(w.comp))
	w.write(w.comp)
	w.first, w.n, w.raw, w.meta = w.slots, 0, w.raw[:0], w.meta[:0]
}

func (w *Writer) write(b []byte) {
	if w.err != nil {
		return
	}
	_, w.err = w.w.Write(b)
	w.off += uint64(len(b))
}

// Close writes the last frame, the table and the trailer. It does not
// close the underlying writer.
func (w *Writer) Close() error {
	w.flush()
	frames := uint64(len(w.table) / 24)
	t := binary.LittleEndian.AppendUint64(w.table, w.off)
	sum := xxhash.Sum64(t)
	t = binary.LittleEndian.AppendUint64(t, w.slots)
	t = binary.LittleEndian.AppendUint64(t, frames)
	t = binary.LittleEndian.AppendUint64(t, sum)
	t = append(t, Magic...)
	w.write(t)
	if w.enc != nil {
		// The buffers go back with the encoder unless a large document
		// grew them past twice a frame's room.
		w.enc.raw, w.enc.meta, w.enc.comp = nil, nil, nil
		if room := 2 * (w.o.FrameBytes + w.o.FrameBytes/8); cap(w.raw) <= room && cap(w.comp) <= room && cap(w.meta) <= room {
			w.enc.raw, w.enc.meta, w.enc.comp = w.raw[:0], w.meta[:0], w.comp[:0]
		}
		w.o.Encoders.put(w.o.Level, w.enc)
		w.enc, w.raw, w.meta, w.comp = nil, nil, nil, nil
	}
	return w.err
}

// IsTextStore reports whether the last bytes of a file (at least 8) are a
// text store's trailer.
func IsTextStore(tail []byte) bool {
	return version(tail) != 0
}

// version is the format of the file whose last bytes are tail: 4, 3, or
// 0 for none.
func version(tail []byte) int {
	if len(tail) < len(Magic) {
		return 0
	}
	switch string(tail[len(tail)-len(Magic):]) {
	case Magic:
		return 4
	case MagicV3:
		return 3
	}
	return 0
}
