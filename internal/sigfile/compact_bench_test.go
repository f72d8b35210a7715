package sigfile_test

// Measurements behind docs/footprint-plan.md (issue 21): where the bytes
// of a job's signature files are, and what other encodings of the shingle
// sets and signatures would take, decode at, and change in the exact
// Jaccard similarity. It reads a finished job's output and is skipped
// unless NEARDUP_FP_OUT names one:
//
//	NEARDUP_FP_OUT=/tmp/fp/out NEARDUP_FP_CORPUS=/path/to/corpus-100000-1 \
//	  go test -run TestFootprint -v -timeout 60m ./internal/sigfile
//
// NEARDUP_FP_CORPUS (optional) is the job's input, for the stored-text
// alternative (zstd or S2 per document or per frame of documents,
// re-shingled on read); NEARDUP_FP_IDS=1 also compresses ids and urls with
// the texts. NEARDUP_FP_PAIRS=1 skips the set encodings and the texts (for
// a large job); NEARDUP_FP_QUICK=1 measures only the candidates and the
// band files. No production code uses these encodings: they are
// prototypes to measure.

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/benchtext"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/sigfile"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
	"github.com/neardup/neardup/pkg/shingle"
)

// fpDoc is what the measurement keeps of one document.
type fpDoc struct {
	id  string
	set []uint64
	sig []uint32
}

func TestFootprint(t *testing.T) {
	out := os.Getenv("NEARDUP_FP_OUT")
	if out == "" {
		t.Skip("NEARDUP_FP_OUT is not set: it names a finished job's output to measure")
	}
	ctx := context.Background()
	st, err := storage.NewDir(out)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}

	if os.Getenv("NEARDUP_FP_QUICK") != "" { // large jobs: only what needs no sets in memory
		measureCandidates(t, out, ix)
		measureBandColumns(t, out)
		measureBandLayouts(t, out, ix.Docs)
		return
	}
	// 1. The signature files, record by record.
	docs, ords := readSigFiles(t, st, ix)
	var shingles int64
	for _, d := range docs {
		shingles += int64(len(d.set))
	}
	t.Logf("documents with a record %d, shingles %d (%.1f per document)", len(docs), shingles, float64(shingles)/float64(len(docs)))

	// 2. Encodings of the sets (NEARDUP_FP_PAIRS=1: only the similarity
	// changes, for a large job).
	pairsOnly := os.Getenv("NEARDUP_FP_PAIRS") != ""
	if !pairsOnly {
		measureSets(t, docs)
	}

	// 3. Similarity changes on real pairs, and the signatures.
	pairs := readPairs(t, out, ords, len(docs))
	measureJaccard(t, docs, pairs)
	measureSigs(t, docs, pairs)
	measureCandidates(t, out, ix)
	measureBandColumns(t, out)
	measureBandLayouts(t, out, ix.Docs)

	if pairsOnly {
		return
	}
	// 4. Stored text instead of sets.
	if corpus := os.Getenv("NEARDUP_FP_CORPUS"); corpus != "" {
		measureText(t, ix, corpus, docs, ords)
	}
	measureProse(t)
}

// readSigFiles reads every record of the index's signature files and
// prints how their bytes divide between fields.
func readSigFiles(t *testing.T, st *storage.Dir, ix *index.Index) ([]fpDoc, map[int64]int) {
	var (
		docs                                   []fpDoc
		ords                                   = map[int64]int{}
		files, idB, urlB, sigB, setB, hdrB, nB int64
		slots                                  int64
	)
	for _, c := range ix.Chunks {
		f, err := os.Open(st.Path(c.SigFile.Name))
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		files += fi.Size()
		r, err := sigfile.NewReader(f, fi.Size())
		if err != nil {
			t.Fatal(err)
		}
		slots += int64(r.Len())
		for slot := range r.Len() {
			rec, ok, err := r.Get(slot)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				continue
			}
			nB++
			idB += int64(len(rec.ID))
			urlB += int64(len(rec.URL))
			sigB += int64(len(rec.Sig))
			setB += int64(len(rec.Shingles))
			for _, l := range []int{len(rec.ID), len(rec.URL), len(rec.Sig), len(rec.Shingles)} {
				hdrB += int64(uvarintLen(uint64(l)))
			}
			set := make([]uint64, len(rec.Shingles)/8)
			for i := range set {
				set[i] = binary.LittleEndian.Uint64(rec.Shingles[8*i:])
			}
			sig := make([]uint32, len(rec.Sig)/4)
			for i := range sig {
				sig[i] = binary.LittleEndian.Uint32(rec.Sig[4*i:])
			}
			ords[job.Ordinal(c.Chunk, slot)] = len(docs)
			docs = append(docs, fpDoc{id: rec.ID, set: set, sig: sig})
		}
		f.Close()
	}
	n := float64(len(docs))
	sum := 8 * nB // record checksums
	idx := 8*(slots+int64(len(ix.Chunks))) + 24*int64(len(ix.Chunks))
	t.Logf("signature files: %d bytes, %.0f per document with a record (%d files)", files, float64(files)/n, len(ix.Chunks))
	for _, row := range []struct {
		name string
		b    int64
	}{{"shingle sets (8 bytes a shingle)", setB}, {"signatures", sigB}, {"ids", idB}, {"urls", urlB}, {"field lengths (uvarint)", hdrB}, {"record checksums", sum}, {"slot index and trailers", idx}} {
		t.Logf("  %-34s %11d  %7.1f B/doc  %5.1f%%", row.name, row.b, float64(row.b)/n, 100*float64(row.b)/float64(files))
	}
	return docs, ords
}

