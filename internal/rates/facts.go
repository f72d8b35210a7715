package rates

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/storage"
)

// A facts file holds what the rates pass counts of each document of a
// chunk (the host of its URL, its input file and its bytes of text), in
// document order: the chunk's map task writes it as it reads the
// documents (job.RatesWorkFile), so that the rates pass at the job's end
// reads a few bytes a document instead of the chunk's docs/ file, and does
// not parse every URL again. Its bytes are one row a document: the slots
// passed over since the last row (0 but after a document map numbered and
// did not write), then the host and the file, each a name, then the bytes
// of text; every number an unsigned varint. A name is 0 followed by its
// length and bytes, which then take the slot of a table of nameSlots that
// its hash picks, or s+1 for the name in slot s: writer and reader keep
// the same table, so each holds nameSlots names whatever the chunk's
// documents. Its fileinfo.Info (size, checksum, rows) is checked as it is
// read.

// nameSlots is the size of the table of names of a kind a facts file's
// writer and reader keep.
const nameSlots = 1 << 12

// nameSlot is the slot of name in a table of nameSlots.
func nameSlot(name string) uint64 { return xxhash.Sum64String(name) & (nameSlots - 1) }

// ErrCorruptFacts marks a facts file that does not hold what its writer
// recorded.
var ErrCorruptFacts = errors.New("corrupt rates facts")

// FactsWriter writes a chunk's facts file, a document at a time.
type FactsWriter struct {
	name         string
	w            storage.Writer
	sum          *fileinfo.Summer
	bw           *bufio.Writer
	hosts, files nameTable
	row          []byte
	rows         int64
	next         int64 // the slot after the last document's
}

// nameTable is the table of names of a kind that a facts file's writer
// and reader keep alike.
type nameTable struct {
	names [nameSlots]string
	used  [nameSlots]bool
}

// add puts name in its slot.
func (t *nameTable) add(name string) {
	slot := nameSlot(name)
	t.names[slot], t.used[slot] = name, true
}

// NewFactsWriter starts writing the facts file name in st.
func NewFactsWriter(ctx context.Context, st storage.Creator, name string) (*FactsWriter, error) {
	w, err := st.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	sum := fileinfo.NewSummer(w)
	return &FactsWriter{name: name, w: w, sum: sum, bw: bufio.NewWriterSize(sum, 64<<10)}, nil
}

// Add notes the document of slot, after the last one's: its URL (as Host
// reads it), the input file it was read from and its bytes of text.
func (f *FactsWriter) Add(slot int64, url, file string, bytes int64) error {
	if slot < f.next {
		return fmt.Errorf("writing %s: document %d after %d", f.name, slot, f.next-1)
	}
	f.row = binary.AppendUvarint(f.row[:0], uint64(slot-f.next))
	f.row = f.hosts.append(f.row, Host(url))
	f.row = f.files.append(f.row, file)
	f.row = binary.AppendUvarint(f.row, uint64(bytes))
	f.rows++
	f.next = slot + 1
	if _, err := f.bw.Write(f.row); err != nil {
		return fmt.Errorf("writing %s: %w", f.name, err)
	}
	return nil
}

// append appends name: its slot's number plus one when the table holds
// it there, else 0 and the name, which takes the slot.
func (t *nameTable) append(dst []byte, name string) []byte {
	if slot := nameSlot(name); t.used[slot] && t.names[slot] == name {
		return binary.AppendUvarint(dst, slot+1)
	}
	t.add(name)
	dst = append(dst, 0)
	return append(binary.AppendUvarint(dst, uint64(len(name))), name...)
}

// Close commits the file and describes it.
func (f *FactsWriter) Close() (fileinfo.Info, error) {
	if err := f.bw.Flush(); err != nil {
		f.w.Abort()
		return fileinfo.Info{}, fmt.Errorf("writing %s: %w", f.name, err)
	}
	if err := f.w.Commit(); err != nil {
		return fileinfo.Info{}, err
	}
	return f.sum.Info(f.name, f.rows), nil
}

// Abort discards the file unless it was committed.
func (f *FactsWriter) Abort() { f.w.Abort() }

