package reduce

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/records"
)

// Reduce merges the sorted band files of one partition and turns every
// bucket (a run of records with equal band and key) into candidate pairs:
// every pair of its representatives, where the documents of a bucket with
// one shingle-set fingerprint are one exact-duplicate group represented by
// its smallest ordinal (see bucketPairs). Band-0 buckets also claim each
// group's members for their representative; since every document has
// exactly one band-0 key, each group is claimed once. The candidates are
// deduplicated across the partition's bands, written as the partition's
// candidates, and routed with the claims, by the chunk of their first
// document, to the verify stage.
func Reduce(ctx context.Context, st storage.FS, spec *job.Spec, part int, maps []job.MapResult) (*job.ReduceResult, error) {
	lists, err := index.ReadPartFiles(ctx, st, part, maps)
	if err != nil {
		return nil, fmt.Errorf("reduce partition %d: %w", part, err)
	}
	return reducePart(ctx, st, spec, part, lists, nil, nil)
}

// reducePart reduces one partition from its sorted lists (see Reduce);
// own, if not nil, is given each of the job's own records (not an earlier
// job's) in order. It sorts in bufs' arrays, which it leaves for the next
// partition (nil: its own).
func reducePart(ctx context.Context, st storage.FS, spec *job.Spec, part int, lists []index.BandList, own func(records.BandRecord), bufs *workfile.SortBufs) (*job.ReduceResult, error) {
	start := time.Now()
	res := &job.ReduceResult{Part: part, EdgeFiles: map[int]fileinfo.Info{}, RequestFiles: map[int]fileinfo.Info{}}
	recs, names := make([][]records.BandRecord, len(lists)), make([]string, len(lists))
	for i, l := range lists {
		recs[i], names[i] = l.Recs, l.Name
	}
	m := workfile.NewBandMerge(recs, names)
	firstOwn := job.Ordinal(spec.FirstChunk, 0)
	if bufs == nil {
		bufs = &workfile.SortBufs{}
	}
	b := &bucketer{maxBucket: spec.Params.MaxBucket, res: res, firstOwn: firstOwn, bufs: bufs, edges: bufs.Edges[:0]}
	var bucket []records.BandRecord
	for n := 0; ; n++ {
		if n%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		rec, ok, err := m.Next()
		if err != nil {
			return nil, fmt.Errorf("reduce partition %d: %w", part, err)
		}
		if !ok {
			break
		}
		res.Records++
		if own != nil && rec.Doc >= firstOwn {
			own(rec)
		}
		if len(bucket) > 0 && (rec.Band != bucket[0].Band || rec.Key != bucket[0].Key) {
			b.add(bucket)
			bucket = bucket[:0]
		}
		if len(bucket) > 0 && rec.Doc == bucket[len(bucket)-1].Doc {
			return nil, fmt.Errorf("reduce partition %d: document %d twice in band %d: a band file was read twice", part, rec.Doc, rec.Band)
		}
		bucket = append(bucket, rec)
	}
	if len(bucket) > 0 {
		b.add(bucket)
	}
	edges := b.finish()
	claims := b.claims
	slices.SortFunc(claims, workfile.CompareEdge)

	res.Candidates = int64(len(edges))
	res.ExactClaims = int64(len(claims))
	info, err := pqfile.Write(ctx, st, job.CandidateFile(part), edges, pqfile.Options{SortedBy: []string{"a", "b"}, Dense: true})
	if err != nil {
		return nil, err
	}
	res.File = info
	// Route candidates and claims together (claims carry band -1) by the
	// chunk of their first document: in (a, b, band) order, the chunk
	// being a's high bits.
	routed := mergeEdgeLists(edges, claims)
	bufs.Edges = routed[:0]
	if res.EdgeFiles, err = workfile.WriteEdges(ctx, st, job.EdgeFile(part), routed); err != nil {
		return nil, err
	}
	// The gather requests are read by the gather stage alone, which runs
	// with --gather on: with sets or off, writing them cost the templated
	// job at 0.5 an eighth of its reduce stage's CPU for nothing.
	if spec.Params.Gather == job.GatherOn {
		if res.RequestFiles, err = workfile.WriteRequests(ctx, st, job.RequestFile(part), routed); err != nil {
			return nil, err
		}
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// compactAt is the number of buffered edges at which a bucketer sorts and
// deduplicates them, so that a pair colliding in many bands costs memory
// once.
const compactAt = 1 << 22

// bucketer turns buckets into candidate pairs and exact-group claims.
type bucketer struct {
	maxBucket int
	// firstOwn is the job's first own ordinal: the documents below it are
	// earlier jobs' (--against), whose pairs with each other are theirs.
	firstOwn  int64
	res       *job.ReduceResult
	bufs      *workfile.SortBufs
	edges     []records.Candidate
	compacted int // edges[:compacted] are sorted and unique
	claims    []records.Candidate
	byFP      []records.BandRecord
	reps      []int64
}

// add takes one bucket: records of one (band, key), sorted by document.
func (b *bucketer) add(bucket []records.BandRecord) {
	res := b.res
	res.Groups++
	res.MaxGroup = max(res.MaxGroup, int64(len(bucket)))
	if len(bucket) < 2 {
		return
	}
	band := bucket[0].Band
	// Representatives: the smallest document of each fingerprint.
	b.byFP = append(b.byFP[:0], bucket...)
	slices.SortFunc(b.byFP, func(x, y records.BandRecord) int {
		if c := cmp.Compare(x.FPHi, y.FPHi); c != 0 {
			return c
		}
		if c := cmp.Compare(x.FPLo, y.FPLo); c != 0 {
			return c
		}
		return cmp.Compare(x.Doc, y.Doc)
	})
	// An exact group is of one job: an earlier job's documents (--against;
	// they come first) and the job's own with the same fingerprint are two
	// groups, paired as any two representatives, so that each own document
	// meets every earlier one it is a copy or near-duplicate of.
	b.reps = b.reps[:0]
	for i, r := range b.byFP {
		if i > 0 && r.FPHi == b.byFP[i-1].FPHi && r.FPLo == b.byFP[i-1].FPLo && (r.Doc < b.firstOwn) == (b.byFP[i-1].Doc < b.firstOwn) {
			if band == 0 {
				rep := b.reps[len(b.reps)-1]
				b.claims = append(b.claims, records.Candidate{A: rep, B: r.Doc, Band: workfile.ClaimBand})
			}
			continue
		}
		b.reps = append(b.reps, r.Doc)
	}
	slices.Sort(b.reps)
	reps := b.reps
	m := int64(len(reps))
	hubs := m
	if m > int64(b.maxBucket) {
		budget := int64(b.maxBucket) * int64(b.maxBucket-1) / 2
		hubs = max(1, budget/m)
		res.BoundedBuckets++
		compared := hubs*(m-hubs) + hubs*(hubs-1)/2
		res.PairsNotCompared += m*(m-1)/2 - compared
		res.NoteBounded(job.BoundedBucket{Band: band, Key: bucket[0].Key, Docs: int64(len(bucket)), Representatives: m, Hubs: hubs, FirstDoc: reps[0]})
	}
	earlier, _ := slices.BinarySearch(reps, b.firstOwn) // reps[:earlier] are earlier jobs'
	for i := range min(hubs, m) {
		for _, d := range reps[max(i+1, int64(earlier)):] {
			b.edges = append(b.edges, records.Candidate{A: reps[i], B: d, Band: band})
		}
	}
	if len(b.edges)-b.compacted >= compactAt {
		b.compact()
	}
}

// compact sorts and deduplicates the buffered edges, keeping for each pair
// its lowest band.
func (b *bucketer) compact() {
	b.edges = workfile.CompactEdges(b.edges, b.bufs)
	b.compacted = len(b.edges)
}

// finish returns the partition's candidates, sorted and unique.
func (b *bucketer) finish() []records.Candidate {
	b.compact()
	return b.edges
}

// mergeEdgeLists merges y into x, each sorted by compareEdge, in x's
// array (grown if short): from the back, so that it needs no other.
func mergeEdgeLists(x, y []records.Candidate) []records.Candidate {
	i, j := len(x)-1, len(y)-1
	x = slices.Grow(x, len(y))[:len(x)+len(y)]
	for k := len(x) - 1; j >= 0; k-- {
		if i >= 0 && workfile.CompareEdge(x[i], y[j]) > 0 {
			x[k], i = x[i], i-1
		} else {
			x[k], j = y[j], j-1
		}
	}
	return x
}