func uvarintLen(v uint64) int { return len(binary.AppendUvarint(nil, v)) }

// top returns the b high bits of every value of a sorted 64-bit set,
// sorted and without repeats (values that collide in b bits merge).
func top(dst []uint32, set []uint64, b int) []uint32 {
	dst = dst[:0]
	for _, v := range set {
		h := uint32(v >> (64 - b))
		if len(dst) == 0 || dst[len(dst)-1] != h {
			dst = append(dst, h)
		}
	}
	return dst
}

// codec32 is an encoding of a sorted set of 32-bit values.
type codec32 struct {
	name string
	enc  func(dst []byte, s []uint32) []byte
	dec  func(dst []uint32, src []byte) []uint32
}

var codecs32 = []codec32{
	{"32-bit raw", encRaw32, decRaw32},
	{"32-bit delta uvarint", encDV32, decDV32},
	{"32-bit delta stream-vbyte", encSVB32, decSVB32},
	{"32-bit delta bit-packed (128)", encBP32, decBP32},
	{"32-bit Elias-Fano", encEF32, decEF32},
}

func encRaw32(dst []byte, s []uint32) []byte {
	for _, v := range s {
		dst = binary.LittleEndian.AppendUint32(dst, v)
	}
	return dst
}

func decRaw32(dst []uint32, src []byte) []uint32 {
	for i := 0; i+4 <= len(src); i += 4 {
		dst = append(dst, binary.LittleEndian.Uint32(src[i:]))
	}
	return dst
}

func encDV32(dst []byte, s []uint32) []byte {
	prev := uint32(0)
	for _, v := range s {
		dst = binary.AppendUvarint(dst, uint64(v-prev))
		prev = v
	}
	return dst
}

func decDV32(dst []uint32, src []byte) []uint32 {
	prev := uint32(0)
	for len(src) > 0 {
		d, n := binary.Uvarint(src)
		src = src[n:]
		prev += uint32(d)
		dst = append(dst, prev)
	}
	return dst
}

// Stream-VByte (Lemire et al.) on the deltas: a count, a control byte of
// four 2-bit lengths per four values, then the values' 1 to 4 bytes.
func encSVB32(dst []byte, s []uint32) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	ctl := len(dst)
	dst = append(dst, make([]byte, (len(s)+3)/4)...)
	prev := uint32(0)
	for i, v := range s {
		d := v - prev
		prev = v
		n := 1
		switch {
		case d >= 1<<24:
			n = 4
		case d >= 1<<16:
			n = 3
		case d >= 1<<8:
			n = 2
		}
		dst[ctl+i/4] |= byte(n-1) << (2 * (i % 4))
		for k := range n {
			dst = append(dst, byte(d>>(8*k)))
		}
	}
	return dst
}

func decSVB32(dst []uint32, src []byte) []uint32 {
	n, k := binary.Uvarint(src)
	src = src[k:]
	ctl, data := src[:(n+3)/4], src[(n+3)/4:]
	prev := uint32(0)
	p := 0
	for i := range int(n) {
		c := ctl[i/4] >> (2 * (i % 4)) & 3
		var d uint32
		switch c {
		case 0:
			d = uint32(data[p])
		case 1:
			d = uint32(data[p]) | uint32(data[p+1])<<8
		case 2:
			d = uint32(data[p]) | uint32(data[p+1])<<8 | uint32(data[p+2])<<16
		default:
			d = binary.LittleEndian.Uint32(data[p:])
		}
		p += int(c) + 1
		prev += d
		dst = append(dst, prev)
	}
	return dst
}

// Frame-of-reference bit packing of the deltas: a count, then per block
// of 128 deltas one byte of width and the deltas at that width.
const bpBlock = 128

func encBP32(dst []byte, s []uint32) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	prev := uint32(0)
	var d [bpBlock]uint32
	for lo := 0; lo < len(s); lo += bpBlock {
		hi := min(lo+bpBlock, len(s))
		w := 0
		for i := lo; i < hi; i++ {
			d[i-lo] = s[i] - prev
			prev = s[i]
			w = max(w, bits.Len32(d[i-lo]))
		}
		dst = append(dst, byte(w))
		dst = packBits(dst, d[:hi-lo], w)
	}
	return dst
}

func decBP32(dst []uint32, src []byte) []uint32 {
	n, k := binary.Uvarint(src)
	src = src[k:]
	prev := uint32(0)
	for lo := 0; lo < int(n); lo += bpBlock {
		cnt := min(bpBlock, int(n)-lo)
		w := int(src[0])
		nb := (cnt*w + 7) / 8
		blk := src[1 : 1+nb]
		src = src[1+nb:]
		mask := uint64(1)<<w - 1
		for i := range cnt {
			prev += uint32(readBits(blk, i*w) & mask)
			dst = append(dst, prev)
		}
	}
	return dst
}

