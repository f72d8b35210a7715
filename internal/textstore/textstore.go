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
	"slices"
	"strconv"

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

// frame is one entry of the table.
type frame struct {
	first, off, sum uint64
}

// Reader reads documents by slot. It is not safe for concurrent use.
type Reader struct {
	r      io.ReaderAt
	name   string
	slots  int
	frames []frame
	end    uint64 // the end of the last frame
	dec    *zstd.Decoder
	// cache holds the frames decoded last, the most recent last.
	cache []decoded
	comp  []byte
	nDec  int
	// shared, when not nil, holds frames under key and their number.
	shared FrameCache
	key    string
	// reuse decodes a frame into the memory of the one it evicts.
	reuse bool
	// v3: the file is of the format before NDTXT4.
	v3 bool
}

// Frame is a decoded frame: its bytes, where each slot's entry starts in
// them and, but in a file of the format before, where its text does.
type Frame struct {
	raw   []byte
	offs  []int
	texts []int
}

// Bytes is the memory the decoded frame holds.
func (f *Frame) Bytes() int64 {
	return int64(cap(f.raw)) + 8*int64(cap(f.offs)) + 8*int64(cap(f.texts))
}

// FrameCache keeps decoded frames beyond a reader's last one, across
// readers and reopenings of a file: a query that reads one document at a
// time decodes a frame once rather than once a match.
type FrameCache interface {
	// Frame returns the frame held under key, if any.
	Frame(key string) (*Frame, bool)
	// AddFrame holds f under key (or not: a cache may refuse).
	AddFrame(key string, f *Frame)
}

// ShareFrames makes the reader look the frames it needs up in c, under
// key and the frame's number, before it decodes them, and add those it
// decodes. key names the file within c (its location and name).
func (r *Reader) ShareFrames(c FrameCache, key string) { r.shared, r.key = c, key }

// ReuseFrames makes the reader decode each frame into the memory of the
// frame it decoded before (unless it shares frames, ShareFrames): a
// document's text is then valid only until a Get of another frame. For
// a caller that copies what it reads (the gather stage reads a store in
// slot order), so that each frame is not fresh memory, 8 MiB at a time.
func (r *Reader) ReuseFrames() { r.reuse = true }

// decoded is frame number frame, decoded.
type decoded struct {
	frame int
	*Frame
}

// cacheFrames is how many decoded frames a reader keeps.
const cacheFrames = 1

// NewReader opens the file name of the given size, checking its table.
func NewReader(r io.ReaderAt, size int64, name string) (*Reader, error) {
	corrupt := func(off int64, what string, args ...any) error {
		return fmt.Errorf("%s: offset %d: %s: %w", name, off, fmt.Sprintf(what, args...), ErrCorrupt)
	}
	if size < trailerLen {
		return nil, corrupt(0, "%d bytes, shorter than a trailer", size)
	}
	var tr [trailerLen]byte
	if _, err := r.ReadAt(tr[:], size-trailerLen); err != nil {
		return nil, fmt.Errorf("%s: reading the trailer: %w", name, err)
	}
	v := version(tr[:])
	if v == 0 {
		return nil, corrupt(size-trailerLen, "no trailer (truncated?)")
	}
	slots := binary.LittleEndian.Uint64(tr[0:])
	nf := binary.LittleEndian.Uint64(tr[8:])
	if nf > uint64(size)/24 || slots > 1<<32 {
		return nil, corrupt(size-trailerLen, "%d frames, %d slots in %d bytes", nf, slots, size)
	}
	tlen := int64(24*nf + 8)
	toff := size - trailerLen - tlen
	if toff < 0 {
		return nil, corrupt(size-trailerLen, "frame table larger than the file")
	}
	t := make([]byte, tlen)
	if _, err := r.ReadAt(t, toff); err != nil {
		return nil, fmt.Errorf("%s: reading the frame table at offset %d: %w", name, toff, err)
	}
	if xxhash.Sum64(t) != binary.LittleEndian.Uint64(tr[16:]) {
		return nil, corrupt(toff, "frame table checksum")
	}
	frames := make([]frame, nf)
	for i := range frames {
		b := t[24*i:]
		frames[i] = frame{first: binary.LittleEndian.Uint64(b), off: binary.LittleEndian.Uint64(b[8:]), sum: binary.LittleEndian.Uint64(b[16:])}
		if i > 0 && (frames[i].first <= frames[i-1].first || frames[i].off < frames[i-1].off) || i == 0 && frames[i].first != 0 || frames[i].first >= slots {
			return nil, corrupt(toff+int64(24*i), "frame %d out of order", i)
		}
	}
	end := binary.LittleEndian.Uint64(t[24*nf:])
	if end != uint64(toff) || nf > 0 && frames[nf-1].off > end || nf == 0 && slots > 0 {
		return nil, corrupt(toff, "frame table does not end at the table")
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, err
	}
	return &Reader{r: r, name: name, slots: int(slots), frames: frames, end: end, dec: dec, v3: v == 3}, nil
}

