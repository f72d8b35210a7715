package verify

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/records"
)

// sigEntry is what verification holds of one document.
type sigEntry struct {
	id  string
	url string
	sig sketch.Signature
	// set is the shingle set, of n values: nil once dropped (see
	// sigCache.settle) from a document whose set's Bits count its pairs,
	// until a pair needs it again (see blockJudge.fill).
	set []uint64
	n   int
	// keys are the band keys, computed when the document is loaded.
	keys []uint64
}

// dropped reports whether e's set was dropped.
func (e *sigEntry) dropped() bool { return len(e.set) != e.n }

// Verify checks every candidate pair and every exact-group claim whose
// first document is in chunk: the edges in (a, b) order, in blocks of at
// most verifyWindowDocs first documents whose second documents are loaded
// in windows of as many, so memory is bounded by the block, not by the
// chunk (a whole compressed file is one chunk), and by a cache of the
// entries of earlier windows (see sigCache), so that a document is loaded
// about once a task. The signatures are those the gather stage sent the
// chunk, read by random access where its gather files are (local files)
// or from a copy in a scratch (see readGathered).
//
// A candidate pair is first judged by its signatures: with MinHash and
// exact verification, a pair with fewer equal values than prefilterMatches
// allows is rejected without its exact similarity; with SimHash, a pair
// beyond the Hamming distance; with exact verification, a pair whose
// sets' sizes alone keep it below the threshold (sizesAllow). These count
// as prefiltered, outside the histogram of rejected similarities (a pair
// rejected by its sizes still counts in SigPassed when its signature
// passed, as it would have after an exact check). The common shingles of
// two documents in many pairs of their block (the pages of a template
// family) are counted on their sets relabeled as bits (see bitSets), of
// others by a merge of their hashes: the same numbers. A claim (a document with the same shingle
// fingerprint as its group's representative) is confirmed by comparing the
// two sets; a difference is a fingerprint collision and fails the task.
// The verified pairs of representatives and the confirmed group members
// are written to the work area; the cluster stage expands them into
// pairs/.
func Verify(ctx context.Context, st storage.FS, spec *job.Spec, chunk int, reduces []job.ReduceResult, src SigSource) (*job.VerifyResult, error) {
	r, err := verify(ctx, st, spec, chunk, reduces, src, verifyWindowDocs, verifyCacheBytes, newBitSets)
	if err != nil {
		return nil, fmt.Errorf("verify chunk %d: %w", chunk, err)
	}
	return r, nil
}