// packBits appends values of w bits each, least significant bit first.
func packBits(dst []byte, vals []uint32, w int) []byte {
	var acc uint64
	n := 0
	for _, v := range vals {
		acc |= uint64(v) << n
		n += w
		for n >= 8 {
			dst = append(dst, byte(acc))
			acc >>= 8
			n -= 8
		}
	}
	if n > 0 {
		dst = append(dst, byte(acc))
	}
	return dst
}

// readBits returns the bits of b from bit offset off on (zeros past its
// end); the caller masks the width it needs (at most 57 bits).
func readBits(b []byte, off int) uint64 {
	i := off >> 3
	if i+8 <= len(b) {
		return binary.LittleEndian.Uint64(b[i:]) >> (off & 7)
	}
	var tmp [8]byte
	copy(tmp[:], b[min(i, len(b)):])
	return binary.LittleEndian.Uint64(tmp[:]) >> (off & 7)
}

// readWide returns the l bits of b at bit offset off, for any l <= 64.
func readWide(b []byte, off, l int) uint64 {
	if l <= 57 {
		return readBits(b, off) & (1<<l - 1)
	}
	lo := readBits(b, off)
	got := 64 - off&7
	v := lo | readBits(b, off+got)<<got
	if l < 64 {
		v &= 1<<l - 1
	}
	return v
}

// Elias-Fano over a universe of 2^ubits: a count, the number L of low
// bits, the low bits of every value packed, then the high parts in unary
// (bit high(v_i)+i set).
func encEF(dst []byte, s []uint64, ubits int) []byte {
	n := len(s)
	dst = binary.AppendUvarint(dst, uint64(n))
	if n == 0 {
		return dst
	}
	L := max(0, ubits-bits.Len64(uint64(n)))
	dst = append(dst, byte(L))
	words := make([]uint64, (n*L+63)/64+1)
	for i, v := range s {
		if L == 0 {
			break
		}
		low := v
		if L < 64 {
			low &= 1<<L - 1
		}
		off := i * L
		w, o := off>>6, off&63
		words[w] |= low << o
		if o+L > 64 {
			words[w+1] |= low >> (64 - o)
		}
	}
	for i := range (n*L + 7) / 8 {
		dst = append(dst, byte(words[i/8]>>(8*(i%8))))
	}
	hiBits := n + int(s[n-1]>>L) + 1
	hi := make([]byte, (hiBits+7)/8)
	for i, v := range s {
		p := int(v>>L) + i
		hi[p>>3] |= 1 << (p & 7)
	}
	return append(dst, hi...)
}

func decEF(dst []uint64, src []byte) []uint64 {
	n, k := binary.Uvarint(src)
	src = src[k:]
	if n == 0 {
		return dst
	}
	L := int(src[0])
	src = src[1:]
	lowBytes := (int(n)*L + 7) / 8
	low, hi := src[:lowBytes], src[lowBytes:]
	i := 0
	for w := 0; w < len(hi) && i < int(n); w += 8 {
		var word uint64
		if w+8 <= len(hi) {
			word = binary.LittleEndian.Uint64(hi[w:])
		} else {
			var tmp [8]byte
			copy(tmp[:], hi[w:])
			word = binary.LittleEndian.Uint64(tmp[:])
		}
		for word != 0 && i < int(n) {
			p := 8*w + bits.TrailingZeros64(word)
			word &= word - 1
			var l uint64
			if L > 0 {
				l = readWide(low, i*L, L)
			}
			dst = append(dst, uint64(p-i)<<L|l)
			i++
		}
	}
	return dst
}

func encEF32(dst []byte, s []uint32) []byte {
	v := make([]uint64, len(s))
	for i, x := range s {
		v[i] = uint64(x)
	}
	return encEF(dst, v, 32)
}

// decEF32 is decEF for a 32-bit universe, writing 32-bit values.
func decEF32(dst []uint32, src []byte) []uint32 {
	n, k := binary.Uvarint(src)
	src = src[k:]
	if n == 0 {
		return dst
	}
	L := int(src[0])
	src = src[1:]
	lowBytes := (int(n)*L + 7) / 8
	low, hi := src[:lowBytes], src[lowBytes:]
	mask := uint64(1)<<L - 1
	i := 0
	for w := 0; w < len(hi) && i < int(n); w += 8 {
		var word uint64
		if w+8 <= len(hi) {
			word = binary.LittleEndian.Uint64(hi[w:])
		} else {
			var tmp [8]byte
			copy(tmp[:], hi[w:])
			word = binary.LittleEndian.Uint64(tmp[:])
		}
		for word != 0 && i < int(n) {
			p := 8*w + bits.TrailingZeros64(word)
			word &= word - 1
			dst = append(dst, uint32(p-i)<<L|uint32(readBits(low, i*L)&mask))
			i++
		}
	}
	return dst
}

