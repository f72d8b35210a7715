package stage

import (
	"cmp"
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
// first document is in chunk: a sort-merge join of the edges with the
// signatures of the chunks they touch, one chunk at a time, so memory is
// bounded by two chunks' worth of the documents that take part in edges.
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
	start := time.Now()
	p := spec.Params
	res := &job.VerifyResult{Chunk: chunk, VerifiedHist: make([]int64, job.HistBins), RejectedHist: make([]int64, job.HistBins)}

	var edges []records.Candidate
	for _, rr := range reduces {
		info, ok := rr.EdgeFiles[chunk]
		if !ok {
			continue
		}
		var err error
		if edges, err = readEdges(ctx, st, info, edges); err != nil {
			return nil, fmt.Errorf("verify chunk %d: %w", chunk, err)
		}
	}
	// Order by the chunk of b, then (a, b): one pass per neighbouring chunk.
	// A pair found in several partitions is checked once.
	slices.SortFunc(edges, func(x, y records.Candidate) int {
		if c := cmp.Compare(job.ChunkOf(x.B), job.ChunkOf(y.B)); c != 0 {
			return c
		}
		return compareEdge(x, y)
	})
	edges = slices.CompactFunc(edges, func(x, y records.Candidate) bool { return x.A == y.A && x.B == y.B })

	need := map[int64]bool{}
	for _, e := range edges {
		need[e.A] = true
		if job.ChunkOf(e.B) == chunk {
			need[e.B] = true
		}
	}
	home, err := loadSigs(ctx, st, p, maps, chunk, need)
	if err != nil {
		return nil, err
	}
	minMatches := -1 // no pre-filter
	if p.Method == "minhash" && p.Verify == "exact" {
		minMatches = prefilterMatches(p.Threshold, p.K, prefilterRisk)
	}
	var pairs []records.Pair
	var members []records.ExactMember
	for lo := 0; lo < len(edges); {
		other := job.ChunkOf(edges[lo].B)
		hi := lo
		for hi < len(edges) && job.ChunkOf(edges[hi].B) == other {
			hi++
		}
		far := home
		if other != chunk {
			need := map[int64]bool{}
			for _, e := range edges[lo:hi] {
				need[e.B] = true
			}
			if far, err = loadSigs(ctx, st, p, maps, other, need); err != nil {
				return nil, err
			}
		}
		for _, e := range edges[lo:hi] {
			a, b := home[e.A], far[e.B]
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
		lo = hi
	}
	slices.SortFunc(pairs, func(x, y records.Pair) int {
		if c := cmp.Compare(x.A, y.A); c != 0 {
			return c
		}
		return cmp.Compare(x.B, y.B)
	})
	slices.SortFunc(members, func(x, y records.ExactMember) int {
		if c := cmp.Compare(x.Group, y.Group); c != 0 {
			return c
		}
		return cmp.Compare(x.Doc, y.Doc)
	})
	res.Verified = int64(len(pairs))
	res.ExactMembers = int64(len(members))
	if len(pairs) > 0 {
		info, err := pqfile.Write(ctx, st, job.VerifiedFile(chunk), pairs, pqfile.Sorted("a", "b"))
		if err != nil {
			return nil, err
		}
		res.File = &info
	}
	if len(members) > 0 {
		info, err := pqfile.Write(ctx, st, job.MembersFile(chunk), members, pqfile.Sorted("group", "doc"))
		if err != nil {
			return nil, err
		}
		res.MembersFile = &info
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// loadSigs reads the signatures of the needed documents of one chunk, by
// random access to the chunk's signature file.
func loadSigs(ctx context.Context, st storage.FS, p job.Params, mapResults map[int]job.MapResult, chunk int, need map[int64]bool) (map[int64]*sigEntry, error) {
	mr, ok := mapResults[chunk]
	if !ok {
		return nil, fmt.Errorf("verify: chunk %d has no map result", chunk)
	}
	f, err := st.Open(ctx, mr.SigFile.Name)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	defer f.Close()
	if f.Size() != mr.SigFile.Bytes {
		return nil, fmt.Errorf("verify: %s has %d bytes, its writer wrote %d: %w", mr.SigFile.Name, f.Size(), mr.SigFile.Bytes, sigfile.ErrCorrupt)
	}
	r, err := sigfile.NewReader(f, f.Size())
	if err != nil {
		return nil, fmt.Errorf("verify: %s: %w", mr.SigFile.Name, err)
	}
	if int64(r.Len()) != mr.SigFile.Rows {
		return nil, fmt.Errorf("verify: %s has %d slots, want %d: %w", mr.SigFile.Name, r.Len(), mr.SigFile.Rows, sigfile.ErrCorrupt)
	}
	docs := slices.Sorted(maps.Keys(need))
	out := make(map[int64]*sigEntry, len(need))
	for i, doc := range docs {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		rec, ok, err := r.Get(int(uint32(doc)))
		if err != nil {
			return nil, fmt.Errorf("verify: %s: document %d: %w", mr.SigFile.Name, doc, err)
		}
		if !ok {
			return nil, fmt.Errorf("verify: %s: document %d has no signature", mr.SigFile.Name, doc)
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
