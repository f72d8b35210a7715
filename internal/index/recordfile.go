package index

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/sigfile"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/textstore"
	"github.com/neardup/neardup/internal/workfile"
)

// RecordReader reads the verification records of a chunk's documents
// (id, url, signature and, with exact verification, shingle set) by
// slot, whatever the chunk's file: a signature file of an index of
// version 1 or 2 holds them as they are, a text store (version 3) holds
// the documents' text, which the reader sketches again as map did. The
// records' slices are fresh. A reader is not safe for concurrent use.
type RecordReader interface {
	// Len is the number of slots.
	Len() int
	// Record reads the record of a slot; ok is false for an empty slot
	// (a document without shingles).
	Record(slot int) (rec sigfile.Record, ok bool, err error)
}

// OpenRecords opens a chunk's record file (a signature file or a text
// store, told apart by their trailers) for random access, checking its
// size and slot count against what its writer recorded. A text store's
// documents are sketched with p, which must be the parameters of the job
// that wrote it or comparable ones (Incomparable). The function
// returned closes it.
func OpenRecords(ctx context.Context, st storage.Opener, info fileinfo.Info, p job.Params) (RecordReader, func(), error) {
	c, done, err := OpenRecordFile(ctx, st, info)
	if err != nil {
		return nil, nil, err
	}
	if c.text == nil {
		return &sigRecords{r: c.sig, name: c.Name}, done, nil
	}
	rs, err := sketch.NewResketcher(p)
	if err != nil {
		done()
		return nil, nil, err
	}
	return &textRecords{r: c.text, rs: rs}, done, nil
}

// chunkFile is a chunk's record file, open for reading: a signature file
// (sig) or a text store (text).
type RecordFile struct {
	Name string
	sig  *sigfile.Reader
	text *textstore.Reader
}

// Text is the file's text store; nil for a signature file.
func (c *RecordFile) Text() *textstore.Reader { return c.text }
func (c *RecordFile) Len() int {
	if c.text != nil {
		return c.text.Len()
	}
	return c.sig.Len()
}

// Kinds of gathered record: the first byte of what gatherRecord returns.
const (
	gatheredSig  = 'S' // then a signature file's record (sigfile.Decode)
	gatheredText = 'T' // then a document alone (textstore.DecodeRecord)
)

// GatherRecord appends to dst the record of a slot as the gather stage
// sends it to verify: a signature file's record as it is, a text store's
// document alone (verify sketches it); ok is false for an empty slot.
func (c *RecordFile) GatherRecord(dst []byte, slot int) (raw []byte, ok bool, err error) {
	if c.text != nil {
		d, ok, err := c.text.Get(slot)
		if !ok || err != nil {
			return dst, ok, err
		}
		return textstore.AppendRecord(append(dst, gatheredText), d), true, nil
	}
	b, ok, err := c.sig.Raw(slot)
	if err != nil {
		return dst, false, fmt.Errorf("%s: %w", c.Name, err)
	}
	if !ok {
		return dst, false, nil
	}
	if _, err := sigfile.Decode(b); err != nil {
		return dst, false, fmt.Errorf("%s: slot %d: %w", c.Name, slot, err)
	}
	return append(append(dst, gatheredSig), b...), true, nil
}

// GatherSize estimates the bytes of the gathered records of the slots of
// docs.
func (c *RecordFile) GatherSize(docs []int64) int64 {
	if c.text != nil {
		// S2 compresses a document alone by about a sixth, zstd a
		// frame of them by three quarters (the 10M corpus: 2.0 KB a
		// gathered record, 0.58 KB a document stored): four times
		// the stored bytes.
		return 4 * c.text.Bytes() / int64(max(1, c.text.Len())) * int64(len(docs))
	}
	var size int64
	for _, doc := range docs {
		size += c.sig.Size(int(uint32(doc)))
	}
	return size
}

// CheckGathered checks a gathered record's checksum.
func CheckGathered(raw []byte) error {
	_, err := DecodeGathered(raw, nil)
	return err
}

