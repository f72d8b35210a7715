package workfile

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// The fuzz tests give every reader of a work file forged, truncated and
// damaged files, and check that each reads as ErrCorrupt or as rows,
// never panics, and allocates within a bound of the file's size (see
// checkAlloc; not the earlier Parquet files, whose reader is
// parquet-go's). The Info a reader is given describes the file as a writer
// would (its size, and the xxhash of the file or range), so that the
// bytes reach the decoders; where a format has checksums inside it, a
// fuzz argument (reseal) computes them again after the damage, as a
// forger would. Each is seeded with files the writers wrote; scripts/test
// runs each for a few seconds.

// memFS is an in-memory storage.FS.
type memFS struct {
	mu    sync.Mutex
	files map[string][]byte
}

func newMemFS() *memFS { return &memFS{files: map[string][]byte{}} }

func (m *memFS) put(name string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[name] = data
}

func (m *memFS) get(name string) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.files[name]
}

// memFile is an open file of a memFS.
type memFile struct{ *bytes.Reader }

func (memFile) Close() error { return nil }

func (m *memFS) Open(_ context.Context, name string) (storage.File, error) {
	data := m.get(name)
	if data == nil {
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	return memFile{bytes.NewReader(data)}, nil
}

// memWriter is a file of a memFS being written.
type memWriter struct {
	fs   *memFS
	name string
	buf  bytes.Buffer
}

func (w *memWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }
func (w *memWriter) Commit() error               { w.fs.put(w.name, w.buf.Bytes()); return nil }
func (w *memWriter) Abort() error                { return nil }

func (m *memFS) Create(_ context.Context, name string) (storage.Writer, error) {
	return &memWriter{fs: m, name: name}, nil
}

func (m *memFS) Remove(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.files, name)
	return nil
}

// fuzzAllocSlack is what a reader may allocate whatever its file's size:
// buffers of a fixed size (a gather reader's 1 MiB, a verified reader's
// 256 KiB, a zstd decoder's state) and errors.
const fuzzAllocSlack = 4 << 20

// checkAlloc runs read and fails t if it allocates more than perByte
// bytes for each byte of a file of size bytes, plus fixed (at least
// fuzzAllocSlack): a reader that trusts a count it read makes a small
// file allocate gigabytes.
func checkAlloc(t *testing.T, size int, perByte, fixed uint64, read func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	read()
	runtime.ReadMemStats(&after)
	if got, limit := after.TotalAlloc-before.TotalAlloc, perByte*uint64(size)+fixed; got > limit {
		t.Fatalf("reading a file of %d bytes allocated %d bytes, more than %d", size, got, limit)
	}
}

// wantCorrupt fails t if err is neither nil nor ErrCorrupt.
func wantCorrupt(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, ErrCorrupt) {
		t.Fatalf("%s: %v, want nil or ErrCorrupt", what, err)
	}
}

// inside reports whether the range off+n lies inside data.
func inside(data []byte, off, n int64) bool {
	return off >= 0 && n >= 0 && off <= int64(len(data)) && n <= int64(len(data))-off
}

// rangeOf describes the range off+n of data, as its writer would record
// it: with the xxhash of its bytes, when it lies inside data.
func rangeOf(name string, data []byte, off, n, rows int64) fileinfo.Info {
	info := fileinfo.Info{Name: name, Offset: off, Bytes: n, Rows: rows}
	if inside(data, off, n) {
		info.Checksum = xxhash.Sum64(data[off : off+n])
	}
	return info
}