func encDV64(dst []byte, s []uint64) []byte {
	prev := uint64(0)
	for _, v := range s {
		dst = binary.AppendUvarint(dst, v-prev)
		prev = v
	}
	return dst
}

func decDV64(dst []uint64, src []byte) []uint64 {
	prev := uint64(0)
	for len(src) > 0 {
		d, n := binary.Uvarint(src)
		src = src[n:]
		prev += d
		dst = append(dst, prev)
	}
	return dst
}

// timeDecode returns the best of three passes' time.
func timeDecode(pass func()) time.Duration {
	best := time.Duration(math.MaxInt64)
	for range 3 {
		start := time.Now()
		pass()
		best = min(best, time.Since(start))
	}
	return best
}

// entropyBits is log2 C(2^b, n): the fewest bits any encoding of an
// n-subset of a b-bit universe needs on average (uniform subsets).
func entropyBits(n, b int) float64 {
	u := math.Ldexp(1, b)
	lu, _ := math.Lgamma(u + 1)
	ln, _ := math.Lgamma(float64(n) + 1)
	lr, _ := math.Lgamma(u - float64(n) + 1)
	return (lu - ln - lr) / math.Ln2
}

func measureSets(t *testing.T, docs []fpDoc) {
	nd := float64(len(docs))
	var elems int64
	for _, d := range docs {
		elems += int64(len(d.set))
	}
	report := func(name string, size int64, el int64, dur time.Duration) {
		t.Logf("  %-32s %7.1f B/doc  %5.2f B/shingle  decode %6.0f ns/set  %5.2f ns/value  %6.0f MB/s encoded",
			name, float64(size)/nd, float64(size)/float64(el), float64(dur.Nanoseconds())/nd,
			float64(dur.Nanoseconds())/float64(el), float64(size)/dur.Seconds()/1e6)
	}
	t.Logf("shingle-set encodings (%d sets, %d shingles; decode = best of 3 passes over all sets, one core, into a reused slice):", len(docs), elems)

	// 64-bit.
	{
		var buf []byte
		offs := []int{0}
		for _, d := range docs {
			for _, v := range d.set {
				buf = binary.LittleEndian.AppendUint64(buf, v)
			}
			offs = append(offs, len(buf))
		}
		var dst []uint64
		dur := timeDecode(func() {
			for i := range docs {
				src := buf[offs[i]:offs[i+1]]
				dst = dst[:0]
				for j := 0; j+8 <= len(src); j += 8 {
					dst = append(dst, binary.LittleEndian.Uint64(src[j:]))
				}
			}
		})
		report("64-bit raw (today)", int64(len(buf)), elems, dur)
	}
	for _, c := range []struct {
		name string
		enc  func([]byte, []uint64) []byte
		dec  func([]uint64, []byte) []uint64
	}{
		{"64-bit delta uvarint", encDV64, decDV64},
		{"64-bit Elias-Fano", func(d []byte, s []uint64) []byte { return encEF(d, s, 64) }, decEF},
	} {
		var buf []byte
		offs := []int{0}
		for _, d := range docs {
			buf = c.enc(buf, d.set)
			offs = append(offs, len(buf))
		}
		var dst []uint64
		for i, d := range docs[:min(len(docs), 5000)] { // round trip
			dst = c.dec(dst[:0], buf[offs[i]:offs[i+1]])
			if !slices.Equal(dst, d.set) {
				t.Fatalf("%s: set %d does not round-trip", c.name, i)
			}
		}
		dur := timeDecode(func() {
			for i := range docs {
				dst = c.dec(dst[:0], buf[offs[i]:offs[i+1]])
			}
		})
		report(c.name, int64(len(buf)), elems, dur)
	}
	var ent64 float64
	for _, d := range docs {
		ent64 += entropyBits(len(d.set), 64)
	}
	t.Logf("  %-32s %7.1f B/doc  %5.2f B/shingle", "64-bit entropy bound", ent64/8/nd, ent64/8/float64(elems))

	// 32 bits and fewer: the sets' high bits.
	for _, b := range []int{32, 24, 20, 16} {
		sets := make([][]uint32, len(docs))
		var el int64
		var ent float64
		for i, d := range docs {
			sets[i] = top(nil, d.set, b)
			el += int64(len(sets[i]))
			ent += entropyBits(len(sets[i]), b)
		}
		merged := elems - el
		t.Logf("  -- %d-bit: %d values (%d shingles merged by collisions within a set, %.2g per set)", b, el, merged, float64(merged)/nd)
		list := codecs32
		if b != 32 {
			list = []codec32{{"Elias-Fano", encEF32, decEF32}}
		}
		for _, c := range list {
			var buf []byte
			offs := []int{0}
			for _, s := range sets {
				if b != 32 {
					v := make([]uint64, len(s))
					for i, x := range s {
						v[i] = uint64(x)
					}
					buf = encEF(buf, v, b)
				} else {
					buf = c.enc(buf, s)
				}
				offs = append(offs, len(buf))
			}
			var dst []uint32
			for i, s := range sets[:min(len(sets), 5000)] {
				dst = c.dec(dst[:0], buf[offs[i]:offs[i+1]])
				if !slices.Equal(dst, s) {
					t.Fatalf("%d-bit %s: set %d does not round-trip", b, c.name, i)
				}
			}
			dur := timeDecode(func() {
				for i := range sets {
					dst = c.dec(dst[:0], buf[offs[i]:offs[i+1]])
				}
			})
			name := c.name
			if b != 32 {
				name = fmt.Sprintf("%d-bit %s", b, c.name)
			}
			report(name, int64(len(buf)), el, dur)
		}
		t.Logf("  %-32s %7.1f B/doc  %5.2f B/value", fmt.Sprintf("%d-bit entropy bound", b), ent/8/nd, ent/8/float64(el))
	}
}