// Len is the number of slots.
func (r *Reader) Len() int { return r.slots }

// Bytes is the size of the file's frames.
func (r *Reader) Bytes() int64 { return int64(r.end) }

// Decoded is the number of frames the reader decoded.
func (r *Reader) Decoded() int { return r.nDec }

// Close releases the decoder; it does not close the underlying reader.
func (r *Reader) Close() { r.dec.Close() }

// Get returns the document of a slot; ok is false for an empty slot. The
// document's text must not be modified; it stays valid.
func (r *Reader) Get(slot int) (d Doc, ok bool, err error) {
	if slot < 0 || slot >= r.slots {
		return Doc{}, false, fmt.Errorf("%s: slot %d of %d", r.name, slot, r.slots)
	}
	f := sortSearchFrame(r.frames, uint64(slot))
	fr, err := r.frame(f)
	if err != nil {
		return Doc{}, false, err
	}
	i := slot - int(r.frames[f].first)
	_, e, err := splitEntry(fr.raw[fr.offs[i]:], r.v3)
	if err != nil || !e.present {
		return Doc{}, false, err // checked when the frame was decoded
	}
	if !r.v3 {
		at := fr.texts[i]
		e.text = fr.raw[at : at+e.textLen : at+e.textLen]
	}
	return Doc{ID: string(e.id), URL: string(e.url), Text: e.text}, true, nil
}

// sortSearchFrame returns the frame holding slot.
func sortSearchFrame(frames []frame, slot uint64) int {
	i, _ := slices.BinarySearchFunc(frames, slot+1, func(f frame, s uint64) int {
		if f.first < s {
			return -1
		}
		return 1
	})
	return i - 1
}

// frame returns frame f decoded, from the cache if it holds it.
func (r *Reader) frame(f int) (*decoded, error) {
	for i := range r.cache {
		if r.cache[i].frame == f {
			return &r.cache[i], nil
		}
	}
	var skey string
	if r.shared != nil {
		skey = r.key + "#" + strconv.Itoa(f)
		if fr, ok := r.shared.Frame(skey); ok {
			return r.keep(decoded{frame: f, Frame: fr}), nil
		}
	}
	lo := r.frames[f].off
	hi, last := r.end, uint64(r.slots)
	if f+1 < len(r.frames) {
		hi, last = r.frames[f+1].off, r.frames[f+1].first
	}
	corrupt := func(what string, args ...any) error {
		return fmt.Errorf("%s: frame %d at offset %d: %s: %w", r.name, f, lo, fmt.Sprintf(what, args...), ErrCorrupt)
	}
	r.comp = slices.Grow(r.comp[:0], int(hi-lo))[:hi-lo]
	if _, err := r.r.ReadAt(r.comp, int64(lo)); err != nil {
		return nil, fmt.Errorf("%s: frame %d at offset %d: %w", r.name, f, lo, err)
	}
	if xxhash.Sum64(r.comp) != r.frames[f].sum {
		return nil, corrupt("checksum")
	}
	n := int(last - r.frames[f].first)
	var dst []byte
	var offs, texts []int
	if r.reuse && r.shared == nil && len(r.cache) >= cacheFrames {
		// The frame evicted below gives its memory; it is gone from the
		// cache whatever happens.
		dst, offs, texts = r.cache[0].raw[:0], r.cache[0].offs[:0], r.cache[0].texts[:0]
		r.cache = slices.Delete(r.cache, 0, 1)
	}
	raw, err := r.dec.DecodeAll(r.comp, dst)
	if err != nil {
		return nil, corrupt("%v", err)
	}
	fr := &Frame{raw: raw, offs: slices.Grow(offs, n)}
	if !r.v3 {
		fr.texts = slices.Grow(texts, n)
	}
	if err := fr.index(n, r.v3); err != nil {
		return nil, corrupt("slot %d: %v", int(r.frames[f].first)+len(fr.offs), err)
	}
	d := decoded{frame: f, Frame: fr}
	r.nDec++
	if r.shared != nil {
		r.shared.AddFrame(skey, d.Frame)
	}
	return r.keep(d), nil
}