// FuzzBandRun reads a band run file and every partition of a range of
// them.
func FuzzBandRun(f *testing.F) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	for _, docs := range []int{0, 1, 20} {
		st := newMemFS()
		info, err := WriteBandRun(ctx, st, "run.bnd", 3, randomBands(r, 3, docs, 4, 5))
		if err != nil {
			f.Fatal(err)
		}
		data := st.get("run.bnd")
		f.Add(data, info.Rows, uint8(0), uint8(4), false)
		f.Add(data, info.Rows, uint8(1), uint8(2), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, rows int64, first, last uint8, reseal bool) {
		data = slices.Clone(data)
		if reseal {
			rows = resealBandRun(data)
		}
		st := newMemFS()
		st.put("run.bnd", data)
		info := fileinfo.Info{Name: "run.bnd", Bytes: int64(len(data)), Rows: rows}
		checkAlloc(t, len(data), 16, fuzzAllocSlack, func() {
			rr, err := LoadBandRun(ctx, st, info, 3, int(first), int(last))
			wantCorrupt(t, "LoadBandRun", err)
			if err != nil {
				return
			}
			for p := int(first); p <= int(last); p++ {
				recs, err := rr.Part(p)
				wantCorrupt(t, "Part", err)
				for _, rec := range recs {
					if job.ChunkOf(rec.Doc) != 3 {
						t.Fatalf("partition %d: record %+v not of chunk 3", p, rec)
					}
				}
			}
		})
	})
}

// resealBandRun computes again, as far as data can be parsed, the
// checksums of a band run file's blocks and footer, and returns the
// records its footer claims.
func resealBandRun(data []byte) (rows int64) {
	end := len(data) - bandRunTrailer
	if end < len(bandRunMagic) {
		return 0
	}
	footOff := binary.LittleEndian.Uint64(data[end:])
	if footOff < uint64(len(bandRunMagic)) || footOff > uint64(end) {
		return 0
	}
	foot := data[footOff:end]
	p := foot
	next := func() uint64 {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			p = nil
			return 0
		}
		p = p[n:]
		return v
	}
	for count := next(); count > 0 && len(p) > 0; count-- {
		_, off, n, recs := next(), next(), next(), next()
		if len(p) < 8 {
			break
		}
		if off <= footOff && n <= footOff-off {
			binary.LittleEndian.PutUint64(p, xxhash.Sum64(data[off:off+n]))
		}
		p = p[8:]
		rows += int64(recs)
	}
	binary.LittleEndian.PutUint64(data[end+8:], xxhash.Sum64(foot))
	return rows
}

// fuzzFixed reads two ranges of a file of fixed-size records (edges or
// requests) with read, each alone and, when merge is set, merged, and
// checks that the merge gives the rows the reads gave.
func fuzzFixed[T any](t *testing.T, data []byte, ranges [2][3]int64, read func(storage.Opener, fileinfo.Info) ([]T, error), merge func(storage.Opener, []fileinfo.Info) ([]T, error), compare func(x, y T) int) {
	st := newMemFS()
	st.put("f", data)
	infos := make([]fileinfo.Info, len(ranges))
	for i, rg := range ranges {
		infos[i] = rangeOf("f", data, rg[0], rg[1], rg[2])
	}
	checkAlloc(t, len(data), 16, fuzzAllocSlack, func() {
		var all []T
		ok := true
		for _, info := range infos {
			rows, err := read(st, info)
			wantCorrupt(t, "read", err)
			if err == nil && int64(len(rows)) != info.Rows {
				t.Fatalf("range %+v read as %d rows", info, len(rows))
			}
			ok = ok && err == nil
			all = append(all, rows...)
		}
		if merge == nil {
			return
		}
		merged, err := merge(st, infos)
		wantCorrupt(t, "merge", err)
		if ok != (err == nil) {
			t.Fatalf("the ranges read without an error: %v; merged with %v", ok, err)
		}
		slices.SortFunc(all, compare)
		slices.SortFunc(merged, compare)
		if err == nil && !slices.EqualFunc(all, merged, func(x, y T) bool { return compare(x, y) == 0 }) {
			t.Fatalf("merged %d rows, read %d", len(merged), len(all))
		}
	})
}