type fpPair struct {
	a, b int     // dense document indexes
	sim  float64 // the job's similarity, or -1
	kind string
}

// readPairs returns the job's verified pairs (pairs/), its candidate pairs
// (candidates/, those not verified) and random pairs.
func readPairs(t *testing.T, out string, ords map[int64]int, n int) []fpPair {
	var pairs []fpPair
	seen := map[[2]int]bool{}
	add := func(a, b int64, sim float64, kind string) {
		ia, oka := ords[a]
		ib, okb := ords[b]
		if !oka || !okb || seen[[2]int{ia, ib}] {
			return
		}
		seen[[2]int{ia, ib}] = true
		pairs = append(pairs, fpPair{ia, ib, sim, kind})
	}
	files, _ := filepath.Glob(filepath.Join(out, "pairs", "*.parquet"))
	for _, f := range files {
		rows, err := parquet.ReadFile[records.Pair](f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			add(r.A, r.B, r.Similarity, "pairs/")
		}
	}
	files, _ = filepath.Glob(filepath.Join(out, "candidates", "*.parquet"))
	for _, f := range files {
		rows, err := parquet.ReadFile[records.Candidate](f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			add(r.A, r.B, -1, "candidates/ not in pairs/")
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		a, b := r.IntN(n), r.IntN(n)
		if a == b || seen[[2]int{a, b}] {
			continue
		}
		seen[[2]int{a, b}] = true
		pairs = append(pairs, fpPair{a, b, -1, "random"})
	}
	return pairs
}

func measureJaccard(t *testing.T, docs []fpDoc, pairs []fpPair) {
	kinds := []string{"pairs/", "candidates/ not in pairs/", "random"}
	byKind := map[string][]fpPair{}
	for _, p := range pairs {
		byKind[p.kind] = append(byKind[p.kind], p)
	}
	// The 64-bit reference, and the job's own figure for listed pairs.
	j64 := make([]float64, len(pairs))
	var wrong int
	var maxU int
	var sumU float64
	for i, p := range pairs {
		a, b := docs[p.a].set, docs[p.b].set
		j64[i] = shingle.Jaccard(a, b)
		if p.sim >= 0 && p.sim != j64[i] {
			wrong++
		}
		u := len(a) + len(b) - int(math.Round(j64[i]*float64(len(a)+len(b))/(1+j64[i])))
		maxU = max(maxU, u)
		sumU += float64(u)
	}
	t.Logf("pairs: %d listed (pairs/), %d other candidates, %d random; %d listed pairs whose similarity differs from the 64-bit recomputation; union size mean %.0f, max %d",
		len(byKind["pairs/"]), len(byKind["candidates/ not in pairs/"]), len(byKind["random"]), wrong, sumU/float64(len(pairs)), maxU)
	for _, b := range []int{32, 24, 20, 16} {
		// Truncated sets, made once per document that a pair names.
		sets := map[int][]uint32{}
		get := func(i int) []uint32 {
			if s, ok := sets[i]; ok {
				return s
			}
			s := top(nil, docs[i].set, b)
			sets[i] = s
			return s
		}
		for _, kind := range kinds {
			var n, changed, flip8, flip5 int
			var sum, mx, expColl, expDJ float64
			for i, p := range pairs {
				if p.kind != kind {
					continue
				}
				n++
				jb := shingle.Jaccard(get(p.a), get(p.b))
				d := math.Abs(jb - j64[i])
				if d > 0 {
					changed++
				}
				sum += d
				mx = max(mx, d)
				if (jb >= 0.8) != (j64[i] >= 0.8) {
					flip8++
				}
				if (jb >= 0.5) != (j64[i] >= 0.5) {
					flip5++
				}
				la, lb := len(docs[p.a].set), len(docs[p.b].set)
				u := float64(la+lb) / (1 + j64[i])
				e := u * (u - 1) / 2 / math.Ldexp(1, b) // expected colliding pairs in the union
				expColl += e
				expDJ += e * 2 / math.Max(u-1, 1)
			}
			if n == 0 {
				continue
			}
			t.Logf("  %d-bit, %-26s n=%7d  changed %6d (%.2e)  mean|dJ| %.2e  max|dJ| %.2e  decision flips at 0.8: %d, at 0.5: %d  (theory: E[collisions] %.2e/pair, E|dJ| <= %.2e)",
				b, kind, n, changed, float64(changed)/float64(n), sum/float64(n), mx, flip8, flip5, expColl/float64(n), expDJ/float64(n))
		}
	}
	// Intersection speed on the listed and candidate pairs, 64 against 32 bits.
	var ps []fpPair
	for _, p := range pairs {
		if p.kind != "random" {
			ps = append(ps, p)
		}
	}
	s32 := map[int][]uint32{}
	for _, p := range ps {
		for _, i := range []int{p.a, p.b} {
			if _, ok := s32[i]; !ok {
				s32[i] = top(nil, docs[i].set, 32)
			}
		}
	}
	var sink float64
	d64 := timeDecode(func() {
		for _, p := range ps {
			sink += shingle.Jaccard(docs[p.a].set, docs[p.b].set)
		}
	})
	d32 := timeDecode(func() {
		for _, p := range ps {
			sink += shingle.Jaccard(s32[p.a], s32[p.b])
		}
	})
	t.Logf("exact Jaccard of %d candidate pairs (merge): 64-bit %.0f ns/pair, 32-bit %.0f ns/pair (%v)",
		len(ps), float64(d64.Nanoseconds())/float64(len(ps)), float64(d32.Nanoseconds())/float64(len(ps)), sink > 0)
}

// measureSigs reports the signature's size at 32, 16 and 8 bits a value
// and the equal values b-bit values add by chance on the listed pairs.
func measureSigs(t *testing.T, docs []fpDoc, pairs []fpPair) {
	k := len(docs[0].sig)
	for _, b := range []int{32, 16, 8} {
		var n int
		var extra, maxExtra float64
		for _, p := range pairs {
			if p.kind == "random" {
				continue
			}
			sa, sb := docs[p.a].sig, docs[p.b].sig
			full, part := 0, 0
			mask := uint32(1)<<b - 1
			if b == 32 {
				mask = ^uint32(0)
			}
			for i := range sa {
				if sa[i] == sb[i] {
					full++
				}
				if sa[i]&mask == sb[i]&mask {
					part++
				}
			}
			n++
			extra += float64(part - full)
			maxExtra = max(maxExtra, float64(part-full))
		}
		t.Logf("signature, K=%d at %2d bits a value: %4d B/doc; equal values added by chance on %d candidate pairs: mean %.3f, max %.0f (expected (K-m)/2^%d)",
			k, b, k*b/8, n, extra/float64(n), maxExtra, b)
	}
}

// measureCandidates counts the documents that verification reads: those
// named by a candidate pair (candidates/) or an exact group (exact.parquet).
func measureCandidates(t *testing.T, out string, ix *index.Index) {
	inCand := map[int64]bool{}
	files, _ := filepath.Glob(filepath.Join(out, "candidates", "*.parquet"))
	for _, f := range files {
		rows, err := parquet.ReadFile[records.Candidate](f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			inCand[r.A], inCand[r.B] = true, true
		}
	}
	nc := len(inCand)
	exact, err := parquet.ReadFile[records.ExactRecord](filepath.Join(out, job.ExactFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range exact {
		inCand[r.Doc] = true
	}
	t.Logf("documents read by verify: %d in a candidate pair (%.1f%% of %d), %d with exact-group members (%.1f%%)",
		nc, 100*float64(nc)/float64(ix.Docs), ix.Docs, len(inCand), 100*float64(len(inCand))/float64(ix.Docs))
}

// measureBandColumns divides the band files' bytes between their columns.
func measureBandColumns(t *testing.T, out string) {
	files, _ := filepath.Glob(filepath.Join(out, "bands", "part=*", "*.parquet"))
	cols := map[string]int64{}
	var total, rows int64
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		total += fi.Size()
		pf, err := parquet.OpenFile(f, fi.Size())
		if err != nil {
			t.Fatal(err)
		}
		md := pf.Metadata()
		rows += md.NumRows
		for _, rg := range md.RowGroups {
			for _, c := range rg.Columns {
				cols[strings.Join(c.MetaData.PathInSchema, ".")] += c.MetaData.TotalCompressedSize
			}
		}
		f.Close()
	}
	var sum int64
	names := make([]string, 0, len(cols))
	for c, b := range cols {
		names = append(names, c)
		sum += b
	}
	sort.Strings(names)
	t.Logf("band files: %d files, %d bytes, %d records (%.1f B/record); columns:", len(files), total, rows, float64(total)/float64(rows))
	for _, c := range names {
		t.Logf("  %-6s %11d  %.2f B/record", c, cols[c], float64(cols[c])/float64(rows))
	}
	t.Logf("  footers and headers %d (%.0f B/file)", total-sum, float64(total-sum)/float64(len(files)))
}

// measureText measures the documents' texts compressed with zstd, by
// document and in blocks, and the cost of re-shingling them on read.
func measureText(t *testing.T, ix *index.Index, corpus string, docs []fpDoc, ords map[int64]int) {
	byID := map[string]int{}
	for i, d := range docs {
		byID[d.id] = i
	}
	files, _ := filepath.Glob(filepath.Join(corpus, "*.jsonl.gz"))
	sort.Strings(files)
	var texts, withIDs [][]byte
	var idx []int
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(zr)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var rec struct{ ID, URL, Text string }
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			i, ok := byID[rec.ID]
			if !ok {
				continue // empty documents have no record
			}
			texts = append(texts, []byte(rec.Text))
			withIDs = append(withIDs, []byte(rec.ID+"\x00"+rec.URL+"\x00"+rec.Text))
			idx = append(idx, i)
		}
		f.Close()
	}
	t.Logf("stored text: %d documents of the corpus matched to records", len(texts))
	compressText(t, "generated corpus", texts)
	if os.Getenv("NEARDUP_FP_IDS") != "" {
		compressText(t, "generated corpus, id+url+text", withIDs)
	}

	// Re-shingling: the set (and signature) from the text, checked against
	// the stored set.
	sk, err := sketch.NewSketcher(ix.Params)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := shingle.NewShingler(ix.Params.ShingleOptions())
	if err != nil {
		t.Fatal(err)
	}
	var bad int
	for i, text := range texts {
		if s := sk.Sketch(text); !slices.Equal(s.Set, docs[idx[i]].set) {
			bad++
		}
	}
	var textBytes int64
	for _, x := range texts {
		textBytes += int64(len(x))
	}
	var sorter shingle.SetSorter
	var h []uint64
	dSet := timeDecode(func() {
		for _, text := range texts {
			h, _ = sh.Hashes(h[:0], text)
			_ = sorter.SortUnique(h)
		}
	})
	dSketch := timeDecode(func() {
		for _, text := range texts {
			_ = sk.Sketch(text)
		}
	})
	n := float64(len(texts))
	t.Logf("re-shingling %d texts (%.0f B each): %d sets differ from the stored ones; set only %.1f us/doc (%.0f MB/s), set+signature+keys %.1f us/doc (%.0f MB/s)",
		len(texts), float64(textBytes)/n, bad, float64(dSet.Microseconds())/n, float64(textBytes)/dSet.Seconds()/1e6,
		float64(dSketch.Microseconds())/n, float64(textBytes)/dSketch.Seconds()/1e6)
}

