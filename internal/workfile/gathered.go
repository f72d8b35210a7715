package workfile

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/cespare/xxhash/v2"
	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
)

// AppendGathered appends one record of a gather file: the document, the
// verify chunk, the length of the signature record and the record.
func AppendGathered(buf []byte, r Request, raw []byte) []byte {
	buf = binary.LittleEndian.AppendUint64(buf, uint64(r.Doc))
	buf = binary.LittleEndian.AppendUint32(buf, uint32(r.Dest))
	buf = binary.AppendUvarint(buf, uint64(len(raw)))
	return append(buf, raw...)
}

// GatheredReader reads the records of a gather file or range.
type GatheredReader struct {
	br   *bufio.Reader
	head [12]byte
	raw  []byte
	max  int64
	pos  int64 // the bytes read: the end of the last record
}

// NewGatheredReader reads the records of r, refusing a record longer than
// max bytes before it allocates for it.
func NewGatheredReader(r io.Reader, max int64) *GatheredReader {
	return &GatheredReader{br: bufio.NewReaderSize(r, 1<<20), max: max}
}

// Next reads one record; ok is false at the end. The record's bytes are
// valid until the Next call.
func (g *GatheredReader) Next() (r Request, raw []byte, ok bool, err error) {
	if _, err := io.ReadFull(g.br, g.head[:]); err == io.EOF {
		return Request{}, nil, false, nil
	} else if err != nil {
		return Request{}, nil, false, err
	}
	r = Request{Doc: int64(binary.LittleEndian.Uint64(g.head[:])), Dest: int32(binary.LittleEndian.Uint32(g.head[8:]))}
	n, err := binary.ReadUvarint(g.br)
	if err != nil || n > uint64(g.max) {
		return Request{}, nil, false, errors.New("bad record length")
	}
	g.raw = slices.Grow(g.raw[:0], int(n))[:n]
	if _, err := io.ReadFull(g.br, g.raw); err != nil {
		return Request{}, nil, false, err
	}
	g.pos += int64(len(g.head) + uvarintLen(n) + len(g.raw))
	return r, g.raw, true, nil
}

// GroupRanges lays out the records of reqs, grouped by verify chunk, as a
// gather file named name: raw gives request i's signature record, emit (if
// not nil) takes each encoded record in file order. It returns each verify
// chunk's range: offset, size, record count and xxhash, as ReadGathered
// checks them.
func GroupRanges(ctx context.Context, name string, reqs []Request, raw func(i int) ([]byte, error), emit func(rec []byte) error) (map[int]fileinfo.Info, error) {
	ranges := map[int]fileinfo.Info{}
	run := xxhash.New()
	var rec []byte
	var off int64
	for lo := 0; lo < len(reqs); {
		dest, at := reqs[lo].Dest, off
		run.Reset()
		hi := lo
		for ; hi < len(reqs) && reqs[hi].Dest == dest; hi++ {
			if hi%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			b, err := raw(hi)
			if err != nil {
				return nil, err
			}
			rec = AppendGathered(rec[:0], reqs[hi], b)
			run.Write(rec)
			if emit != nil {
				if err := emit(rec); err != nil {
					return nil, err
				}
			}
			off += int64(len(rec))
		}
		ranges[int(dest)] = fileinfo.Info{Name: name, Rows: int64(hi - lo), Checksum: run.Sum64(), Bytes: off - at, Offset: at}
		lo = hi
	}
	return ranges, nil
}