// FuzzEdges reads two ranges of an edge file, each alone (ReadEdges) and
// merged (MergeEdges).
func FuzzEdges(f *testing.F) {
	ctx := context.Background()
	st := newMemFS()
	edges := slices.Concat(chunkEdges(0, 3), chunkEdges(1, 40), chunkEdges(2, 1))
	slices.SortFunc(edges, CompareEdge)
	infos, err := WriteEdges(ctx, st, "f", edges)
	if err != nil {
		f.Fatal(err)
	}
	data := st.get("f")
	for _, c := range [][2]int{{0, 1}, {1, 2}, {2, 2}} {
		x, y := infos[c[0]], infos[c[1]]
		f.Add(data, x.Offset, x.Bytes, x.Rows, y.Offset, y.Bytes, y.Rows)
	}
	f.Fuzz(func(t *testing.T, data []byte, off1, n1, rows1, off2, n2, rows2 int64) {
		fuzzFixed(t, data, [2][3]int64{{off1, n1, rows1}, {off2, n2, rows2}},
			func(st storage.Opener, info fileinfo.Info) ([]records.Candidate, error) {
				return ReadEdges(ctx, st, info, nil)
			},
			func(st storage.Opener, infos []fileinfo.Info) ([]records.Candidate, error) {
				m, err := MergeEdges(ctx, st, infos)
				if err != nil {
					return nil, err
				}
				defer m.Close()
				var out []records.Candidate
				for {
					e, ok, err := m.Next()
					if err != nil || !ok {
						return out, err
					}
					out = append(out, e)
				}
			}, CompareEdge)
	})
}

// FuzzRequests reads two ranges of a request file.
func FuzzRequests(f *testing.F) {
	ctx := context.Background()
	st := newMemFS()
	edges := slices.Concat(chunkEdges(0, 3), chunkEdges(1, 40))
	infos, err := WriteRequests(ctx, st, "f", edges)
	if err != nil {
		f.Fatal(err)
	}
	data := st.get("f")
	for _, c := range [][2]int{{0, 1}, {1, 2}} {
		x, y := infos[c[0]], infos[c[1]]
		f.Add(data, x.Offset, x.Bytes, x.Rows, y.Offset, y.Bytes, y.Rows)
	}
	f.Fuzz(func(t *testing.T, data []byte, off1, n1, rows1, off2, n2, rows2 int64) {
		fuzzFixed(t, data, [2][3]int64{{off1, n1, rows1}, {off2, n2, rows2}},
			func(st storage.Opener, info fileinfo.Info) ([]Request, error) {
				return ReadRequests(ctx, st, info, nil)
			}, nil, CompareRequest)
	})
}

// fuzzRow is a row of varints and strings, as the cluster stage's rows
// are written (see AppendString, RowDecoder).
type fuzzRow struct {
	a, b int64
	s, u string
}

func appendFuzzRow(buf []byte, r fuzzRow) []byte {
	buf = binary.AppendVarint(binary.AppendVarint(buf, r.a), r.b)
	return AppendString(AppendString(buf, r.s), r.u)
}

func decodeFuzzRow(b []byte) (fuzzRow, int) {
	d := DecodeRow(b)
	r := fuzzRow{a: d.Int(), b: d.Int()}
	r.s, r.u = d.String(), d.String()
	return r, d.Used()
}