// keep holds d as the frame decoded last.
func (r *Reader) keep(d decoded) *decoded {
	if len(r.cache) >= cacheFrames {
		r.cache = slices.Delete(r.cache, 0, 1)
	}
	r.cache = append(r.cache, d)
	return &r.cache[len(r.cache)-1]
}

// index finds the entries (and texts) of the frame's n slots in its
// bytes, checking that they hold them exactly; on an error, len(f.offs)
// is the slot it is about.
func (f *Frame) index(n int, v3 bool) error {
	entries, texts := f.raw, 0
	if !v3 {
		if len(f.raw) < 4 {
			return fmt.Errorf("%d bytes, too few for the entries' length", len(f.raw))
		}
		l := binary.LittleEndian.Uint32(f.raw[len(f.raw)-4:])
		if uint64(l) > uint64(len(f.raw)-4) {
			return fmt.Errorf("entries of %d bytes in %d", l, len(f.raw)-4)
		}
		texts = len(f.raw) - 4 - int(l)
		entries = f.raw[texts : len(f.raw)-4]
	}
	at := 0 // where the next text starts
	for range n {
		off := len(f.raw) - len(entries)
		if !v3 {
			off -= 4
		}
		rest, e, err := splitEntry(entries, v3)
		if err != nil {
			return err
		}
		f.offs = append(f.offs, off)
		if !v3 {
			f.texts = append(f.texts, at)
			if e.textLen > texts-at {
				return errors.New("text beyond the frame's texts")
			}
			at += e.textLen
		}
		entries = rest
	}
	if len(entries) != 0 || at != texts {
		return fmt.Errorf("%d bytes after its last slot", len(entries)+texts-at)
	}
	return nil
}

// entry is one slot's entry: its id, url and text (in a file of the
// format before NDTXT4; else the length of its text only).
type entry struct {
	id, url, text []byte
	textLen       int
	present       bool
}

// splitEntry splits one slot's entry off b, the entries of a file of the
// format before NDTXT4 (v3) holding the texts.
func splitEntry(b []byte, v3 bool) (rest []byte, e entry, err error) {
	l, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, e, errors.New("bad entry")
	}
	b = b[n:]
	if l == 0 {
		return b, e, nil
	}
	fields := [3][]byte{}
	for i := range fields {
		if i > 0 {
			if l, n = binary.Uvarint(b); n <= 0 {
				return nil, e, errors.New("bad field length")
			}
			b = b[n:]
		} else {
			l--
		}
		if l > uint64(len(b)) && (i < 2 || v3) {
			return nil, e, errors.New("field beyond the frame")
		}
		if i == 2 && !v3 {
			if l > math.MaxInt32 {
				return nil, e, errors.New("text length beyond any frame")
			}
			return b, entry{id: fields[0], url: fields[1], textLen: int(l), present: true}, nil
		}
		fields[i], b = b[:l:l], b[l:]
	}
	return b, entry{id: fields[0], url: fields[1], text: fields[2], textLen: len(fields[2]), present: true}, nil
}