// DecodeGathered decodes a gathered record, sketching a document with rs
// (with rs nil, it only checks the record).
func DecodeGathered(raw []byte, rs *sketch.Resketcher) (sigfile.Record, error) {
	if len(raw) == 0 {
		return sigfile.Record{}, fmt.Errorf("empty record: %w", sigfile.ErrCorrupt)
	}
	switch raw[0] {
	case gatheredSig:
		return sigfile.Decode(raw[1:])
	case gatheredText:
		d, err := textstore.DecodeRecord(raw[1:])
		if err != nil || rs == nil {
			return sigfile.Record{}, err
		}
		return rs.Record(d)
	}
	return sigfile.Record{}, fmt.Errorf("record of kind %q: %w", raw[0], sigfile.ErrCorrupt)
}

// DecodeGatheredEntry is DecodeGathered for verification: a document
// sketched again comes with its shingle set decoded, and its record
// without the set's bytes (Resketcher.Entry); a stored record's set is
// nil (its Shingles hold it). rs must not be nil.
func DecodeGatheredEntry(raw []byte, rs *sketch.Resketcher) (sigfile.Record, []uint64, error) {
	if len(raw) > 0 && raw[0] == gatheredText {
		d, err := textstore.DecodeRecord(raw[1:])
		if err != nil {
			return sigfile.Record{}, nil, err
		}
		return rs.Entry(d)
	}
	rec, err := DecodeGathered(raw, rs)
	return rec, nil, err
}

// OpenChunkRecords opens the record file of a chunk, checking it against
// what its map task recorded: its set file in the work area when map
// wrote one (--gather sets: the records as map sketched them), else its
// text store.
func OpenChunkRecords(ctx context.Context, st storage.Opener, maps map[int]job.MapResult, chunk int) (*RecordFile, func(), error) {
	mr, ok := maps[chunk]
	if !ok {
		return nil, nil, fmt.Errorf("chunk %d has no map result", chunk)
	}
	if mr.SetFile != nil {
		return OpenRecordFile(ctx, st, *mr.SetFile)
	}
	return OpenRecordFile(ctx, st, mr.SigFile)
}

// SetRecords reads the records of a signature file (a chunk's set file)
// by slot; nil for a text store. Its records' slices are fresh, and it
// may be read by several goroutines at once.
func (c *RecordFile) SetRecords() RecordReader {
	if c.sig == nil {
		return nil
	}
	return &sigRecords{r: c.sig, name: c.Name}
}

// ReusedSetRecords is SetRecords for one goroutine that copies what it
// keeps of each record: every record is read into one buffer, which its
// slices share until the next Record call. Nil for a text store.
func (c *RecordFile) ReusedSetRecords() RecordReader {
	if c.sig == nil {
		return nil
	}
	return &sigRecords{r: c.sig, name: c.Name, reuse: true}
}

// OpenRecordFile opens a record file, checking its size and slot count
// against what its writer recorded.
func OpenRecordFile(ctx context.Context, st storage.Opener, info fileinfo.Info) (*RecordFile, func(), error) {
	f, err := st.Open(ctx, info.Name)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*RecordFile, func(), error) {
		f.Close()
		return nil, nil, err
	}
	if f.Size() != info.Bytes {
		return fail(fmt.Errorf("%s has %d bytes, its writer wrote %d: %w", info.Name, f.Size(), info.Bytes, sigfile.ErrCorrupt))
	}
	var tail [8]byte
	if f.Size() >= 8 {
		if _, err := f.ReadAt(tail[:], f.Size()-8); err != nil {
			return fail(fmt.Errorf("%s: %w", info.Name, err))
		}
	}
	c := &RecordFile{Name: info.Name}
	closeFile := func() { f.Close() }
	switch {
	case textstore.IsTextStore(tail[:]):
		if c.text, err = textstore.NewReader(f, f.Size(), info.Name); err != nil {
			return fail(err)
		}
		closeFile = func() { c.text.Close(); f.Close() }
	case sigfile.IsSigFile(tail[:]):
		if c.sig, err = sigfile.NewReader(f, f.Size()); err != nil {
			return fail(fmt.Errorf("%s: %w", info.Name, err))
		}
	default:
		return fail(fmt.Errorf("%s: offset %d: neither a text store's trailer nor a signature file's (truncated or damaged?): %w",
			info.Name, max(0, f.Size()-8), textstore.ErrCorrupt))
	}
	if int64(c.Len()) != info.Rows {
		closeFile()
		return nil, nil, fmt.Errorf("%s has %d slots, want %d: %w", info.Name, c.Len(), info.Rows, sigfile.ErrCorrupt)
	}
	return c, sync.OnceFunc(closeFile), nil
}