// FuzzRun reads a range of a file of runs of rows with a decoder.
func FuzzRun(f *testing.F) {
	ctx := context.Background()
	st := newMemFS()
	rows := []fuzzRow{{0, -1, "", "x"}, {0, math.MaxInt64, "id", ""}, {1, math.MinInt64, "a\x00b", "https://example.com/"}, {2, 5, "", ""}}
	infos, err := WriteRuns(ctx, st, "f", rows, func(r fuzzRow) int { return int(r.a) }, appendFuzzRow)
	if err != nil {
		f.Fatal(err)
	}
	data := st.get("f")
	for _, info := range infos {
		f.Add(data, info.Offset, info.Bytes, info.Rows)
	}
	f.Fuzz(func(t *testing.T, data []byte, off, n, rows int64) {
		st := newMemFS()
		st.put("f", data)
		info := rangeOf("f", data, off, n, rows)
		checkAlloc(t, len(data), 16, fuzzAllocSlack, func() {
			got, err := ReadRun(ctx, st, info, decodeFuzzRow, nil)
			wantCorrupt(t, "ReadRun", err)
			if err == nil && int64(len(got)) != rows {
				t.Fatalf("%d rows read, want %d", len(got), rows)
			}
		})
	})
}

// FuzzGathered reads a range of a gather file for a verify chunk: by its
// GatheredReader, copied into a scratch and indexed in place (as
// ReadGathered does for an object store and for local files), and checks
// that the scratch gives each record the reader read.
func FuzzGathered(f *testing.F) {
	ctx := context.Background()
	reqs := []Request{{Doc: 1, Dest: 0}, {Doc: 7, Dest: 0}, {Doc: 2, Dest: 1}, {Doc: job.Ordinal(3, 4), Dest: 1}, {Doc: 9, Dest: 2}}
	var data []byte
	ranges, err := GroupRanges(ctx, "g", reqs, func(i int) ([]byte, error) {
		return bytes.Repeat([]byte{byte(i)}, 10*i), nil
	}, func(rec []byte) error { data = append(data, rec...); return nil })
	if err != nil {
		f.Fatal(err)
	}
	for dest, info := range ranges {
		f.Add(data, info.Offset, info.Bytes, info.Rows, int32(dest), dest%2 == 0)
	}
	f.Fuzz(func(t *testing.T, data []byte, off, n, rows int64, chunk int32, inPlace bool) {
		st := newMemFS()
		st.put("g", data)
		info := rangeOf("g", data, off, n, rows)
		// The scratch's buffer is sized by the ranges' sizes, as their
		// writers recorded them, before they are checked against their
		// files: up to ScratchMemory in memory.
		checkAlloc(t, len(data), 32, fuzzAllocSlack+ScratchMemory, func() {
			// Every record of the range, as the reader gives them.
			want := map[int64][]byte{}
			if inside(data, off, n) {
				gr := NewGatheredReader(bytes.NewReader(data[off:off+n]), n)
				for {
					r, raw, ok, err := gr.Next()
					if err != nil || !ok {
						break
					}
					want[r.Doc] = slices.Clone(raw)
				}
			}
			var scr *Scratch
			var err error
			if inPlace {
				var in storage.File
				if in, err = st.Open(ctx, "g"); err != nil {
					t.Fatal(err)
				}
				scr = &Scratch{files: []storage.File{in}}
				if err = copyRange(ctx, st, int(chunk), info, scr, in); err == nil {
					err = scr.done()
				}
			} else {
				scr, err = ReadGathered(ctx, st, int(chunk), []job.GatherResult{{Chunk: 0, Ranges: map[int]fileinfo.Info{int(chunk): info}}})
			}
			wantCorrupt(t, "reading the range", err)
			if err != nil {
				return
			}
			defer scr.Remove()
			if int64(len(scr.Docs())) != rows {
				t.Fatalf("%d records, want %d", len(scr.Docs()), rows)
			}
			for _, doc := range scr.Docs() {
				raw, err := scr.Get(ctx, doc)
				if err != nil || !bytes.Equal(raw, want[doc]) {
					t.Fatalf("document %d: %q (%v), the reader read %q", doc, raw, err, want[doc])
				}
			}
		})
	})
}