// verify is Verify with windows of window documents, a cache of
// cacheBytes, and the bitSets newBits returns for parts goroutines (nil:
// every exact similarity by a merge of the sets).
func verify(ctx context.Context, st storage.FS, spec *job.Spec, chunk int, reduces []job.ReduceResult, src SigSource, window int, cacheBytes int64, newBits func(parts int) *bitSets) (*job.VerifyResult, error) {
	start := time.Now()
	p := spec.Params
	res := &job.VerifyResult{Chunk: chunk, VerifiedHist: make([]int64, job.HistBins), RejectedHist: make([]int64, job.HistBins)}

	// The edges of the chunk, merged from every partition in (a, b)
	// order; a pair found in several partitions is checked once.
	var infos []fileinfo.Info
	for _, rr := range reduces {
		if info, ok := rr.EdgeFiles[chunk]; ok {
			infos = append(infos, info)
		}
	}
	merged, err := workfile.MergeEdges(ctx, st, infos)
	if err != nil {
		return nil, err
	}
	defer merged.Close()

	bnd, err := sketch.NewBanding(p)
	if err != nil {
		return nil, err
	}
	sigs, closeSigs, err := src.open(ctx, st, p, chunk, infos)
	if err != nil {
		return nil, err
	}
	defer closeSigs()
	// The edges come in (a, b) order, and so go the pairs and group
	// members to their files, block by block.
	// Work files, read once by the cluster stage (see verifiedrun.go).
	pairFile := workfile.NewPairsWriter(st, job.VerifiedFile(chunk))
	memberFile := workfile.NewMembersWriter(st, job.MembersFile(chunk))
	defer pairFile.Abort()
	defer memberFile.Abort()
	// Blocks of edges: the edges of at most window first documents (and
	// at most verifyBlockEdges edges), in (a, b) order. A block's first
	// documents are loaded once and held; its second documents are then
	// loaded in windows of at most window documents, in document order,
	// each once a block, and their edges judged (block nested loops: a
	// document paired with many others across the chunk, a page of a
	// large template family, is loaded once a block, not once a window of
	// (a, b) order). Only a block's edges and two windows of signatures
	// and shingle sets are held, whatever the size of the chunk (a whole
	// compressed file is one chunk); the block's pairs and group members
	// go to their files in (a, b) order.
	var (
		edges []records.Candidate // the block's
		heads = map[int64]bool{}  // the block's first documents
		last  records.Candidate
		seen  bool // last is set
		more  = true
	)
	// Documents are loaded and edges judged by as many goroutines as
	// there are processors: a task alone (the last of its stage, or the
	// chunk of most edges when the chunks are few) uses them all.
	srcs := []recordSource{sigs}
	for len(srcs) < runtime.GOMAXPROCS(0) {
		s, err := sigs.fork()
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, s)
	}
	jb := &blockJudge{p: p, rule: sketch.NewRule(p), bnd: bnd, cache: newSigCache(cacheBytes), srcs: srcs, window: window, res: res}
	if newBits != nil {
		jb.bits = newBits(len(srcs))
	}
	for more {
		var e records.Candidate
		e, more, err = merged.Next()
		if err != nil {
			return nil, err
		}
		if more && seen && e.A == last.A && e.B == last.B {
			continue // the same pair from another partition (or band)
		}
		last, seen = e, true
		if more && (len(heads) < window || heads[e.A]) && len(edges) < verifyBlockEdges {
			edges = append(edges, e)
			heads[e.A] = true
			continue
		}
		// The block is full (or the edges are over): judge it.
		pairs, members, err := jb.judgeBlock(ctx, edges, heads)
		if err != nil {
			return nil, err
		}
		if err := pairFile.WritePairs(ctx, pairs); err != nil {
			return nil, err
		}
		if err := memberFile.WriteMembers(ctx, members); err != nil {
			return nil, err
		}
		res.Verified += int64(len(pairs))
		res.ExactMembers += int64(len(members))
		edges, heads = edges[:0], map[int64]bool{}
		if more {
			edges = append(edges, e)
			heads[e.A] = true
		}
	}
	if res.File, err = pairFile.Commit(ctx); err != nil {
		return nil, err
	}
	if res.MembersFile, err = memberFile.Commit(ctx); err != nil {
		return nil, err
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// load returns the entries of the needed documents: those in the cache,
// and the others read in file order (chunk, then slot), so that a text
// store's frames are decoded once each.
func (jb *blockJudge) load(ctx context.Context, need map[int64]bool) (map[int64]*sigEntry, error) {
	out := make(map[int64]*sigEntry, len(need))
	var missing []int64
	for _, doc := range slices.Sorted(maps.Keys(need)) {
		if e := jb.cache.get(doc); e != nil {
			out[doc] = e
			continue
		}
		missing = append(missing, doc)
	}
	loaded, err := jb.read(ctx, missing)
	if err != nil {
		return nil, err
	}
	for i, doc := range missing {
		out[doc] = loaded[i]
		jb.cache.add(doc, loaded[i])
	}
	return out, nil
}

// fill loads again the sets the entries of need dropped (see
// sigCache.settle), in file order.
func (jb *blockJudge) fill(ctx context.Context, need map[int64]*sigEntry) error {
	var docs []int64
	for doc, e := range need {
		if e.dropped() {
			docs = append(docs, doc)
		}
	}
	slices.Sort(docs)
	loaded, err := jb.read(ctx, docs)
	if err != nil {
		return err
	}
	for i, doc := range docs {
		e := need[doc]
		if loaded[i].n != e.n {
			return fmt.Errorf("document %d: %d shingles loaded again, %d before", doc, loaded[i].n, e.n)
		}
		e.set = loaded[i].set
	}
	return nil
}

// read reads the entries of docs, sorted, many by the sources at once in
// parts of that order, and counts them in jb.res.Loads.
func (jb *blockJudge) read(ctx context.Context, docs []int64) ([]*sigEntry, error) {
	out := make([]*sigEntry, len(docs))
	err := inParts(ctx, len(jb.srcs), len(docs), parallelLoads, func(ctx context.Context, part, lo, hi int) error {
		for i := lo; i < hi; i++ {
			if (i-lo)%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			e, err := loadSig(ctx, jb.srcs[part], jb.p, jb.bnd, docs[i])
			if err != nil {
				return err
			}
			out[i] = e
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	jb.res.Loads += int64(len(docs))
	return out, nil
}

// parallelLoads is the least documents loadSigs reads with more than one
// source.
const parallelLoads = 64

// loadSig reads and decodes the signature of doc.
func loadSig(ctx context.Context, s recordSource, p job.Params, bnd sketch.Banding, doc int64) (*sigEntry, error) {
	rec, set, err := s.get(ctx, doc)
	if err != nil {
		return nil, err
	}
	e := &sigEntry{id: rec.ID, url: rec.URL, set: set}
	if e.sig, err = sketch.DecodeSignature(p, rec.Sig); err != nil {
		return nil, fmt.Errorf("document %d: %w", doc, err)
	}
	if set == nil {
		if e.set, err = sketch.DecodeSet(rec.Shingles); err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
	}
	e.n = len(e.set)
	e.keys = bnd.Keys(nil, e.sig)
	return e, nil
}

// inParts calls fn for n items split into at most parts contiguous parts
// (one if n is under least), at once, with a context cancelled when one
// fails, and returns the first error.
func inParts(ctx context.Context, parts, n, least int, fn func(ctx context.Context, part, lo, hi int) error) error {
	if parts <= 1 || n < least {
		return fn(ctx, 0, 0, n)
	}
	parts = min(parts, n)
	g, ctx := errgroup.WithContext(ctx)
	for k := range parts {
		g.Go(func() error { return fn(ctx, k, k*n/parts, (k+1)*n/parts) })
	}
	return g.Wait()
}