// readFacts reads the facts file info describes, calling fn with each
// document's slot, host, file and bytes, in order, in one pass: the file
// is checked against info (size, checksum, rows) as it is read, so an
// error wrapping ErrCorruptFacts may come after fn was called for rows of
// a damaged file (the caller counts that chunk again otherwise; see
// tallyAt).
func readFacts(ctx context.Context, st storage.Opener, info fileinfo.Info, fn func(slot int64, host, file string, bytes int64) error) error {
	f, err := st.Open(ctx, info.Name)
	if err != nil {
		return err
	}
	defer f.Close()
	if f.Size() != info.Bytes {
		return fmt.Errorf("%s: %d bytes, its writer wrote %d: %w", info.Name, f.Size(), info.Bytes, ErrCorruptFacts)
	}
	h := xxhash.New()
	d := factsDecoder{r: bufio.NewReaderSize(io.TeeReader(io.NewSectionReader(f, 0, info.Bytes), h), 64<<10)}
	var rows, slot int64
	for ; ; rows++ {
		if rows%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		gap, ok := d.uvarint(true)
		if !ok {
			break
		}
		host, file := d.name(&d.hosts), d.name(&d.files)
		bytes, _ := d.uvarint(false)
		if d.err != nil {
			break
		}
		slot += int64(gap)
		if err := fn(slot, host, file, int64(bytes)); err != nil {
			return err
		}
		slot++
	}
	switch sum := h.Sum64(); {
	case d.err != nil:
		return fmt.Errorf("%s: row %d (byte %d): %w", info.Name, rows, d.off, d.err)
	case sum != info.Checksum:
		return fmt.Errorf("%s: checksum %x, its writer's %x: %w", info.Name, sum, info.Checksum, ErrCorruptFacts)
	case rows != info.Rows:
		return fmt.Errorf("%s: %d rows, its writer wrote %d: %w", info.Name, rows, info.Rows, ErrCorruptFacts)
	}
	return nil
}

// factsDecoder reads a facts file's rows, keeping the writer's tables of
// names; a field that does not decode sets err.
type factsDecoder struct {
	r            *bufio.Reader
	off          int64 // the bytes read
	err          error
	hosts, files nameTable
}

// ReadByte reads a byte, counting it (for binary.ReadUvarint).
func (d *factsDecoder) ReadByte() (byte, error) {
	c, err := d.r.ReadByte()
	if err == nil {
		d.off++
	}
	return c, err
}

// uvarint reads an unsigned varint; ok is false at the end of the file
// (where atEnd allows it) or on an error (err set).
func (d *factsDecoder) uvarint(atEnd bool) (uint64, bool) {
	if d.err != nil {
		return 0, false
	}
	v, err := binary.ReadUvarint(d)
	switch {
	case errors.Is(err, io.EOF) && atEnd: // no byte of a next row
		return 0, false
	case err != nil:
		d.fail(err)
		return 0, false
	}
	return v, true
}

func (d *factsDecoder) fail(err error) {
	if d.err == nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("cut short: %w", ErrCorruptFacts)
		} else if !errors.Is(err, ErrCorruptFacts) {
			err = fmt.Errorf("%w: %w", ErrCorruptFacts, err)
		}
		d.err = err
	}
}

// name reads a name: a slot's, or a new one, which takes its slot.
func (d *factsDecoder) name(t *nameTable) string {
	ref, ok := d.uvarint(false)
	switch {
	case !ok:
		return ""
	case ref > 0 && ref <= nameSlots && t.used[ref-1]:
		return t.names[ref-1]
	case ref > 0:
		d.fail(fmt.Errorf("a name in slot %d, which holds none: %w", ref-1, ErrCorruptFacts))
		return ""
	}
	n, ok := d.uvarint(false)
	if !ok {
		return ""
	}
	if n > 1<<20 {
		d.fail(fmt.Errorf("a name of %d bytes: %w", n, ErrCorruptFacts))
		return ""
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(d.r, b); err != nil {
		d.fail(err)
		return ""
	}
	d.off += int64(n)
	s := string(b)
	t.add(s)
	return s
}