// compressText reports the size, encode speed and decode time of texts
// compressed one by one and in blocks of consecutive documents, with zstd
// and with S2 (klauspost/compress/s2, Snappy's faster relative).
func compressText(t *testing.T, label string, texts [][]byte) {
	var raw int64
	for _, x := range texts {
		raw += int64(len(x))
	}
	n := float64(len(texts))
	type codec struct {
		name   string
		blocks []int
		enc    func(src []byte) []byte
		dec    func(dst, src []byte) ([]byte, error)
	}
	var codecs []codec
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	for _, lv := range []zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedDefault, zstd.SpeedBetterCompression, zstd.SpeedBestCompression} {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(lv), zstd.WithEncoderConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		defer enc.Close()
		blocks := []int{1, 16, 64}
		if lv == zstd.SpeedBestCompression {
			blocks = []int{1, 64}
		}
		codecs = append(codecs, codec{"zstd " + lv.String(), blocks,
			func(src []byte) []byte { return enc.EncodeAll(src, nil) },
			func(dst, src []byte) ([]byte, error) { return dec.DecodeAll(src, dst[:0]) }})
	}
	s2dec := func(dst, src []byte) ([]byte, error) { return s2.Decode(dst[:cap(dst)], src) }
	codecs = append(codecs,
		codec{"s2 default", []int{1, 16, 64}, func(src []byte) []byte { return s2.Encode(nil, src) }, s2dec},
		codec{"s2 better", []int{1, 16, 64}, func(src []byte) []byte { return s2.EncodeBetter(nil, src) }, s2dec},
		codec{"s2 best", []int{64}, func(src []byte) []byte { return s2.EncodeBest(nil, src) }, s2dec},
	)
	for _, c := range codecs {
		for _, block := range c.blocks {
			var frames [][]byte
			var size int64
			var buf []byte
			encStart := time.Now()
			for lo := 0; lo < len(texts); lo += block {
				buf = buf[:0]
				for _, x := range texts[lo:min(lo+block, len(texts))] {
					buf = append(buf, x...)
				}
				f := c.enc(buf)
				frames = append(frames, f)
				size += int64(len(f))
			}
			encDur := time.Since(encStart)
			out := make([]byte, 0, 64*len(buf)+1<<20)
			d := timeDecode(func() {
				for _, f := range frames {
					if _, err := c.dec(out, f); err != nil {
						t.Fatal(err)
					}
				}
			})
			t.Logf("  %s, %-13s %2d doc(s) a frame: %6.1f B/doc (%.3f of the text)  encode %4.0f MB/s (%4.1f us/doc)  decode %5.1f us/doc (%.0f MB/s of text)",
				label, c.name, block, float64(size)/n, float64(size)/float64(raw), float64(raw)/encDur.Seconds()/1e6,
				float64(encDur.Microseconds())/n, float64(d.Microseconds())/n, float64(raw)/d.Seconds()/1e6)
		}
	}
}