// sigRecords reads a signature file.
type sigRecords struct {
	r    *sigfile.Reader
	name string
	// reuse reads every record into buf, which the records' slices then
	// share until the next one: for a reader that copies what it keeps
	// (verify decodes the set and the signature at once), so that the
	// bytes it reads are not each fresh memory.
	reuse bool
	buf   []byte
}

func (s *sigRecords) Len() int { return s.r.Len() }

func (s *sigRecords) Record(slot int) (sigfile.Record, bool, error) {
	var dst []byte // fresh
	if s.reuse {
		dst = s.buf[:0]
	}
	raw, ok, err := s.r.AppendRaw(dst, slot)
	if err != nil {
		return sigfile.Record{}, false, fmt.Errorf("%s: %w", s.name, err)
	}
	if !ok {
		return sigfile.Record{}, false, nil
	}
	if s.reuse {
		s.buf = raw
	}
	rec, err := sigfile.Decode(raw)
	if err != nil {
		return sigfile.Record{}, false, fmt.Errorf("%s: slot %d: %w", s.name, slot, err)
	}
	return rec, true, nil
}

// textRecords reads a text store, sketching its documents again.
type textRecords struct {
	r  *textstore.Reader
	rs *sketch.Resketcher
}

func (t *textRecords) Len() int { return t.r.Len() }

// ShareFrames makes the text store's reader keep its decoded frames in c
// too (textstore.Reader.ShareFrames).
func (t *textRecords) ShareFrames(c textstore.FrameCache, key string) { t.r.ShareFrames(c, key) }

func (t *textRecords) Record(slot int) (sigfile.Record, bool, error) {
	d, ok, err := t.r.Get(slot)
	if !ok || err != nil {
		return sigfile.Record{}, ok, err
	}
	rec, err := t.rs.Record(d)
	if err != nil {
		return sigfile.Record{}, false, fmt.Errorf("slot %d: %w", slot, err)
	}
	return rec, true, nil
}

// StoredTexts returns the texts of docs, documents of the chunk whose
// record file info is, as its text store holds them: the text map read
// and sketched. ok is false, with no error, when the file is not a text
// store (a signature file of an index of version 1 or 2) or is not there
// (a job without an index removes its text stores once gathered).
func StoredTexts(ctx context.Context, st storage.Opener, info fileinfo.Info, docs []int64) (texts map[int64]string, ok bool, err error) {
	c, done, err := OpenRecordFile(ctx, st, info)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer done()
	if c.text == nil {
		return nil, false, nil
	}
	texts = make(map[int64]string, len(docs))
	for _, d := range docs {
		doc, present, err := c.text.Get(job.SlotOf(d))
		if err != nil {
			return nil, false, err
		}
		if !present {
			return nil, false, fmt.Errorf("%s: slot %d (document %d) holds no text", info.Name, job.SlotOf(d), d)
		}
		texts[d] = string(doc.Text)
	}
	return texts, true, nil
}

// CopyRecords adds the gathered records of docs, sorted, all in the chunk
// of f, to scr. A text store's reader then reuses its frames' memory
// (textstore.Reader.ReuseFrames): texts read from f before are not valid
// after.
func (f *RecordFile) CopyRecords(ctx context.Context, docs []int64, scr *workfile.Scratch) error {
	if f.text != nil {
		f.text.ReuseFrames() // in slot order, each record copied
	}
	var raw []byte
	for i, doc := range docs {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var ok bool
		var err error
		raw, ok, err = f.GatherRecord(raw[:0], int(uint32(doc)))
		if err != nil {
			return fmt.Errorf("document %d: %w", doc, err)
		}
		if !ok {
			return fmt.Errorf("%s: document %d has no signature", f.Name, doc)
		}
		if err := scr.Add(doc, raw); err != nil {
			return err
		}
	}
	return nil
}
