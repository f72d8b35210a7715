package workfile

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"syscall"

	"github.com/neardup/neardup/internal/localfile"
	"github.com/neardup/neardup/internal/storage"
)

// FillScratch returns a scratch for about size bytes of records, held in
// memory up to memory bytes, filled by fill (and removed if it fails).
func FillScratch(kind string, size, memory int64, fill func(*Scratch) error) (*Scratch, error) {
	scr, err := NewScratch(kind, size, memory)
	if err != nil {
		return nil, err
	}
	if err := fill(scr); err != nil {
		scr.Remove()
		return nil, err
	}
	if err := scr.done(); err != nil {
		scr.Remove()
		return nil, err
	}
	return scr, nil
}

var errOutOfOrder = errors.New("documents out of order")

// ScratchMemory is the size up to which a scratch of copies of records
// read from elsewhere (verify's, of gather files not on local disk) is
// held in memory rather than in a file.
const ScratchMemory = 8 << 20

// Scratch holds records added in increasing document order and then read
// by document, with an index of 16 bytes per record in memory. Up to the
// memory its creator gives it, it holds its records in memory; past it,
// it is a file in the temporary directory ($TMPDIR), the task's own,
// removed when the task ends (a scratch whose records outgrow its memory
// moves them to such a file and goes on there). A scratch of references (AddRef) holds no records: they
// stay in its files, which it closes when removed. Its files, once done,
// are mapped into memory where they are local: a record read is then a
// copy from the mapping, not a system call (at 10M documents, 7.5 million
// records read twice, by gather and by verify); a fault reading a mapping
// (its disk failing) is an error naming the file, as a failed read is.
type Scratch struct {
	kind   string   // in the name of its file
	memory int64    // the bytes of records it holds in memory at most
	mem    []byte   // the records, when held in memory
	f      *os.File // the records, otherwise
	mapped []byte   // f's records, mapped once done (nil: read by ReadAt)
	bw     *bufio.Writer
	docs   []int64
	offs   []int64 // len(docs)+1 once done
	off    int64
	// files are the files of a scratch of references; refs give each
	// record's file (an index in files) and length, offs its offset there.
	// views are the files' bytes where mapped (nil for a file read by
	// ReadAt: not local, or not mapped).
	files []storage.File
	views [][]byte
	refs  []scratchRef
	// unmaps release the mappings.
	unmaps []func() error
}

type scratchRef struct {
	file int32
	n    int32
}

// NewScratch returns a scratch for about size bytes of records (an
// estimate), held in memory up to memory bytes: in a file from the start
// when size is larger.
func NewScratch(kind string, size, memory int64) (*Scratch, error) {
	s := &Scratch{kind: kind, memory: memory}
	if size <= memory {
		s.mem = make([]byte, 0, max(size, 0))
		return s, nil
	}
	if err := s.toFile(); err != nil {
		return nil, err
	}
	return s, nil
}

// toFile moves the scratch's records to a file of its own, where it adds
// the next ones.
func (s *Scratch) toFile() error {
	f, err := os.CreateTemp("", "neardup-"+s.kind+"-*")
	if err != nil {
		return fmt.Errorf("scratch file: %w", err)
	}
	s.f, s.bw = f, bufio.NewWriterSize(f, 1<<20)
	if _, err := s.bw.Write(s.mem); err != nil {
		return fmt.Errorf("scratch file %s: %w", f.Name(), err)
	}
	s.mem = nil
	return nil
}

// Add appends the record of doc, which must follow the last one added.
func (s *Scratch) Add(doc int64, raw []byte) error {
	if err := s.next(doc); err != nil {
		return err
	}
	if s.f == nil && int64(len(s.mem)+len(raw)) > s.memory {
		if err := s.toFile(); err != nil {
			return err
		}
	}
	if s.f == nil {
		if need := len(s.mem) + len(raw); need > cap(s.mem) {
			// Grown by hand: append's growth would pass the memory given.
			grown := make([]byte, len(s.mem), min(max(2*cap(s.mem), need), int(s.memory)))
			copy(grown, s.mem)
			s.mem = grown
		}
		s.mem = append(s.mem, raw...)
	} else if _, err := s.bw.Write(raw); err != nil {
		return fmt.Errorf("scratch file %s: %w", s.f.Name(), err)
	}
	s.docs = append(s.docs, doc)
	s.offs = append(s.offs, s.off)
	s.off += int64(len(raw))
	return nil
}

