package stage

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// The gather stage moves signatures to the verify tasks that need them
// with sequential reads only. Verify needs, for each candidate pair and
// exact-group claim whose first document is in its chunk, the signature
// and shingle set of both documents; the second is in any chunk. Read by
// random access to every chunk's signature file, that is one disk seek (or
// one object-storage request) per pair once the work area outgrows the
// page cache. Instead:
//
//   - reduce writes, beside its edges, requests: (document, verify chunk)
//     for both documents of every edge, grouped by the document's chunk
//     (RequestFile);
//   - a gather task per chunk reads its chunk's signature file once, in
//     order, and writes the requested records grouped by verify chunk,
//     each group sorted by document (GatherFile), then removes the
//     signature file, which nothing reads after it: the work area holds
//     each signature once. Run again, it checks and describes the file it
//     wrote;
//   - a verify task reads its group of every gather file, sequentially and
//     in chunk order (so in document order), checking it and indexing its
//     records, which it then reads by random access: in place in local
//     gather files, else from a copy in a scratch file on local disk (in
//     memory if small).

// request asks for the record of Doc on behalf of the verify task of
// chunk Dest.
type request struct {
	Doc  int64
	Dest int32
}

const requestRecord = 12

func appendRequest(buf []byte, r request) []byte {
	buf = binary.LittleEndian.AppendUint64(buf, uint64(r.Doc))
	return binary.LittleEndian.AppendUint32(buf, uint32(r.Dest))
}

func decodeRequest(b []byte) (request, int) {
	if len(b) < requestRecord {
		return request{}, 0
	}
	return request{Doc: int64(binary.LittleEndian.Uint64(b)), Dest: int32(binary.LittleEndian.Uint32(b[8:]))}, requestRecord
}

func compareRequest(x, y request) int {
	if c := cmp.Compare(x.Dest, y.Dest); c != 0 {
		return c
	}
	return cmp.Compare(x.Doc, y.Doc)
}

// writeRequests writes the requests of edges, sorted by their first
// document (both documents, for the verify task of the first's chunk), to
// name, one run per chunk of the requested document, each sorted by
// (verify chunk, document) without repeats, and returns each chunk's
// range.
func writeRequests(ctx context.Context, st storage.Creator, name string, edges []records.Candidate) (map[int]fileinfo.Info, error) {
	src := func(r request) int { return job.ChunkOf(r.Doc) }
	return writeRunFile(ctx, st, name, edgeRequests(edges), src, appendRequest)
}