// resealVerified computes again, as far as data can be parsed, the
// checksums of a verified file's blocks and table, and returns the rows
// its trailer claims.
func resealVerified(data []byte) (rows int64) {
	if len(data) < 8+verifiedTrailer {
		return 0
	}
	tr := data[len(data)-verifiedTrailer:]
	tableAt := binary.LittleEndian.Uint64(tr)
	if tableAt < 8 || tableAt > uint64(len(data)-verifiedTrailer) {
		return 0
	}
	for off := uint64(8); off+verifiedHeader <= tableAt; {
		size := uint64(binary.LittleEndian.Uint32(data[off+8:]))
		if size > tableAt-off-verifiedHeader {
			break
		}
		binary.LittleEndian.PutUint64(data[off:], xxhash.Sum64(data[off+8:off+verifiedHeader+size]))
		off += verifiedHeader + size
	}
	binary.LittleEndian.PutUint64(tr[8*6:], xxhash.Sum64(data[tableAt:len(data)-16]))
	return int64(binary.LittleEndian.Uint64(tr[8*5:]))
}

// verifiedSeeds adds to f verified files written by the writers
// newWriter returns, with n rows written by write: small ones, and one of
// several blocks.
func verifiedSeeds(f *testing.F, newWriter func(storage.Creator, string) *VerifiedWriter, write func(w *VerifiedWriter, n int) error) {
	for _, n := range []int{1, 40} {
		st := newMemFS()
		w := newWriter(st, "v")
		if err := write(w, n); err != nil {
			f.Fatal(err)
		}
		info, err := w.Commit(context.Background())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(st.get(info.Name), info.Rows, false)
		f.Add(st.get(info.Name), info.Rows, true)
	}
}

// fuzzVerified reads data as a verified file of the kind of magic with
// read, after resealing it if reseal is set, described as its writer
// would describe it but for its rows, and checks that the rows read come
// in (first, second) order, without repeats; read gives them to row.
func fuzzVerified(t *testing.T, data []byte, rows int64, reseal bool, read func(st storage.Opener, info *fileinfo.Info, row func(a, b int64)) error) {
	data = slices.Clone(data)
	if reseal {
		rows = resealVerified(data)
	}
	st := newMemFS()
	st.put("v", data)
	info := &fileinfo.Info{Name: "v", Bytes: int64(len(data)), Rows: rows, Checksum: xxhash.Sum64(data)}
	checkAlloc(t, len(data), verifiedAlloc, fuzzAllocSlack+3*claimedStrings(data), func() {
		last := [2]int64{math.MinInt64, math.MinInt64}
		var n int64
		err := read(st, info, func(a, b int64) {
			if a < last[0] || a == last[0] && b <= last[1] {
				t.Fatalf("row (%d, %d) after (%d, %d)", a, b, last[0], last[1])
			}
			last = [2]int64{a, b}
			n++
		})
		wantCorrupt(t, "reading", err)
		if err == nil && n != rows {
			t.Fatalf("%d rows read, want %d", n, rows)
		}
	})
}

// verifiedAlloc bounds what reading a verified file allocates for a byte
// of it, but for its strings (see claimedStrings): a row of a few bytes
// becomes a records.Pair of over a hundred.
const verifiedAlloc = 256

// claimedStrings is the size of the strings of a verified file's table
// as its trailer records it, when a reader may take it (at most
// maxZstdRatio bytes a byte stored), else 0: a reader holds them twice
// (as bytes and as a string), with the decoder's margin.
func claimedStrings(data []byte) uint64 {
	if len(data) < verifiedTrailer {
		return 0
	}
	tr := data[len(data)-verifiedTrailer:]
	raw, stored := binary.LittleEndian.Uint64(tr[8*3:]), binary.LittleEndian.Uint64(tr[8*4:])
	if stored > uint64(len(data)) || raw > maxZstdRatio*(stored+1) {
		return 0
	}
	return raw
}

