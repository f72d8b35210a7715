package stage

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/sigfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/minhash"
	"github.com/neardup/neardup/pkg/records"
	"github.com/neardup/neardup/pkg/shingle"
)

// sigEntry is what verification holds of one document.
type sigEntry struct {
	id  string
	sig minhash.Signature // MinHash
	fp  uint64            // SimHash
	set []uint64
}

// Verify checks every candidate pair and every exact-group claim whose
// first document is in chunk: the edges in (a, b) order, in windows of at
// most verifyWindowDocs documents whose signatures are read by random
// access to their chunks' signature files, so memory is bounded by the
// window, not by the chunk (a whole compressed file is one chunk).
//
// A candidate pair is first judged by its signatures: with MinHash and
// exact verification, a pair with fewer equal values than prefilterMatches
// allows is rejected without its exact similarity; with SimHash, a pair
// beyond the Hamming distance. A claim (a document with the same shingle
// fingerprint as its group's representative) is confirmed by comparing the
// two sets; a difference is a fingerprint collision and fails the task.
// The verified pairs of representatives and the confirmed group members
// are written to the work area; the cluster stage expands them into
// pairs/.
func Verify(ctx context.Context, st storage.FS, spec *job.Spec, chunk int, reduces []job.ReduceResult, maps map[int]job.MapResult) (*job.VerifyResult, error) {
	return verify(ctx, st, spec, chunk, reduces, maps, verifyWindowDocs)
}