// Gather reads the signature records of chunk that the verify tasks asked
// for (through every reduce partition's requests) and writes them to
// GatherFile(chunk) grouped by verify task. Its chunk's signature file is
// read once, in order; the distinct records go to a scratch file on local
// disk first (in memory if small), from which the groups are copied, so
// memory holds only the requests (12 bytes each) and their index.
//
// With removeSig, the task then removes the chunk's signature file (when
// the job keeps no index, nothing reads it again).
func Gather(ctx context.Context, st storage.FS, chunk int, reduces []job.ReduceResult, maps map[int]job.MapResult, removeSig bool) (*job.GatherResult, error) {
	start := time.Now()
	res, err := gather(ctx, st, chunk, reduces, maps, removeSig)
	if err != nil {
		return nil, fmt.Errorf("gather chunk %d: %w", chunk, err)
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

func gather(ctx context.Context, st storage.FS, chunk int, reduces []job.ReduceResult, maps map[int]job.MapResult, removeSig bool) (*job.GatherResult, error) {
	var reqs []request
	for _, rr := range reduces {
		info, ok := rr.RequestFiles[chunk]
		if !ok {
			continue
		}
		if info.Bytes != requestRecord*info.Rows {
			return nil, fmt.Errorf("%s: range %d+%d does not hold %d rows: %w", info.Name, info.Offset, info.Bytes, info.Rows, pqfile.ErrCorrupt)
		}
		var err error
		if reqs, err = readRunFile(ctx, st, info, decodeRequest, reqs); err != nil {
			return nil, err
		}
	}
	reqs = sortRequests(reqs)
	res := &job.GatherResult{Chunk: chunk, Requests: int64(len(reqs)), Ranges: map[int]fileinfo.Info{}}
	if len(reqs) == 0 {
		return res, nil
	}

	// The distinct documents, in file order, to the scratch file.
	docs := make([]int64, len(reqs))
	for i, r := range reqs {
		docs[i] = r.Doc
	}
	slices.Sort(docs)
	docs = slices.Compact(docs)
	res.Records = int64(len(docs))
	sig, closeSig, err := openChunkFile(ctx, st, maps, chunk)
	if errors.Is(err, fs.ErrNotExist) {
		// A gather task removes its chunk's signature file once its own
		// file is committed: run again (its result was lost), it
		// describes that file.
		again, aerr := gathered(ctx, st, chunk, reqs, res)
		if aerr != nil {
			return nil, fmt.Errorf("%w; and %w", err, aerr)
		}
		return again, nil
	}
	if err != nil {
		return nil, err
	}
	defer closeSig()
	scr, err := fillScratch("gather", sig.gatherSize(docs), func(scr *scratch) error { return copyRecords(ctx, sig, docs, scr) })
	if err != nil {
		return nil, err
	}
	defer scr.remove()

	// The groups, in (verify chunk, document) order.
	name := job.GatherFile(chunk)
	w, err := st.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	committed := false
	defer func() {
		if !committed {
			w.Abort()
		}
	}()
	bw := bufio.NewWriterSize(w, 1<<20)
	res.Ranges, err = groupRanges(ctx, name, reqs,
		func(i int) ([]byte, error) { return scr.get(ctx, reqs[i].Doc) },
		func(rec []byte) error {
			if _, err := bw.Write(rec); err != nil {
				return fmt.Errorf("writing %s: %w", name, err)
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("writing %s: %w", name, err)
	}
	if err := w.Commit(); err != nil {
		return nil, err
	}
	committed = true
	// Nothing reads the signature file after its gather task: removing it
	// keeps each signature once in the work area.
	closeSig()
	if !removeSig {
		return res, nil
	}
	if err := st.Remove(ctx, sig.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return res, nil
}

// appendGathered appends one record of a gather file: the document, the
// verify chunk, the length of the signature record and the record.
func appendGathered(buf []byte, r request, raw []byte) []byte {
	buf = binary.LittleEndian.AppendUint64(buf, uint64(r.Doc))
	buf = binary.LittleEndian.AppendUint32(buf, uint32(r.Dest))
	buf = binary.AppendUvarint(buf, uint64(len(raw)))
	return append(buf, raw...)
}

// gatheredReader reads the records of a gather file or range.
type gatheredReader struct {
	br   *bufio.Reader
	head [12]byte
	raw  []byte
	max  int64
	pos  int64 // the bytes read: the end of the last record
}

func newGatheredReader(r io.Reader, max int64) *gatheredReader {
	return &gatheredReader{br: bufio.NewReaderSize(r, 1<<20), max: max}
}

// next reads one record; ok is false at the end. The record's bytes are
// valid until the next call.
func (g *gatheredReader) next() (r request, raw []byte, ok bool, err error) {
	if _, err := io.ReadFull(g.br, g.head[:]); err == io.EOF {
		return request{}, nil, false, nil
	} else if err != nil {
		return request{}, nil, false, err
	}
	r = request{Doc: int64(binary.LittleEndian.Uint64(g.head[:])), Dest: int32(binary.LittleEndian.Uint32(g.head[8:]))}
	n, err := binary.ReadUvarint(g.br)
	if err != nil || n > uint64(g.max) {
		return request{}, nil, false, errors.New("bad record length")
	}
	g.raw = slices.Grow(g.raw[:0], int(n))[:n]
	if _, err := io.ReadFull(g.br, g.raw); err != nil {
		return request{}, nil, false, err
	}
	g.pos += int64(len(g.head) + uvarintLen(n) + len(g.raw))
	return r, g.raw, true, nil
}

// groupRanges lays out the records of reqs, grouped by verify chunk, as a
// gather file named name: raw gives request i's signature record, emit (if
// not nil) takes each encoded record in file order. It returns each verify
// chunk's range: offset, size, record count and xxhash, as copyRange
// checks them.
func groupRanges(ctx context.Context, name string, reqs []request, raw func(i int) ([]byte, error), emit func(rec []byte) error) (map[int]fileinfo.Info, error) {
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
			rec = appendGathered(rec[:0], reqs[hi], b)
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

// gathered describes the committed gather file of chunk, which must hold
// exactly the records reqs ask for, in order: what a gather task that
// ran before (and removed the signature file) wrote.
func gathered(ctx context.Context, st storage.Opener, chunk int, reqs []request, res *job.GatherResult) (*job.GatherResult, error) {
	name := job.GatherFile(chunk)
	f, err := st.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gr := newGatheredReader(io.NewSectionReader(f, 0, f.Size()), f.Size())
	corrupt := func(i int, what string) error {
		return fmt.Errorf("%s, record %d: %s: %w", name, i, what, pqfile.ErrCorrupt)
	}
	res.Ranges, err = groupRanges(ctx, name, reqs, func(i int) ([]byte, error) {
		r, raw, ok, err := gr.next()
		switch {
		case err != nil:
			return nil, corrupt(i, err.Error())
		case !ok:
			return nil, corrupt(i, "missing")
		case r != reqs[i]:
			return nil, corrupt(i, fmt.Sprintf("document %d for chunk %d, want %d for %d", r.Doc, r.Dest, reqs[i].Doc, reqs[i].Dest))
		}
		if err := checkGathered(raw); err != nil {
			return nil, corrupt(i, err.Error())
		}
		return raw, nil
	}, nil)
	if err != nil {
		return nil, err
	}
	if _, _, ok, err := gr.next(); ok || err != nil {
		return nil, corrupt(len(reqs), "more records than requests")
	}
	return res, nil
}

// readGathered indexes the records gathered for the verify task of chunk
// from every gather file, in chunk order and so in document order,
// checking each range against what its writer recorded. Ranges in local
// files are read in place (the task reads each record from its gather
// file, which stays until the verify stage ends); ranges in an object
// store are copied to a scratch file first, which random reads need.
func readGathered(ctx context.Context, st storage.Opener, chunk int, gathers []job.GatherResult) (*scratch, error) {
	list := slices.Clone(gathers)
	slices.SortFunc(list, func(x, y job.GatherResult) int { return cmp.Compare(x.Chunk, y.Chunk) })
	var size int64
	var ranges int
	for _, g := range list {
		if info, has := g.Ranges[chunk]; has {
			size += info.Bytes // an upper bound: with the records' headers
			ranges++
		}
	}
	if ranges <= maxInPlaceRanges {
		scr, local, err := readInPlace(ctx, st, chunk, list)
		if err != nil || local {
			return scr, err
		}
	}
	return fillScratch("verify", size, func(scr *scratch) error {
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
func readInPlace(ctx context.Context, st storage.Opener, chunk int, list []job.GatherResult) (*scratch, bool, error) {
	scr := &scratch{}
	for _, g := range list {
		info, has := g.Ranges[chunk]
		if !has {
			continue
		}
		f, err := st.Open(ctx, info.Name)
		if err != nil {
			scr.remove()
			return nil, false, err
		}
		if !storage.IsLocal(f) {
			f.Close()
			scr.remove()
			return nil, false, nil
		}
		scr.files = append(scr.files, f)
		if err := copyRange(ctx, st, chunk, info, scr, f); err != nil {
			scr.remove()
			return nil, false, err
		}
	}
	if err := scr.done(); err != nil {
		scr.remove()
		return nil, false, err
	}
	return scr, true, nil
}

// fillScratch returns a scratch for size bytes of records, filled by fill
// (and removed if it fails).
func fillScratch(kind string, size int64, fill func(*scratch) error) (*scratch, error) {
	scr, err := newScratch(kind, size)
	if err != nil {
		return nil, err
	}
	if err := fill(scr); err != nil {
		scr.remove()
		return nil, err
	}
	if err := scr.done(); err != nil {
		scr.remove()
		return nil, err
	}
	return scr, nil
}

// copyRange streams one range of a gather file into scr; when in is not
// nil it is the file, open, and the range is indexed in place in scr
// (its last file) instead of copied.
func copyRange(ctx context.Context, st storage.Opener, chunk int, info fileinfo.Info, scr *scratch, in storage.File) error {
	f := in
	if f == nil {
		var err error
		if f, err = st.Open(ctx, info.Name); err != nil {
			return err
		}
		defer f.Close()
	}
	if info.Offset < 0 || info.Bytes < 0 || info.Offset+info.Bytes > f.Size() {
		return fmt.Errorf("%s: range %d+%d does not fit its %d bytes: %w", info.Name, info.Offset, info.Bytes, f.Size(), pqfile.ErrCorrupt)
	}
	sum := xxhash.New()
	gr := newGatheredReader(io.TeeReader(io.NewSectionReader(f, info.Offset, info.Bytes), sum), info.Bytes)
	corrupt := func(rows int64, what string) error {
		return fmt.Errorf("%s: range %d+%d, record %d: %s: %w", info.Name, info.Offset, info.Bytes, rows, what, pqfile.ErrCorrupt)
	}
	var rows int64
	for ; ; rows++ {
		if rows%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		r, raw, ok, err := gr.next()
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
			err = scr.addRef(r.Doc, info.Offset+gr.pos-int64(len(raw)), len(raw))
		} else {
			err = scr.add(r.Doc, raw)
		}
		if err != nil {
			if errors.Is(err, errOutOfOrder) {
				return corrupt(rows, err.Error())
			}
			return err
		}
	}
	if rows != info.Rows || sum.Sum64() != info.Checksum {
		return fmt.Errorf("%s: range %d+%d holds %d records with checksum %x, want %d with %x: %w", info.Name, info.Offset, info.Bytes, rows, sum.Sum64(), info.Rows, info.Checksum, pqfile.ErrCorrupt)
	}
	return nil
}

var errOutOfOrder = errors.New("documents out of order")

// uvarintLen is the length of n's uvarint encoding.
func uvarintLen(n uint64) int {
	l := 1
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}

// scratchMemory is the size up to which a scratch is held in memory
// rather than in a file.
const scratchMemory = 8 << 20

// scratch holds records added in increasing document order and then read
// by document, with an index of 16 bytes per record in memory. Up to
// scratchMemory bytes of records it is held in memory; beyond, it is a
// file in the temporary directory ($TMPDIR), the task's own, removed when
// the task ends. A scratch of references (addRef) holds no records: they
// stay in its files, which it closes when removed.
type scratch struct {
	mem  []byte   // the records, when held in memory
	f    *os.File // the records, otherwise
	bw   *bufio.Writer
	docs []int64
	offs []int64 // len(docs)+1 once done
	off  int64
	// files are the files of a scratch of references; refs give each
	// record's file (an index in files) and length, offs its offset there.
	files []storage.File
	refs  []scratchRef
}

type scratchRef struct {
	file int32
	n    int32
}

// newScratch returns a scratch for size bytes of records.
func newScratch(kind string, size int64) (*scratch, error) {
	if size <= scratchMemory {
		return &scratch{mem: make([]byte, 0, size)}, nil
	}
	f, err := os.CreateTemp("", "neardup-"+kind+"-*")
	if err != nil {
		return nil, fmt.Errorf("scratch file: %w", err)
	}
	return &scratch{f: f, bw: bufio.NewWriterSize(f, 1<<20)}, nil
}

// add appends the record of doc, which must follow the last one added.
func (s *scratch) add(doc int64, raw []byte) error {
	if err := s.next(doc); err != nil {
		return err
	}
	if s.f == nil {
		s.mem = append(s.mem, raw...)
	} else if _, err := s.bw.Write(raw); err != nil {
		return fmt.Errorf("scratch file %s: %w", s.f.Name(), err)
	}
	s.docs = append(s.docs, doc)
	s.offs = append(s.offs, s.off)
	s.off += int64(len(raw))
	return nil
}

// addRef records that the record of doc, which must follow the last one
// added, is the n bytes at off in the scratch's last file.
func (s *scratch) addRef(doc int64, off int64, n int) error {
	if err := s.next(doc); err != nil {
		return err
	}
	s.docs = append(s.docs, doc)
	s.offs = append(s.offs, off)
	s.refs = append(s.refs, scratchRef{file: int32(len(s.files) - 1), n: int32(n)})
	return nil
}

// next checks that doc follows the last document added.
func (s *scratch) next(doc int64) error {
	if n := len(s.docs); n > 0 && doc <= s.docs[n-1] {
		return fmt.Errorf("document %d after %d: %w", doc, s.docs[n-1], errOutOfOrder)
	}
	return nil
}

// done ends the adding.
func (s *scratch) done() error {
	if s.files != nil {
		return nil
	}
	s.offs = append(s.offs, s.off)
	if s.f == nil {
		return nil
	}
	if err := s.bw.Flush(); err != nil {
		return fmt.Errorf("scratch file %s: %w", s.f.Name(), err)
	}
	return nil
}

// get returns the record of doc; it is an error if there is none. The
// slice must not be modified.
func (s *scratch) get(_ context.Context, doc int64) ([]byte, error) {
	i, ok := slices.BinarySearch(s.docs, doc)
	if !ok {
		return nil, fmt.Errorf("no signature gathered for document %d", doc)
	}
	if s.files != nil {
		r := s.refs[i]
		b := make([]byte, r.n)
		if _, err := s.files[r.file].ReadAt(b, s.offs[i]); err != nil {
			return nil, fmt.Errorf("reading the record of document %d at %d: %w", doc, s.offs[i], err)
		}
		return b, nil
	}
	lo, hi := s.offs[i], s.offs[i+1]
	if s.f == nil {
		return s.mem[lo:hi:hi], nil
	}
	b := make([]byte, hi-lo)
	if _, err := s.f.ReadAt(b, lo); err != nil {
		return nil, fmt.Errorf("scratch file %s: %w", s.f.Name(), err)
	}
	return b, nil
}

func (s *scratch) remove() {
	for _, f := range s.files {
		f.Close()
	}
	if s.f != nil {
		s.f.Close()
		os.Remove(s.f.Name())
	}
}
