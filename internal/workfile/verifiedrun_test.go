package workfile

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// randomPairs makes n pairs sorted by (a, b) over docs documents of
// chunks 0 to 2 and far ones, each document with its own id and url (long ones if
// long), and values of every kind: similarities and estimates of all
// bits (-0, 1, a subnormal, k/128), methods, with and without Hamming.
func randomPairs(r *rand.Rand, n, docs int, long bool) []records.Pair {
	ord := func(i int) int64 {
		if i%11 == 0 { // a document of a far chunk, as of an earlier job
			return job.Ordinal(1<<31-1-i%5, i)
		}
		return job.Ordinal(i%3, i)
	}
	id := func(i int) string { return fmt.Sprintf("doc-%d", i) }
	url := func(i int) string {
		if long && i%7 == 0 {
			return "https://example.com/" + strings.Repeat(fmt.Sprint(i), 200_000)
		}
		return fmt.Sprintf("https://example.com/%d/page.html", i)
	}
	floats := []float64{math.Copysign(0, -1), 1, 0.5, 5e-324, math.MaxFloat64}
	methods := []string{"exact", "minhash", "simhash", ""}
	seen := map[[2]int]bool{}
	var pairs []records.Pair
	for len(pairs) < n {
		a, b := r.IntN(docs), r.IntN(docs)
		if ord(a) >= ord(b) || seen[[2]int{a, b}] {
			continue
		}
		seen[[2]int{a, b}] = true
		p := records.Pair{A: ord(a), B: ord(b), AID: id(a), BID: id(b), AURL: url(a), BURL: url(b),
			Similarity: r.Float64(), Estimate: float64(r.IntN(129)) / 128, Method: methods[r.IntN(len(methods))],
			BandsCollided: int32(r.IntN(40)), FirstBand: int32(r.IntN(1 << 20))}
		if r.IntN(10) == 0 {
			p.Similarity = floats[r.IntN(len(floats))]
		}
		if p.Method == "simhash" {
			p.Hamming = new(int32(r.IntN(65)))
		}
		pairs = append(pairs, p)
	}
	slices.SortFunc(pairs, ComparePair)
	return pairs
}

// samePairs reports whether two lists of pairs are equal, floats bit for
// bit.
func samePairs(x, y []records.Pair) bool {
	return slices.EqualFunc(x, y, func(p, q records.Pair) bool {
		if math.Float64bits(p.Similarity) != math.Float64bits(q.Similarity) || math.Float64bits(p.Estimate) != math.Float64bits(q.Estimate) ||
			(p.Hamming == nil) != (q.Hamming == nil) || p.Hamming != nil && *p.Hamming != *q.Hamming {
			return false
		}
		p.Similarity, p.Estimate, p.Hamming, q.Similarity, q.Estimate, q.Hamming = 0, 0, nil, 0, 0, nil
		return p == q
	})
}

