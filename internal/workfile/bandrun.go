package workfile

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// bandRunMagic begins and ends a band run file (its layout is in the
// package doc): the map task writes one file a run instead of one a
// partition, and each reduce task reads the blocks of its partitions by
// ranged reads.
const bandRunMagic = "NDBRUN1\n"

// bandRunTrailer is the size of the trailer.
const bandRunTrailer = 16 + len(bandRunMagic)

// minBandBlockEntry and minBandRecord are the fewest bytes a block's
// entry in the footer (four uvarints and a checksum) and a record (three
// uvarints and a fingerprint) take: a count of more than fit in their
// bytes is corrupt, refused before anything is allocated for it.
const (
	minBandBlockEntry = 4 + 8
	minBandRecord     = 3 + 8
)

// bandBlock locates one partition's block in a band run file.
type bandBlock struct {
	part          int
	offset, bytes int64
	records       int64
	sum           uint64
}

// WriteBandRun writes the records of one run of a chunk, by partition
// (each sorted by CompareBand), to name.
func WriteBandRun(ctx context.Context, st storage.Creator, name string, chunk int, parts [][]records.BandRecord) (fileinfo.Info, error) {
	w, err := st.Create(ctx, name)
	if err != nil {
		return fileinfo.Info{}, err
	}
	sum := fileinfo.NewSummer(w)
	// A partition's block (tens of KB and more) goes to the file as it
	// is when the buffer is empty; the buffer gathers smaller ones.
	bw := bufio.NewWriterSize(sum, 64<<10)
	var (
		blocks []bandBlock
		buf    []byte
		rows   int64
	)
	off := int64(len(bandRunMagic))
	bw.WriteString(bandRunMagic)
	for part, recs := range parts {
		if len(recs) == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			w.Abort()
			return fileinfo.Info{}, err
		}
		buf = buf[:0]
		prevBand, prevKey := int32(0), int64(math.MinInt64)
		for i, r := range recs {
			if job.ChunkOf(r.Doc) != chunk || r.Band < prevBand || i > 0 && CompareBand(recs[i-1], r) >= 0 {
				w.Abort()
				return fileinfo.Info{}, fmt.Errorf("%s: partition %d: record %+v not of chunk %d or out of order", name, part, r, chunk)
			}
			if r.Band != prevBand {
				prevKey = math.MinInt64
			}
			buf = binary.AppendUvarint(buf, uint64(r.Band-prevBand))
			buf = binary.AppendUvarint(buf, uint64(r.Key)-uint64(prevKey))
			buf = binary.AppendUvarint(buf, uint64(uint32(r.Doc)))
			buf = binary.LittleEndian.AppendUint64(buf, uint64(r.FPHi))
			prevBand, prevKey = r.Band, r.Key
		}
		bw.Write(buf)
		blocks = append(blocks, bandBlock{part: part, offset: off, bytes: int64(len(buf)), records: int64(len(recs)), sum: xxhash.Sum64(buf)})
		off += int64(len(buf))
		rows += int64(len(recs))
	}
	foot := binary.AppendUvarint(nil, uint64(len(blocks)))
	for _, b := range blocks {
		for _, v := range []int64{int64(b.part), b.offset, b.bytes, b.records} {
			foot = binary.AppendUvarint(foot, uint64(v))
		}
		foot = binary.LittleEndian.AppendUint64(foot, b.sum)
	}
	bw.Write(foot)
	var trailer []byte
	trailer = binary.LittleEndian.AppendUint64(trailer, uint64(off))
	trailer = binary.LittleEndian.AppendUint64(trailer, xxhash.Sum64(foot))
	bw.Write(append(trailer, bandRunMagic...))
	if err := bw.Flush(); err != nil {
		w.Abort()
		return fileinfo.Info{}, fmt.Errorf("writing %s: %w", name, err)
	}
	if err := w.Commit(); err != nil {
		return fileinfo.Info{}, err
	}
	return sum.Info(name, rows), nil
}

// BandRunReader holds the blocks of a range of partitions of a band run
// file, read at once: a reduce task's partitions are contiguous, and so
// are their blocks.
type BandRunReader struct {
	Name   string
	chunk  int
	blocks []bandBlock // of the partitions loaded
	data   []byte      // their bytes
	base   int64       // data's offset in the file
}