// ReadGathered indexes the records gathered for the verify task of chunk
// from every gather file, in chunk order and so in document order,
// checking each range against what its writer recorded. Ranges in local
// files are read in place (the task reads each record from its gather
// file, which stays until the verify stage ends); ranges in an object
// store are copied to a scratch file first, which random reads need.
func ReadGathered(ctx context.Context, st storage.Opener, chunk int, gathers []job.GatherResult) (*Scratch, error) {
	list := slices.Clone(gathers)
	slices.SortFunc(list, func(x, y job.GatherResult) int { return cmp.Compare(x.Chunk, y.Chunk) })
	var size int64 // an upper bound: with the records' headers
	var ranges int
	for _, g := range list {
		if info, has := g.Ranges[chunk]; has {
			if info.Offset < 0 || info.Bytes < 0 {
				return nil, fmt.Errorf("%s: range %d+%d: %w", info.Name, info.Offset, info.Bytes, ErrCorrupt)
			}
			size += min(info.Bytes, math.MaxInt64-size)
			ranges++
		}
	}
	if ranges <= maxInPlaceRanges {
		scr, local, err := readInPlace(ctx, st, chunk, list)
		if err != nil || local {
			return scr, err
		}
	}
	return FillScratch("verify", size, ScratchMemory, func(scr *Scratch) error {
		for _, g := range list {
			info, has := g.Ranges[chunk]
			if !has {
				continue
			}
			if err := copyRange(ctx, st, chunk, info, scr, nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// maxInPlaceRanges bounds the gather files a verify task holds open to
// read its records in place; beyond, they are copied to a scratch file.
const maxInPlaceRanges = 256

// readInPlace indexes the ranges of list for chunk where they are, when
// every one is in a local file (local is false, and nothing is held
// open, when one is not).
func readInPlace(ctx context.Context, st storage.Opener, chunk int, list []job.GatherResult) (*Scratch, bool, error) {
	scr := &Scratch{}
	for _, g := range list {
		info, has := g.Ranges[chunk]
		if !has {
			continue
		}
		f, err := st.Open(ctx, info.Name)
		if err != nil {
			scr.Remove()
			return nil, false, err
		}
		if !storage.IsLocal(f) {
			f.Close()
			scr.Remove()
			return nil, false, nil
		}
		scr.files = append(scr.files, f)
		if err := copyRange(ctx, st, chunk, info, scr, f); err != nil {
			scr.Remove()
			return nil, false, err
		}
	}
	if err := scr.done(); err != nil {
		scr.Remove()
		return nil, false, err
	}
	return scr, true, nil
}

// copyRange streams one range of a gather file into scr; when in is not
// nil it is the file, open, and the range is indexed in place in scr
// (its last file) instead of copied.
func copyRange(ctx context.Context, st storage.Opener, chunk int, info fileinfo.Info, scr *Scratch, in storage.File) error {
	f := in
	if f == nil {
		var err error
		if f, err = st.Open(ctx, info.Name); err != nil {
			return err
		}
		defer f.Close()
	}
	if !inFile(info, f.Size()) {
		return fmt.Errorf("%s: range %d+%d does not fit its %d bytes: %w", info.Name, info.Offset, info.Bytes, f.Size(), ErrCorrupt)
	}
	sum := xxhash.New()
	gr := NewGatheredReader(io.TeeReader(io.NewSectionReader(f, info.Offset, info.Bytes), sum), info.Bytes)
	corrupt := func(rows int64, what string) error {
		return fmt.Errorf("%s: range %d+%d, record %d: %s: %w", info.Name, info.Offset, info.Bytes, rows, what, ErrCorrupt)
	}
	var rows int64
	for ; ; rows++ {
		if rows%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		r, raw, ok, err := gr.Next()
		if err != nil {
			return corrupt(rows, err.Error())
		}
		if !ok {
			break
		}
		if int(r.Dest) != chunk {
			return corrupt(rows, fmt.Sprintf("a record for chunk %d", r.Dest))
		}
		if in != nil {
			err = scr.AddRef(r.Doc, info.Offset+gr.pos-int64(len(raw)), len(raw))
		} else {
			err = scr.Add(r.Doc, raw)
		}
		if err != nil {
			if errors.Is(err, errOutOfOrder) {
				return corrupt(rows, err.Error())
			}
			return err
		}
	}
	if rows != info.Rows || sum.Sum64() != info.Checksum {
		return fmt.Errorf("%s: range %d+%d holds %d records with checksum %x, want %d with %x: %w", info.Name, info.Offset, info.Bytes, rows, sum.Sum64(), info.Rows, info.Checksum, ErrCorrupt)
	}
	return nil
}

// uvarintLen is the length of n's uvarint encoding.
func uvarintLen(n uint64) int {
	l := 1
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}