// TestVerifiedRoundTrip writes verified pairs and group members and reads
// them back whole and as ends; a second writing gives the same bytes.
func TestVerifiedRoundTrip(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	for _, tt := range []struct {
		name       string
		pairs      int
		docs       int
		long       bool
		wantBlocks int
	}{
		{"one pair", 1, 2, false, 1},
		{"a document in many pairs", 500, 40, false, 1},
		{"documents in few pairs", 3000, 20000, false, 1},
		{"blocks", 2*verifiedBlockRows + 5, 3000, false, 3},
		{"long urls", 300, 100, true, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := newStore(t)
			pairs := randomPairs(r, tt.pairs, tt.docs, tt.long)
			info := writePairsFile(t, st, "p", pairs)
			got, err := readPairsFile(ctx, st, &info)
			if err != nil {
				t.Fatal(err)
			}
			if info.Rows != int64(len(pairs)) || !samePairs(got, pairs) {
				t.Errorf("%d pairs read (%d recorded), %d written; same %v", len(got), info.Rows, len(pairs), samePairs(got, pairs))
			}
			var ends [][2]int64
			if err := ReadVerifiedEnds(ctx, st, &info, VerifiedPairsMagic, func(a, b int64) error {
				ends = append(ends, [2]int64{a, b})
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(ends, pairs, func(e [2]int64, p records.Pair) bool { return e == [2]int64{p.A, p.B} }) {
				t.Errorf("%d ends read, differing from the pairs", len(ends))
			}
			if blocks := len(verifiedBlocks(t, st, info, VerifiedPairsMagic)); blocks != tt.wantBlocks {
				t.Errorf("%d blocks, want %d", blocks, tt.wantBlocks)
			}

			// The same pairs, written again in other batches: the same file.
			w := NewPairsWriter(st, "q")
			for lo := 0; lo < len(pairs); lo += 1000 {
				if err := w.WritePairs(ctx, pairs[lo:min(lo+1000, len(pairs))]); err != nil {
					t.Fatal(err)
				}
			}
			again, err := w.Commit(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if again.Checksum != info.Checksum || again.Bytes != info.Bytes || again.Rows != info.Rows {
				t.Errorf("written again: %+v, first %+v", again, info)
			}

			// The pairs as group members: (a, b) as (group, doc).
			members := make([]records.ExactMember, len(pairs))
			for i, p := range pairs {
				members[i] = records.ExactMember{Group: p.A, Doc: p.B, GroupID: p.AID, ID: p.BID, GroupURL: p.AURL, URL: p.BURL}
			}
			minfo := writeMembersFile(t, st, "m", members)
			gotMembers, err := readMembersFile(ctx, st, &minfo)
			if err != nil || !slices.Equal(gotMembers, members) {
				t.Errorf("%d members read, %d written, same %v (%v)", len(gotMembers), len(members), slices.Equal(gotMembers, members), err)
			}
			if err := ReadVerifiedPairs(ctx, st, &minfo, func([]records.Pair) error { return nil }); !errors.Is(err, ErrCorrupt) {
				t.Errorf("a file of members read as pairs: %v", err)
			}
		})
	}
}

// verifiedBlocks returns the offsets of a verified file's blocks.
func verifiedBlocks(t *testing.T, st storage.Opener, info fileinfo.Info, magic string) []int64 {
	t.Helper()
	ctx := context.Background()
	r, err := openVerified(ctx, st, &info, magic)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	var offs []int64
	for {
		b, err := r.next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if b == nil {
			return offs
		}
		offs = append(offs, b.off)
	}
}

// TestVerifiedEmpty checks that a writer given no row writes no file.
func TestVerifiedEmpty(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	pairs, members := NewPairsWriter(st, "p"), NewMembersWriter(st, "m")
	if err := pairs.WritePairs(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := members.WriteMembers(ctx, []records.ExactMember{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []*VerifiedWriter{pairs, members} {
		info, err := w.Commit(ctx)
		if info != nil || err != nil {
			t.Errorf("%s: %+v, %v, want no file", w.name, info, err)
		}
		if _, err := os.Stat(st.Path(w.name)); !os.IsNotExist(err) {
			t.Errorf("%s: %v, want no file", w.name, err)
		}
	}
}

// TestVerifiedRefused gives the writer rows it cannot write faithfully:
// it fails, and the file is not written.
func TestVerifiedRefused(t *testing.T) {
	ctx := context.Background()
	p := func(a, b int64, url string) records.Pair {
		return records.Pair{A: a, B: b, AID: fmt.Sprint(a), BID: fmt.Sprint(b), AURL: url, BURL: fmt.Sprint("u", b), Method: "exact", BandsCollided: 1}
	}
	for _, tt := range []struct {
		name  string
		pairs []records.Pair
		want  string
	}{
		{"out of order", []records.Pair{p(1, 3, ""), p(1, 2, "")}, "not in order"},
		{"twice", []records.Pair{p(1, 2, ""), p(1, 2, "")}, "not in order"},
		{"a document of two urls", []records.Pair{p(1, 2, "x"), p(1, 3, "y")}, "is named"},
		{"a pair of an earlier job", []records.Pair{func() records.Pair { q := p(1, 2, ""); q.AJob = new("j"); return q }()}, "earlier job"},
		{"a negative band", []records.Pair{func() records.Pair { q := p(1, 2, ""); q.FirstBand = -1; return q }()}, "negative"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := newStore(t)
			w := NewPairsWriter(st, "p")
			err := w.WritePairs(ctx, tt.pairs)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error saying %q", err, tt.want)
			}
			w.Abort()
			if names, err := st.List(ctx, ""); err != nil || len(names) > 0 {
				t.Errorf("left %v (%v)", names, err)
			}
		})
	}
	st := newStore(t)
	if err := NewMembersWriter(st, "m").WritePairs(ctx, []records.Pair{p(1, 2, "")}); err == nil {
		t.Error("pairs written to a file of members")
	}
	if err := NewPairsWriter(st, "p").WriteMembers(ctx, []records.ExactMember{{Group: 1, Doc: 2}}); err == nil {
		t.Error("members written to a file of pairs")
	}
}

// TestVerifiedDamage damages a verified file in each of its parts and
// checks that every reader fails with an error naming the file and the
// offset of the damage, never with wrong rows.
func TestVerifiedDamage(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(9, 10))
	st := newStore(t)
	pairs := randomPairs(r, verifiedBlockRows+100, 2000, false)
	name := job.VerifiedFile(3)
	info := writePairsFile(t, st, name, pairs)
	path := filepath.Join(st.Root(), name)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blocks := verifiedBlocks(t, st, info, VerifiedPairsMagic)
	size := int64(len(orig))
	tr := size - verifiedTrailer
	probe, err := openVerified(ctx, st, &info, VerifiedPairsMagic)
	if err != nil {
		t.Fatal(err)
	}
	probe.close()
	table, strs := probe.end, probe.strsAt
	flip := func(at int64) func([]byte) []byte {
		return func(b []byte) []byte { b[at] ^= 0x10; return b }
	}
	// resealed sets a number of the trailer and seals the table again, as
	// a writer with a bug would.
	resealed := func(field int, v uint64) func([]byte) []byte {
		return func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[tr+8*int64(field):], v)
			binary.LittleEndian.PutUint64(b[size-16:], xxhash.Sum64(b[table:size-16]))
			return b
		}
	}
	// Another well-formed file of as many bytes and rows: one similarity
	// differs in its first byte.
	other := slices.Clone(pairs)
	i := slices.IndexFunc(other, func(p records.Pair) bool { return p.Similarity != 0 })
	other[i].Similarity = math.Float64frombits(math.Float64bits(other[i].Similarity) ^ 1<<62)
	foreign := writePairsFile(t, st, "foreign", other)
	if foreign.Bytes != info.Bytes || foreign.Rows != info.Rows || foreign.Checksum == info.Checksum {
		t.Fatalf("the foreign file %+v, the file %+v: want as many bytes and rows", foreign, info)
	}
	foreignData, err := os.ReadFile(st.Path("foreign"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		damage func([]byte) []byte
		info   func(fileinfo.Info) fileinfo.Info
		at     int64 // the offset the error names
	}{
		{"the magic", flip(1), nil, 0},
		{"a block's checksum", flip(blocks[1] + 2), nil, blocks[1]},
		{"a block's size", flip(blocks[1] + 9), nil, blocks[1]},
		{"a block's rows", flip(blocks[0] + 13), nil, blocks[0]},
		{"a block's rows' documents", flip(blocks[1] + verifiedHeader + 3), nil, blocks[1]},
		{"a block's values", flip(blocks[1] - 3), nil, blocks[0]},
		{"the table's documents", flip(table + 1), nil, table},
		{"the table's strings", flip(strs + 20), nil, table},
		{"the trailer's numbers", flip(tr + 9), nil, table},
		{"the trailer's table offset", flip(tr + 7), nil, tr},
		{"the trailer's magic", flip(size - 2), nil, 0},
		{"cut short", func(b []byte) []byte { return b[:len(b)-10] }, func(i fileinfo.Info) fileinfo.Info { i.Bytes -= 10; return i }, 0},
		{"cut, size as written", func(b []byte) []byte { return b[:len(b)-10] }, nil, 0},
		{"a row fewer recorded", nil, func(i fileinfo.Info) fileinfo.Info { i.Rows--; return i }, tr},
		{"the strings' decoded size, sealed again", resealed(3, 1<<60), nil, tr},
		{"the strings' decoded size too small, sealed again", resealed(3, 1), nil, tr},
		{"the documents past an int32, sealed again", resealed(1, 1<<31), nil, tr},
		{"another file of the same size and rows", func([]byte) []byte { return slices.Clone(foreignData) }, nil, 0},
		{"a block more", func(b []byte) []byte {
			return slices.Concat(b[:table], b[blocks[1]:table], b[table:])
		}, func(i fileinfo.Info) fileinfo.Info { i.Bytes += table - blocks[1]; return i }, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := slices.Clone(orig)
			if tt.damage != nil {
				data = tt.damage(data)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			in := info
			if tt.info != nil {
				in = tt.info(info)
			}
			for _, read := range []struct {
				what string
				fn   func() error
			}{
				{"pairs", func() error {
					return ReadVerifiedPairs(ctx, st, &in, func([]records.Pair) error { return nil })
				}},
				{"ends", func() error {
					return ReadVerifiedEnds(ctx, st, &in, VerifiedPairsMagic, func(a, b int64) error { return nil })
				}},
			} {
				err := read.fn()
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), name) {
					t.Fatalf("%s: got %v, want a corrupt file error naming %s", read.what, err, name)
				}
				if tt.at >= 0 && !strings.Contains(err.Error(), fmt.Sprintf("at offset %d:", tt.at)) {
					t.Errorf("%s: got %v, want offset %d", read.what, err, tt.at)
				}
			}
		})
	}
}