// LoadBandRun reads the footer of a band run file of a chunk, checked
// against its checksum, and the blocks of partitions first to last in one
// ranged read; the file's size must be what its writer recorded. It holds
// no file open.
func LoadBandRun(ctx context.Context, st storage.Opener, info fileinfo.Info, chunk, first, last int) (*BandRunReader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := st.Open(ctx, info.Name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	blocks, err := readBandRunFooter(f, info)
	if err != nil {
		return nil, err
	}
	lo := sort.Search(len(blocks), func(i int) bool { return blocks[i].part >= first })
	hi := sort.Search(len(blocks), func(i int) bool { return blocks[i].part > last })
	hi = max(hi, lo) // none when last < first
	r := &BandRunReader{Name: info.Name, chunk: chunk, blocks: blocks[lo:hi]}
	if len(r.blocks) == 0 {
		return r, nil
	}
	r.base = r.blocks[0].offset
	end := r.blocks[len(r.blocks)-1].offset + r.blocks[len(r.blocks)-1].bytes
	r.data = make([]byte, end-r.base)
	if err := readAt(f, r.data, r.base); err != nil {
		return nil, fmt.Errorf("band run file %s at offset %d: %w", info.Name, r.base, err)
	}
	return r, nil
}

// readBandRunFooter reads the blocks' table of a band run file.
func readBandRunFooter(f storage.File, info fileinfo.Info) ([]bandBlock, error) {
	corrupt := func(off int64, format string, args ...any) error {
		return fmt.Errorf("band run file %s at offset %d: %s: %w", info.Name, off, fmt.Sprintf(format, args...), ErrCorrupt)
	}
	size := f.Size()
	if size != info.Bytes {
		return nil, corrupt(0, "%d bytes, its writer wrote %d", size, info.Bytes)
	}
	end := size - int64(bandRunTrailer)
	if end < int64(len(bandRunMagic)) {
		return nil, corrupt(0, "too short for a band run file")
	}
	trailer := make([]byte, bandRunTrailer)
	if err := readAt(f, trailer, end); err != nil {
		return nil, fmt.Errorf("band run file %s at offset %d: %w", info.Name, end, err)
	}
	if string(trailer[16:]) != bandRunMagic {
		return nil, corrupt(end+16, "no band run trailer")
	}
	footOff := int64(binary.LittleEndian.Uint64(trailer))
	if footOff < int64(len(bandRunMagic)) || footOff > end {
		return nil, corrupt(end, "footer offset %d outside the file", footOff)
	}
	foot := make([]byte, end-footOff)
	if err := readAt(f, foot, footOff); err != nil {
		return nil, fmt.Errorf("band run file %s at offset %d: %w", info.Name, footOff, err)
	}
	if xxhash.Sum64(foot) != binary.LittleEndian.Uint64(trailer[8:]) {
		return nil, corrupt(footOff, "footer checksum mismatch")
	}
	p := foot
	next := func() (int64, bool) {
		v, n := binary.Uvarint(p)
		if n <= 0 || v > math.MaxInt64 {
			return 0, false
		}
		p = p[n:]
		return int64(v), true
	}
	count, ok := next()
	if !ok || count > int64(len(p))/minBandBlockEntry {
		return nil, corrupt(footOff, "bad block count")
	}
	blocks := make([]bandBlock, 0, count)
	at := int64(len(bandRunMagic))
	var rows int64
	for range count {
		var b bandBlock
		var vals [4]int64
		for i := range vals {
			if vals[i], ok = next(); !ok {
				return nil, corrupt(footOff+int64(len(foot)-len(p)), "bad block entry")
			}
		}
		if len(p) < 8 {
			return nil, corrupt(footOff+int64(len(foot)-len(p)), "footer cut short")
		}
		b.part, b.offset, b.bytes, b.records, b.sum = int(vals[0]), vals[1], vals[2], vals[3], binary.LittleEndian.Uint64(p)
		p = p[8:]
		if b.offset != at || b.bytes > footOff-at || len(blocks) > 0 && b.part <= blocks[len(blocks)-1].part {
			return nil, corrupt(footOff, "block of partition %d at %d (%d bytes) out of place", b.part, b.offset, b.bytes)
		}
		at += b.bytes
		rows += b.records
		blocks = append(blocks, b)
	}
	if at != footOff || len(p) != 0 || rows != info.Rows {
		return nil, corrupt(footOff, "blocks end at %d and hold %d records; want %d and %d", at, rows, footOff, info.Rows)
	}
	return blocks, nil
}

// Part returns the records of partition part, one of those loaded
// (none when it has no block), checked against the block's checksum.
func (r *BandRunReader) Part(part int) ([]records.BandRecord, error) {
	i := sort.Search(len(r.blocks), func(i int) bool { return r.blocks[i].part >= part })
	if i == len(r.blocks) || r.blocks[i].part != part {
		return nil, nil
	}
	b := r.blocks[i]
	buf := r.data[b.offset-r.base : b.offset-r.base+b.bytes]
	if xxhash.Sum64(buf) != b.sum {
		return nil, fmt.Errorf("band run file %s at offset %d: partition %d: block checksum mismatch: %w", r.Name, b.offset, part, ErrCorrupt)
	}
	return decodeBandBlock(buf, r.chunk, b.records, func(at int) error {
		return fmt.Errorf("band run file %s at offset %d: partition %d: bad record: %w", r.Name, b.offset+int64(at), part, ErrCorrupt)
	})
}

// decodeBandBlock decodes n records of one block; bad names the error of
// a record at byte at of the block.
func decodeBandBlock(buf []byte, chunk int, n int64, bad func(at int) error) ([]records.BandRecord, error) {
	if n > int64(len(buf))/minBandRecord {
		return nil, bad(0)
	}
	recs := make([]records.BandRecord, 0, n)
	prevBand, prevKey := int32(0), int64(math.MinInt64)
	at := 0
	uv := func() (uint64, bool) {
		v, k := binary.Uvarint(buf[at:])
		if k <= 0 {
			return 0, false
		}
		at += k
		return v, true
	}
	for range n {
		start := at
		db, ok1 := uv()
		dk, ok2 := uv()
		idx, ok3 := uv()
		if !ok1 || !ok2 || !ok3 || db > math.MaxInt32 || idx > math.MaxUint32 || len(buf)-at < 8 {
			return nil, bad(start)
		}
		band := prevBand + int32(db)
		if band != prevBand {
			prevKey = math.MinInt64
		}
		key := int64(uint64(prevKey) + dk)
		fp := int64(binary.LittleEndian.Uint64(buf[at:]))
		at += 8
		recs = append(recs, records.BandRecord{Band: band, Key: key, Doc: job.Ordinal(chunk, int(idx)), FPHi: fp})
		prevBand, prevKey = band, key
	}
	if at != len(buf) {
		return nil, bad(at)
	}
	return recs, nil
}

// CompareBand orders band records by (band, key, doc): the order of a
// band run's blocks and of the reduce stage's merge.
func CompareBand(a, b records.BandRecord) int {
	if c := cmp.Compare(a.Band, b.Band); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Key, b.Key); c != 0 {
		return c
	}
	return cmp.Compare(a.Doc, b.Doc)
}
