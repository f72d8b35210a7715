package workfile

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
)

// A route table (job.Routes) says where a task's rows for each key are,
// in the files it wrote (its slots): for each key k from 0 to Keys-1, a
// block of
//
//	Slots × entry: offset u64, bytes u64, rows u64, xxhash u64 (little
//	               endian) of the slot's range for k; all 0 for none
//	checksum u64:  xxhash64 of routeMagic, k (u64) and the entries
//
// so that the table of Keys keys has Keys × (32 × Slots + 8) bytes, and
// the blocks of keys a to b are one ranged read. A reader checks the
// file's size against what the writer recorded and each block's checksum
// (which its key seeds: a block read for another key fails), and that an
// entry's range holds rows.

// routeMagic seeds each block's checksum: the layout's name and version.
const routeMagic = "NDROUTE1"

const routeEntry = 32

// routeBlock is the bytes of one key's block of a table of slots slots.
func routeBlock(slots int) int64 { return int64(slots)*routeEntry + 8 }

// WriteRoutes writes to name the route table of ranges, each slot's
// ranges by key (each of the slot's file, slots[s]), and describes it;
// nil if there are no ranges (and no file).
func WriteRoutes(ctx context.Context, st storage.Creator, name string, slots []string, ranges []map[int]fileinfo.Info) (*job.Routes, error) {
	if len(ranges) != len(slots) {
		return nil, fmt.Errorf("%s: %d slots of ranges for %d files", name, len(ranges), len(slots))
	}
	keys := 0
	for s, m := range ranges {
		for k, info := range m {
			if k < 0 || info.Name != slots[s] || info.Rows <= 0 || info.Bytes <= 0 || info.Offset < 0 {
				return nil, fmt.Errorf("%s: slot %d (%s): key %d has range %+v", name, s, slots[s], k, info)
			}
			keys = max(keys, k+1)
		}
	}
	if keys == 0 {
		return nil, nil
	}
	w, err := st.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	sum := fileinfo.NewSummer(w)
	bw := bufio.NewWriterSize(sum, 64<<10)
	block := make([]byte, 0, routeBlock(len(slots)))
	for k := range keys {
		block = block[:0]
		for _, m := range ranges {
			info := m[k] // all 0 when none
			for _, v := range []int64{info.Offset, info.Bytes, info.Rows, int64(info.Checksum)} {
				block = binary.LittleEndian.AppendUint64(block, uint64(v))
			}
		}
		block = binary.LittleEndian.AppendUint64(block, routeSum(k, block))
		bw.Write(block) // an error stays in bw
	}
	if err := bw.Flush(); err != nil {
		w.Abort()
		return nil, fmt.Errorf("storage: write %s: %w", name, err)
	}
	if err := w.Commit(); err != nil {
		return nil, err
	}
	return &job.Routes{File: sum.Info(name, int64(keys)), Keys: keys, Slots: slices.Clone(slots)}, nil
}

// routeSum is the checksum of key k's block of entries.
func routeSum(k int, entries []byte) uint64 {
	h := xxhash.New()
	h.WriteString(routeMagic)
	h.Write(binary.LittleEndian.AppendUint64(nil, uint64(k)))
	h.Write(entries)
	return h.Sum64()
}

// RouteWindow is the blocks of some keys of a route table, read at once.
type RouteWindow struct {
	r     *job.Routes
	first int
	raw   []byte
}

// LoadRoutes reads the blocks of keys first to last of r (those below
// r.Keys), with one ranged read; r nil reads nothing.
func LoadRoutes(ctx context.Context, st storage.Opener, r *job.Routes, first, last int) (*RouteWindow, error) {
	w := &RouteWindow{r: r, first: first}
	if r == nil || first >= r.Keys || last < first {
		return w, nil
	}
	last = min(last, r.Keys-1)
	block := routeBlock(len(r.Slots))
	if r.Keys < 0 || r.File.Bytes != int64(r.Keys)*block {
		return nil, fmt.Errorf("%s: a route table of %d keys of %d slots is %d bytes, not %d: %w", r.File.Name, r.Keys, len(r.Slots), int64(r.Keys)*block, r.File.Bytes, ErrCorrupt)
	}
	f, err := st.Open(ctx, r.File.Name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.Size() != r.File.Bytes {
		return nil, fmt.Errorf("%s: %d bytes, want %d: %w", r.File.Name, f.Size(), r.File.Bytes, ErrCorrupt)
	}
	w.raw = make([]byte, int64(last-first+1)*block)
	if _, err := f.ReadAt(w.raw, int64(first)*block); err != nil {
		return nil, fmt.Errorf("%s: %w", r.File.Name, err)
	}
	return w, nil
}

// Entries appends to dst the ranges of key k, one per slot of the table
// (an Info of 0 rows for none), or nothing if the window has no block
// of k. It checks the block.
func (w *RouteWindow) Entries(k int, dst []fileinfo.Info) ([]fileinfo.Info, error) {
	if w.r == nil || k < w.first {
		return dst, nil
	}
	block := routeBlock(len(w.r.Slots))
	at := int64(k-w.first) * block
	if at+block > int64(len(w.raw)) {
		return dst, nil
	}
	b := w.raw[at : at+block]
	entries := b[:len(b)-8]
	offset := int64(k) * block
	if sum := binary.LittleEndian.Uint64(b[len(entries):]); sum != routeSum(k, entries) {
		return nil, fmt.Errorf("%s: key %d (offset %d): checksum %x, want %x: %w", w.r.File.Name, k, offset, routeSum(k, entries), sum, ErrCorrupt)
	}
	for s, name := range w.r.Slots {
		e := entries[s*routeEntry:]
		info := fileinfo.Info{
			Offset: int64(binary.LittleEndian.Uint64(e)), Bytes: int64(binary.LittleEndian.Uint64(e[8:])),
			Rows: int64(binary.LittleEndian.Uint64(e[16:])), Checksum: binary.LittleEndian.Uint64(e[24:]),
		}
		switch {
		case info.Rows > 0 && info.Bytes > 0 && info.Offset >= 0:
			info.Name = name
		case info != fileinfo.Info{}:
			return nil, fmt.Errorf("%s: key %d (offset %d), slot %d: range %d+%d of %d rows: %w", w.r.File.Name, k, offset, s, info.Offset, info.Bytes, info.Rows, ErrCorrupt)
		}
		dst = append(dst, info)
	}
	return dst, nil
}