// measureProse is compressText on real prose (the books the generator
// draws its sentences from, cut into documents of 300 to 550 words): the
// generated corpus repeats a small pool of sentences, real text does not.
func measureProse(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "corpus", "prose", "*.txt"))
	var texts [][]byte
	for i, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, benchtext.SplitDocs(string(b), 300, 550, uint64(i+1))...)
	}
	var raw int64
	for _, x := range texts {
		raw += int64(len(x))
	}
	t.Logf("real prose: %d documents of %.0f B", len(texts), float64(raw)/float64(len(texts)))
	compressText(t, "real prose", texts)
}

// Band record layouts to compare with today's (records.BandRecord,
// uncompressed, one file per chunk and partition). bandSlot keeps the
// document's slot in its chunk (the file names the chunk) and one 64-bit
// fingerprint; bandMerged is a whole partition's records in one file, as
// a reduce task could write them after its merge.
type bandSlot struct {
	Band int32 `parquet:"band,delta"`
	Key  int64 `parquet:"key,delta"`
	Doc  int32 `parquet:"doc,delta"`
	FP   int64 `parquet:"fp"`
}

type bandMerged struct {
	Band int32 `parquet:"band,delta"`
	Key  int64 `parquet:"key,delta"`
	Doc  int64 `parquet:"doc,delta"`
	FP   int64 `parquet:"fp"`
}