// AddRef records that the record of doc, which must follow the last one
// added, is the n bytes at off in the scratch's last file.
func (s *Scratch) AddRef(doc int64, off int64, n int) error {
	if err := s.next(doc); err != nil {
		return err
	}
	s.docs = append(s.docs, doc)
	s.offs = append(s.offs, off)
	s.refs = append(s.refs, scratchRef{file: int32(len(s.files) - 1), n: int32(n)})
	return nil
}

// next checks that doc follows the last document added.
func (s *Scratch) next(doc int64) error {
	if n := len(s.docs); n > 0 && doc <= s.docs[n-1] {
		return fmt.Errorf("document %d after %d: %w", doc, s.docs[n-1], errOutOfOrder)
	}
	return nil
}

// done ends the adding, and maps the scratch's files (a file that cannot
// be mapped is read by ReadAt).
func (s *Scratch) done() error {
	if s.files != nil {
		for _, f := range s.files {
			b, unmap, ok, err := storage.Map(f)
			if !ok || err != nil {
				b = nil
			} else {
				s.unmaps = append(s.unmaps, unmap)
			}
			s.views = append(s.views, b)
		}
		return nil
	}
	s.offs = append(s.offs, s.off)
	if s.f == nil {
		return nil
	}
	if err := s.bw.Flush(); err != nil {
		return fmt.Errorf("scratch file %s: %w", s.f.Name(), err)
	}
	if b, unmap, err := localfile.Map(s.f, s.off); err == nil && b != nil {
		s.mapped = b
		s.unmaps = append(s.unmaps, unmap)
	}
	return nil
}

// Get returns the record of doc; it is an error if there is none. The
// slice must not be modified.
func (s *Scratch) Get(_ context.Context, doc int64) ([]byte, error) {
	i, ok := slices.BinarySearch(s.docs, doc)
	if !ok {
		return nil, fmt.Errorf("no signature gathered for document %d", doc)
	}
	if s.files != nil {
		r := s.refs[i]
		if v := s.views[r.file]; v != nil {
			lo, hi := s.offs[i], s.offs[i]+int64(r.n)
			if lo < 0 || hi > int64(len(v)) {
				return nil, fmt.Errorf("the record of document %d at %d+%d is past the end of %d bytes: %w", doc, lo, r.n, len(v), ErrCorrupt)
			}
			return copyMapped(v[lo:hi], lo, fileName(s.files[r.file]))
		}
		b := make([]byte, r.n)
		if err := readAt(s.files[r.file], b, s.offs[i]); err != nil {
			return nil, fmt.Errorf("reading the record of document %d at %d: %w", doc, s.offs[i], err)
		}
		return b, nil
	}
	lo, hi := s.offs[i], s.offs[i+1]
	if s.f == nil {
		return s.mem[lo:hi:hi], nil
	}
	if s.mapped != nil {
		return copyMapped(s.mapped[lo:hi], lo, s.f.Name())
	}
	b := make([]byte, hi-lo)
	if err := readAt(s.f, b, lo); err != nil {
		return nil, fmt.Errorf("scratch file %s: %w", s.f.Name(), err)
	}
	return b, nil
}

// copyMapped returns a copy of b, the bytes at off of the mapped file
// name: a fault reading them (an I/O error under the mapping) is an error
// naming the file and wrapping syscall.EIO, as a failed read's would (a
// transient error: the task is retried), not the process's crash.
func copyMapped(b []byte, off int64, name string) (out []byte, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			re, fault := r.(interface{ Addr() uintptr })
			if !fault {
				panic(r)
			}
			err = fmt.Errorf("reading %s at %d+%d (mapped): %v: %w", name, off, len(b), re, syscall.EIO)
		}
	}()
	out = make([]byte, len(b))
	copy(out, b)
	return out, nil
}

// fileName names f in errors: its name when it has one.
func fileName(f storage.File) string {
	if n, ok := f.(interface{ Name() string }); ok {
		return n.Name()
	}
	return "a gather file"
}

// Remove releases the scratch's mappings, closes its files and removes
// its temporary file.
func (s *Scratch) Remove() {
	for _, unmap := range s.unmaps {
		unmap()
	}
	s.unmaps, s.views, s.mapped = nil, nil, nil
	for _, f := range s.files {
		f.Close()
	}
	s.files, s.docs = nil, nil // a Get after Remove finds nothing
	if s.f != nil {
		s.f.Close()
		os.Remove(s.f.Name())
	}
}

// Docs are the documents whose records the scratch holds, in order.
func (s *Scratch) Docs() []int64 { return s.docs }

// InPlace reports whether the scratch reads its records where they are
// (in local gather files) rather than from a copy.
func (s *Scratch) InPlace() bool { return len(s.files) > 0 }