// FuzzVerifiedPairs reads a verified file of pairs, whole
// (ReadVerifiedPairs) and its rows' documents (ReadVerifiedEnds).
func FuzzVerifiedPairs(f *testing.F) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	verifiedSeeds(f, NewPairsWriter, func(w *VerifiedWriter, n int) error {
		return w.WritePairs(ctx, randomPairs(r, n, 3*n, false))
	})
	f.Fuzz(func(t *testing.T, data []byte, rows int64, reseal bool) {
		fuzzVerified(t, data, rows, reseal, func(st storage.Opener, info *fileinfo.Info, row func(a, b int64)) error {
			return ReadVerifiedPairs(ctx, st, info, func(pairs []records.Pair) error {
				for _, p := range pairs {
					row(p.A, p.B)
				}
				return nil
			})
		})
		fuzzVerified(t, data, rows, reseal, func(st storage.Opener, info *fileinfo.Info, row func(a, b int64)) error {
			return ReadVerifiedEnds(ctx, st, info, VerifiedPairsMagic, func(a, b int64) error { row(a, b); return nil })
		})
	})
}

// FuzzVerifiedMembers reads a verified file of group members, whole
// (ReadVerifiedMembers) and its rows' documents (ReadVerifiedEnds).
func FuzzVerifiedMembers(f *testing.F) {
	ctx := context.Background()
	verifiedSeeds(f, NewMembersWriter, func(w *VerifiedWriter, n int) error {
		var members []records.ExactMember
		for i := range n {
			g := int64(i / 3 * 4) // groups of 4 documents
			d := g + 1 + int64(i%3)
			members = append(members, records.ExactMember{Group: g, Doc: d, GroupID: fmt.Sprint("d", g), ID: fmt.Sprint("d", d), GroupURL: fmt.Sprint("u", g), URL: fmt.Sprint("u", d)})
		}
		return w.WriteMembers(ctx, members)
	})
	f.Fuzz(func(t *testing.T, data []byte, rows int64, reseal bool) {
		fuzzVerified(t, data, rows, reseal, func(st storage.Opener, info *fileinfo.Info, row func(a, b int64)) error {
			return ReadVerifiedMembers(ctx, st, info, func(m records.ExactMember) error { row(m.Group, m.Doc); return nil })
		})
		fuzzVerified(t, data, rows, reseal, func(st storage.Opener, info *fileinfo.Info, row func(a, b int64)) error {
			return ReadVerifiedEnds(ctx, st, info, VerifiedMembersMagic, func(a, b int64) error { row(a, b); return nil })
		})
	})
}

// FuzzLegacyVerified reads an earlier build's Parquet verified file of
// pairs, described as its writer would describe it: it reads as rows or
// fails, as pqfile.ErrCorrupt or as parquet-go's error, without a panic
// (it found two: a panic in parquet-go's page index, and a footer length
// of gigabytes allocated before it was read, whose input is kept).
func FuzzLegacyVerified(f *testing.F) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 30} {
		st := newMemFS()
		if _, err := pqfile.Write(ctx, st, "v.parquet", randomPairs(r, n, 3*n, false), pqfile.Options{}); err != nil {
			f.Fatal(err)
		}
		f.Add(st.get("v.parquet"), int64(n))
	}
	f.Fuzz(func(t *testing.T, data []byte, rows int64) {
		st := newMemFS()
		st.put("v.parquet", data)
		info := &fileinfo.Info{Name: "v.parquet", Bytes: int64(len(data)), Rows: rows, Checksum: xxhash.Sum64(data)}
		// No bound on what it allocates: parquet-go allocates what a page
		// header claims before it reads the page (a forged file of 3 KB
		// took 1.3 GB); pqfile bounds the footer only.
		var n int64
		err := ReadVerifiedPairs(ctx, st, info, func(p []records.Pair) error { n += int64(len(p)); return nil })
		if err == nil && n != rows {
			t.Fatalf("%d rows read, want %d", n, rows)
		}
		ReadVerifiedEnds(ctx, st, info, VerifiedPairsMagic, func(a, b int64) error { return nil })
	})
}