// verify is Verify with windows of window documents.
func verify(ctx context.Context, st storage.FS, spec *job.Spec, chunk int, reduces []job.ReduceResult, maps map[int]job.MapResult, window int) (*job.VerifyResult, error) {
	start := time.Now()
	p := spec.Params
	res := &job.VerifyResult{Chunk: chunk, VerifiedHist: make([]int64, job.HistBins), RejectedHist: make([]int64, job.HistBins)}

	// The edges of the chunk, merged from every partition in (a, b)
	// order; a pair found in several partitions is checked once.
	var infos []pqfile.Info
	for _, rr := range reduces {
		if info, ok := rr.EdgeFiles[chunk]; ok {
			infos = append(infos, info)
		}
	}
	merged, err := mergeEdges(ctx, st, infos)
	if err != nil {
		return nil, fmt.Errorf("verify chunk %d: %w", chunk, err)
	}
	defer merged.close()

	minMatches := -1 // no pre-filter
	if p.Method == "minhash" && p.Verify == "exact" {
		minMatches = prefilterMatches(p.Threshold, p.K, prefilterRisk)
	}
	sigs := &sigSource{st: st, maps: maps, readers: map[int]*sigReader{}}
	defer sigs.close()
	// Edges are judged in (a, b) order, so pairs and group members come out
	// sorted and go to their files window by window.
	var pairs []records.Pair
	var members []records.ExactMember
	pairFile := &lazyWriter[records.Pair]{st: st, name: job.VerifiedFile(chunk), o: pqfile.Options{SortedBy: []string{"a", "b"}, RowGroupRows: verifyGroupRows}}
	memberFile := &lazyWriter[records.ExactMember]{st: st, name: job.MembersFile(chunk), o: pqfile.Options{SortedBy: []string{"group", "doc"}, RowGroupRows: verifyGroupRows}}
	defer pairFile.abort()
	defer memberFile.abort()
	// Windows of edges whose documents number at most verifyWindowDocs:
	// only one window's edges, signatures and shingle sets are held,
	// whatever the size of the chunk (a whole compressed file is one
	// chunk).
	var (
		edges []records.Candidate // the window's
		need  = map[int64]bool{}
		last  records.Candidate
		seen  bool // last is set
		more  = true
	)
	for more {
		var e records.Candidate
		e, more, err = merged.next()
		if err != nil {
			return nil, fmt.Errorf("verify chunk %d: %w", chunk, err)
		}
		if more && seen && e.A == last.A && e.B == last.B {
			continue // the same pair from another partition (or band)
		}
		last, seen = e, true
		if more && (len(need) < window || need[e.A] && need[e.B]) {
			edges = append(edges, e)
			need[e.A], need[e.B] = true, true
			continue
		}
		// The window is full (or the edges are over): judge it.
		sig, err := sigs.load(ctx, p, need)
		if err != nil {
			return nil, fmt.Errorf("verify chunk %d: %w", chunk, err)
		}
		for _, e := range edges {
			a, b := sig[e.A], sig[e.B]
			if a == nil || b == nil {
				return nil, fmt.Errorf("verify chunk %d: no signature for document %d or %d", chunk, e.A, e.B)
			}
			if e.Band == claimBand {
				if p.Verify == "exact" && !slices.Equal(a.set, b.set) {
					return nil, fmt.Errorf("verify chunk %d: documents %d (%s) and %d (%s) have the same 128-bit shingle-set fingerprint but different sets: a fingerprint collision", chunk, e.A, a.id, e.B, b.id)
				}
				members = append(members, records.ExactMember{Group: e.A, Doc: e.B, GroupID: a.id, ID: b.id})
				continue
			}
			res.Checked++
			j := judge(p, a, b)
			if minMatches >= 0 && j.matches < minMatches || p.Method == "simhash" && p.Verify == "exact" && !j.pass {
				res.Prefiltered++
				continue
			}
			sim, method, pass := j.estimate, p.Method, j.pass
			if p.Verify == "exact" {
				sim, method = shingle.Jaccard(a.set, b.set), "exact"
				res.Exact++
				if j.pass {
					res.SigPassed++
					if sim >= p.Threshold {
						res.SigPassedExact++
					}
				}
				pass = sim >= p.Threshold
			}
			bin := min(int(sim*job.HistBins), job.HistBins-1)
			if !pass {
				res.RejectedHist[bin]++
				continue
			}
			res.VerifiedHist[bin]++
			pair := records.Pair{A: e.A, B: e.B, AID: a.id, BID: b.id, Similarity: sim, Estimate: j.estimate, Method: method}
			if j.hamming >= 0 {
				h := int32(j.hamming)
				pair.Hamming = &h
			}
			pairs = append(pairs, pair)
		}
		if err := pairFile.write(ctx, pairs); err != nil {
			return nil, err
		}
		if err := memberFile.write(ctx, members); err != nil {
			return nil, err
		}
		res.Verified += int64(len(pairs))
		res.ExactMembers += int64(len(members))
		pairs, members = pairs[:0], members[:0]
		edges, need = edges[:0], map[int64]bool{}
		if more {
			edges = append(edges, e)
			need[e.A], need[e.B] = true, true
		}
	}
	if res.File, err = pairFile.commit(); err != nil {
		return nil, err
	}
	if res.MembersFile, err = memberFile.commit(); err != nil {
		return nil, err
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// lazyWriter writes a Parquet file that exists only if it has rows.
type lazyWriter[T any] struct {
	st   storage.Creator
	name string
	o    pqfile.Options
	w    *pqfile.Writer[T]
}

func (l *lazyWriter[T]) write(ctx context.Context, rows []T) error {
	if len(rows) == 0 {
		return nil
	}
	if l.w == nil {
		w, err := pqfile.NewWriter[T](ctx, l.st, l.name, l.o)
		if err != nil {
			return err
		}
		l.w = w
	}
	return l.w.Write(rows)
}

// commit completes the file: nil if it has no rows.
func (l *lazyWriter[T]) commit() (*pqfile.Info, error) {
	if l.w == nil {
		return nil, nil
	}
	info, err := l.w.Close()
	l.w = nil
	if err != nil {
		return nil, err
	}
	return &info, nil
}

func (l *lazyWriter[T]) abort() {
	if l.w != nil {
		l.w.Abort()
	}
}

// verifyGroupRows bounds the rows of a row group of a verify task's
// files, which their writers hold in memory.
const verifyGroupRows = 1 << 16

// verifyWindowDocs bounds the documents whose signatures (and shingle
// sets) a verify task holds at once.
const verifyWindowDocs = 1 << 12

// maxSigReaders bounds the signature files a verify task keeps open.
const maxSigReaders = 64

// sigSource reads documents' signatures by random access to their chunks'
// signature files, keeping up to maxSigReaders of them open (with their
// index, 8 bytes per document).
type sigSource struct {
	st      storage.FS
	maps    map[int]job.MapResult
	readers map[int]*sigReader
}

type sigReader struct {
	f    storage.File
	r    *sigfile.Reader
	name string
}

func (s *sigSource) close() {
	for _, r := range s.readers {
		r.f.Close()
	}
}

// reader opens the signature file of a chunk.
func (s *sigSource) reader(ctx context.Context, chunk int) (*sigReader, error) {
	if r := s.readers[chunk]; r != nil {
		return r, nil
	}
	mr, ok := s.maps[chunk]
	if !ok {
		return nil, fmt.Errorf("chunk %d has no map result", chunk)
	}
	f, err := s.st.Open(ctx, mr.SigFile.Name)
	if err != nil {
		return nil, err
	}
	if f.Size() != mr.SigFile.Bytes {
		f.Close()
		return nil, fmt.Errorf("%s has %d bytes, its writer wrote %d: %w", mr.SigFile.Name, f.Size(), mr.SigFile.Bytes, sigfile.ErrCorrupt)
	}
	r, err := sigfile.NewReader(f, f.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", mr.SigFile.Name, err)
	}
	if int64(r.Len()) != mr.SigFile.Rows {
		f.Close()
		return nil, fmt.Errorf("%s has %d slots, want %d: %w", mr.SigFile.Name, r.Len(), mr.SigFile.Rows, sigfile.ErrCorrupt)
	}
	if len(s.readers) >= maxSigReaders {
		for c, old := range s.readers { // any one: order affects speed only
			old.f.Close()
			delete(s.readers, c)
			break
		}
	}
	sr := &sigReader{f: f, r: r, name: mr.SigFile.Name}
	s.readers[chunk] = sr
	return sr, nil
}

// load reads the signatures of the needed documents, in file order.
func (s *sigSource) load(ctx context.Context, p job.Params, need map[int64]bool) (map[int64]*sigEntry, error) {
	docs := slices.Sorted(maps.Keys(need))
	out := make(map[int64]*sigEntry, len(need))
	for i, doc := range docs {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		sr, err := s.reader(ctx, job.ChunkOf(doc))
		if err != nil {
			return nil, err
		}
		rec, ok, err := sr.r.Get(int(uint32(doc)))
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", sr.name, doc, err)
		}
		if !ok {
			return nil, fmt.Errorf("%s: document %d has no signature", sr.name, doc)
		}
		e := &sigEntry{id: rec.ID}
		if err := decodeSignature(p, rec.Sig, e); err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		if e.set, err = decodeSet(rec.Shingles); err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		out[doc] = e
	}
	return out, nil
}
