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