// TestVerifiedForged changes bytes of a verified file's blocks and table
// and seals them with their checksums again, as a writer with a bug
// would: reading fails with an error of a corrupt file or reads rows,
// and never panics.
func TestVerifiedForged(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, kinds := range []int{4, 40} {
		t.Run(fmt.Sprintf("kinds-%d", kinds), func(t *testing.T) {
			st := newStore(t)
			pairs := randomPairs(r, 3000, 500, false)
			for i := range pairs {
				if kinds > 4 && i%3 == 0 {
					pairs[i].Method = fmt.Sprint("m", i%kinds) // more than 15 kinds: an index after the byte
				}
			}
			forge(t, st, writePairsFile(t, st, "p", pairs), r)
		})
	}
}

// forge reads the verified file of pairs info describes, changed and
// sealed again at random, many times.
func forge(t *testing.T, st *storage.Dir, info fileinfo.Info, r *rand.Rand) {
	ctx := context.Background()
	name := info.Name
	orig, err := os.ReadFile(st.Path(name))
	if err != nil {
		t.Fatal(err)
	}
	block := verifiedBlocks(t, st, info, VerifiedPairsMagic)[0]
	size := int64(binary.LittleEndian.Uint32(orig[block+8:]))
	tableAt := int64(binary.LittleEndian.Uint64(orig[len(orig)-verifiedTrailer:]))
	var failed int
	for range 400 {
		data := slices.Clone(orig)
		if r.IntN(2) == 0 {
			at := block + verifiedHeader + r.Int64N(size)
			data[at] = byte(r.IntN(256))
			binary.LittleEndian.PutUint64(data[block:], xxhash.Sum64(data[block+8:block+verifiedHeader+size]))
		} else {
			at := tableAt + r.Int64N(int64(len(data))-16-tableAt)
			data[at] = byte(r.IntN(256))
			binary.LittleEndian.PutUint64(data[len(data)-16:], xxhash.Sum64(data[tableAt:len(data)-16]))
		}
		if err := os.WriteFile(st.Path(name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		errs := []error{
			ReadVerifiedPairs(ctx, st, &info, func([]records.Pair) error { return nil }),
			ReadVerifiedEnds(ctx, st, &info, VerifiedPairsMagic, func(a, b int64) error { return nil }),
		}
		for _, err := range errs {
			if err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("got %v, want an error of a corrupt file", err)
			}
			if err != nil {
				failed++
			}
		}
	}
	if failed == 0 {
		t.Error("no forged file failed to read")
	}
}

// TestVerifiedUnsorted reads files whose rows are out of (first, second)
// order or repeated, written past the writer's own check as a foreign
// writer could: every reader fails, as corrupt, before the cluster stage
// expands them.
func TestVerifiedUnsorted(t *testing.T) {
	ctx := context.Background()
	p := func(a, b int64) records.Pair {
		return records.Pair{A: a, B: b, AID: fmt.Sprint(a), BID: fmt.Sprint(b), Method: "exact", BandsCollided: 1}
	}
	for _, tc := range []struct {
		name  string
		pairs []records.Pair
	}{
		{"second out of order", []records.Pair{p(1, 3), p(1, 2)}},
		{"first out of order", []records.Pair{p(2, 3), p(1, 4)}},
		{"repeated", []records.Pair{p(1, 2), p(1, 2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newStore(t)
			w := NewPairsWriter(st, "v")
			for _, pr := range tc.pairs {
				w.last = [2]int64{math.MinInt64, math.MinInt64}
				if err := w.WritePairs(ctx, []records.Pair{pr}); err != nil {
					t.Fatal(err)
				}
			}
			info, err := w.Commit(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := readPairsFile(ctx, st, info); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "not in order") {
				t.Errorf("ReadVerifiedPairs: %v, want corrupt, not in order", err)
			}
			err = ReadVerifiedEnds(ctx, st, info, VerifiedPairsMagic, func(a, b int64) error { return nil })
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("ReadVerifiedEnds: %v, want corrupt", err)
			}
		})
	}
}

// TestVerifiedStringsClaim reads a verified file whose table, checksums
// right, holds a zstd frame of 60 MiB in place of its strings, whose
// recorded size is a few bytes: it is corrupt, refused without
// allocating for the frame's content.
func TestVerifiedStringsClaim(t *testing.T) {
	ctx := context.Background()
	st := newMemFS()
	w := NewPairsWriter(st, "v")
	if err := w.WritePairs(ctx, []records.Pair{{A: 1, B: 2, AID: "a", BID: "b", Method: "exact"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	data := st.get("v")
	tr := data[len(data)-verifiedTrailer:]
	tableAt, docBytes := binary.LittleEndian.Uint64(tr), binary.LittleEndian.Uint64(tr[16:])
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	frame := enc.EncodeAll(make([]byte, 60<<20), nil)
	enc.Close()
	forged := slices.Clone(data[:tableAt+docBytes])
	forged = append(forged, frame...)
	trailer := slices.Clone(tr[:8*6])
	binary.LittleEndian.PutUint64(trailer[8*4:], uint64(len(frame)))
	forged = append(forged, trailer...)
	forged = binary.LittleEndian.AppendUint64(forged, xxhash.Sum64(forged[tableAt:]))
	forged = append(forged, VerifiedPairsMagic...)
	st.put("v", forged)
	info := &fileinfo.Info{Name: "v", Bytes: int64(len(forged)), Rows: 1, Checksum: xxhash.Sum64(forged)}
	checkAlloc(t, len(forged), 64, fuzzAllocSlack, func() {
		if _, err := readPairsFile(ctx, st, info); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("got %v, want ErrCorrupt", err)
		}
	})
}
