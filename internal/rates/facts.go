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
// not parse every URL again. Its bytes are one row a document: the host,
// then the file, each an unsigned varint (i for the i-th name of its kind
// written before, counting from 1, or 0 followed by a name as a varint
// length and its bytes), then the bytes of text as an unsigned varint.
// Its fileinfo.Info (rows, bytes, checksum) is checked before it is read.

// ErrCorruptFacts marks a facts file that does not hold what its writer
// recorded.
var ErrCorruptFacts = errors.New("corrupt rates facts")

// FactsWriter writes a chunk's facts file, a document at a time.
type FactsWriter struct {
	name  string
	w     storage.Writer
	sum   *fileinfo.Summer
	bw    *bufio.Writer
	hosts *nameCache
	files *nameCache
	row   []byte
	rows  int64
}

// NewFactsWriter starts writing the facts file name in st.
func NewFactsWriter(ctx context.Context, st storage.Creator, name string) (*FactsWriter, error) {
	w, err := st.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	sum := fileinfo.NewSummer(w)
	return &FactsWriter{name: name, w: w, sum: sum, bw: bufio.NewWriterSize(sum, 64<<10),
		hosts: &nameCache{}, files: &nameCache{}}, nil
}

// Add notes the next document: its URL (as Host reads it), the input
// file it was read from and its bytes of text.
func (f *FactsWriter) Add(url, file string, bytes int64) error {
	f.row = f.hosts.append(f.row[:0], Host(url))
	f.row = f.files.append(f.row, file)
	f.row = binary.AppendUvarint(f.row, uint64(bytes))
	f.rows++
	if _, err := f.bw.Write(f.row); err != nil {
		return fmt.Errorf("writing %s: %w", f.name, err)
	}
	return nil
}

// nameCache refers to the names of one kind written recently: a
// direct-mapped cache by the name's hash, of fixed size, so that a
// writer's memory does not grow with the chunk's distinct hosts. A name
// it does not hold (new, or pushed out by another) is written again,
// which costs bytes, never correctness: the reader numbers every name
// written, repeats included.
type nameCache struct {
	refs  [nameCacheSize]uint64 // a slot's name's number, plus one; 0 for none
	names [nameCacheSize]string
	n     uint64 // the names written
}

// nameCacheSize is the slots of a nameCache.
const nameCacheSize = 1 << 12

// append appends name: a reference to the same name written before, or
// 0 and the name.
func (c *nameCache) append(dst []byte, name string) []byte {
	slot := xxhash.Sum64String(name) & (nameCacheSize - 1)
	if r := c.refs[slot]; r != 0 && c.names[slot] == name {
		return binary.AppendUvarint(dst, r)
	}
	c.n++
	c.refs[slot], c.names[slot] = c.n, name
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

// readFacts reads the facts file info describes, checked against it,
// calling fn with each document's host, file and bytes, in order.
func readFacts(ctx context.Context, st storage.Opener, info fileinfo.Info, fn func(host, file string, bytes int64) error) error {
	f, err := st.Open(ctx, info.Name)
	if err != nil {
		return err
	}
	defer f.Close()
	if f.Size() != info.Bytes {
		return fmt.Errorf("%s: %d bytes, its writer wrote %d: %w", info.Name, f.Size(), info.Bytes, ErrCorruptFacts)
	}
	buf := make([]byte, info.Bytes)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, info.Bytes), buf); err != nil {
		return fmt.Errorf("reading %s: %w", info.Name, err)
	}
	if sum := xxhash.Sum64(buf); sum != info.Checksum {
		return fmt.Errorf("%s: checksum %x, its writer's %x: %w", info.Name, sum, info.Checksum, ErrCorruptFacts)
	}
	var hosts, files []string
	d := factsDecoder{b: buf}
	var rows int64
	for ; len(d.b) > 0; rows++ {
		if rows%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		host, file := d.name(&hosts), d.name(&files)
		bytes := d.uvarint()
		if d.bad {
			return fmt.Errorf("%s: row %d (byte %d) does not decode: %w", info.Name, rows, len(buf)-len(d.b), ErrCorruptFacts)
		}
		if err := fn(host, file, int64(bytes)); err != nil {
			return err
		}
	}
	if rows != info.Rows {
		return fmt.Errorf("%s: %d rows, its writer wrote %d: %w", info.Name, rows, info.Rows, ErrCorruptFacts)
	}
	return nil
}

// factsDecoder reads a facts file's rows; a field that does not decode
// sets bad.
type factsDecoder struct {
	b   []byte
	bad bool
}

func (d *factsDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

// name reads a name: a reference to one of seen, or a new one, which it
// adds.
func (d *factsDecoder) name(seen *[]string) string {
	ref := d.uvarint()
	switch {
	case d.bad:
		return ""
	case ref > 0 && ref <= uint64(len(*seen)):
		return (*seen)[ref-1]
	case ref > 0:
		d.bad, d.b = true, nil
		return ""
	}
	n := d.uvarint()
	if d.bad || n > uint64(len(d.b)) {
		d.bad, d.b = true, nil
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	*seen = append(*seen, s)
	return s
}