type bandMergedPlainDoc struct {
	Band int32 `parquet:"band,delta"`
	Key  int64 `parquet:"key,delta"`
	Doc  int64 `parquet:"doc"`
	FP   int64 `parquet:"fp"`
}

func writeParquet[T any](t *testing.T, rows []T) int64 {
	var buf countWriter
	w := parquet.NewGenericWriter[T](&buf, parquet.Compression(&parquet.Zstd), parquet.MaxRowsPerRowGroup(1<<20))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.n
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// measureBandLayouts rewrites the job's band records in other layouts and
// reports their sizes per document (nothing is written to disk).
func measureBandLayouts(t *testing.T, out string, docs int64) {
	parts, _ := filepath.Glob(filepath.Join(out, "bands", "part=*"))
	var today, zstdSame, slot, merged, mergedPlain, efBits int64
	var files int
	var mergedDur time.Duration
	for _, dir := range parts {
		names, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
		var all []records.BandRecord
		for _, name := range names {
			fi, err := os.Stat(name)
			if err != nil {
				t.Fatal(err)
			}
			today += fi.Size()
			files++
			rows, err := parquet.ReadFile[records.BandRecord](name)
			if err != nil {
				t.Fatal(err)
			}
			zstdSame += writeParquet(t, rows)
			s := make([]bandSlot, len(rows))
			for i, r := range rows {
				s[i] = bandSlot{Band: r.Band, Key: r.Key, Doc: int32(uint32(r.Doc)), FP: r.FPHi}
			}
			slot += writeParquet(t, s)
			all = append(all, rows...)
		}
		slices.SortFunc(all, func(a, b records.BandRecord) int {
			if a.Band != b.Band {
				return int(a.Band - b.Band)
			}
			if a.Key != b.Key {
				if a.Key < b.Key {
					return -1
				}
				return 1
			}
			if a.Doc < b.Doc {
				return -1
			}
			return 1
		})
		m := make([]bandMerged, len(all))
		mp := make([]bandMergedPlainDoc, len(all))
		for i, r := range all {
			m[i] = bandMerged{Band: r.Band, Key: r.Key, Doc: r.Doc, FP: r.FPHi}
			mp[i] = bandMergedPlainDoc(m[i])
		}
		wstart := time.Now()
		merged += writeParquet(t, m)
		mergedDur += time.Since(wstart)
		mergedPlain += writeParquet(t, mp)
		// Elias-Fano bound for the keys of each band, plus the document's
		// ordinal in log2(docs) bits and a 64-bit fingerprint.
		for lo := 0; lo < len(all); {
			hi := lo
			for hi < len(all) && all[hi].Band == all[lo].Band {
				hi++
			}
			n := hi - lo
			efBits += int64(n*(64-bits.Len64(uint64(n))) + 2*n)
			lo = hi
		}
		efBits += int64(len(all)) * int64(bits.Len64(uint64(docs))+64)
	}
	d := float64(docs)
	t.Logf("band records (%d files today, %d partitions), bytes per document:", files, len(parts))
	t.Logf("  today: one file per (chunk, partition), uncompressed, 2 x 64-bit fingerprint   %6.1f", float64(today)/d)
	t.Logf("  same files and schema, zstd                                                  %6.1f", float64(zstdSame)/d)
	t.Logf("  same files, slot int32 + one 64-bit fingerprint, delta band/key/doc, zstd    %6.1f", float64(slot)/d)
	t.Logf("  one file per partition (reduce's merge), ordinal delta, 64-bit fp, zstd      %6.1f  (written at %.0f MB/s of output, %.0f ns/record)",
		float64(merged)/d, float64(merged)/mergedDur.Seconds()/1e6, float64(mergedDur.Nanoseconds())/float64(16*docs))
	t.Logf("  one file per partition, ordinal plain, 64-bit fp, zstd                        %6.1f", float64(mergedPlain)/d)
	t.Logf("  bound: Elias-Fano keys per band + log2(docs)-bit ordinal + 64-bit fp          %6.1f", float64(efBits)/8/d)
}
