// Package query finds the near-duplicates of documents in the indexes of
// finished jobs (package index), without running a job.
//
// A batch of documents is sketched as the map stage sketches
// (sketch.Sketcher, with each index's parameters), so that each document meets
// the indexed ones under the band keys they were written under. Its keys
// are grouped by partition, and only those partitions' band files are
// read, and of each only the footer and the band and key columns (the doc
// column too when a key is there: index.LookupBands). The documents found
// under a key are candidates; their signature records are read by slot
// from their chunks' signature files and each pair is verified as the
// verify stage does (sketch.Rule): by the exact Jaccard similarity of
// the shingle sets when the index holds them (--verify exact, the
// default), else by the signatures' estimate.
//
// As in the job, a pair whose signatures share no band key is not found:
// near-duplicates just above the threshold are found with the S-curve's
// probability (bands.Probability), those well above it almost always.
package query

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/sigfile"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/textstore"
	"github.com/neardup/neardup/pkg/bands"
)

// Options control a Searcher.
type Options struct {
	// Threshold is the similarity at or above which an indexed document
	// is a match; 0 takes each index's own (its job's --threshold; with
	// SimHash and estimates, its --hamming bound).
	Threshold float64
	// CacheBytes bounds the memory of the band tables and text-store
	// frames kept between queries (whole band files read once, their
	// band, key and doc columns kept: 20 bytes a band record; frames
	// decoded, up to 8 MiB of text each). 0 keeps none: each query reads,
	// of each band file it needs, the band and key columns (and the doc
	// column when a key is there), and decodes the frame of each match.
	CacheBytes int64
	// Tokenizer, if not empty, is the tokenizer the queries are meant
	// for (job.TokenizeScripts or job.TokenizeWordsOnly): an index made
	// with another is refused, naming its rule. Empty takes each index's
	// own, as long as the indexes agree: similarities under two rules are
	// not mixed.
	Tokenizer job.Tokenizer
}

// Doc is a document to query.
type Doc struct {
	ID   string
	Text []byte
}

// Match is an indexed document found near a queried one.
type Match struct {
	// Index is the index's location as given to Open, Job the name of
	// the document's job (of a compacted index, the job it holds the
	// document for).
	Index string `json:"index"`
	Job   string `json:"job"`
	// Doc is the document's ordinal in its job (chunk<<32 | index), ID and
	// URL its id and url.
	Doc int64  `json:"doc"`
	ID  string `json:"id"`
	URL string `json:"url,omitempty"`
	// Similarity is the exact Jaccard similarity of the shingle sets
	// (Method "exact"), or the estimate when the index holds no sets.
	Similarity float64 `json:"similarity"`
	// Estimate is the signatures' estimate of it.
	Estimate float64 `json:"estimate"`
	// Method is "exact", "minhash" or "simhash": what Similarity is.
	Method string `json:"method"`
}

// Result is what a query found for one document: its matches sorted by
// similarity (highest first), then by index (in the order given to Open)
// and document ordinal; empty, not nil, when there are none.
type Result struct {
	ID      string  `json:"id"`
	Matches []Match `json:"matches"`
}

// Stats counts what a Query read.
type Stats struct {
	// Docs is the number of documents queried, Empty those without a
	// shingle (which match nothing).
	Docs, Empty int
	// Partitions is the number of (index, partition) pairs looked up,
	// BandFiles the band files looked up, Cached those of them found in
	// the cache, and BandBytes the bytes read of the others.
	Partitions, BandFiles, Cached int
	BandBytes                     int64
	// Candidates is the number of (document, indexed document) pairs
	// verified, and Matches those that passed.
	Candidates, Matches int
}

// Add adds o to s.
func (s *Stats) Add(o Stats) {
	s.Docs += o.Docs
	s.Empty += o.Empty
	s.Partitions += o.Partitions
	s.BandFiles += o.BandFiles
	s.Cached += o.Cached
	s.BandBytes += o.BandBytes
	s.Candidates += o.Candidates
	s.Matches += o.Matches
}

// Searcher queries one or more indexes. It keeps their partition lists
// and signature files open between queries: it is not safe for
// concurrent use.
type Searcher struct {
	opts    Options
	sources []*source
	cache   *memCache // nil: none
}

// Open opens the indexes at locs (job output directories or object-store
// URLs) for querying.
func Open(ctx context.Context, locs []string, o Options) (*Searcher, error) {
	if len(locs) == 0 {
		return nil, errors.New("query: no index given")
	}
	if !(o.Threshold >= 0 && o.Threshold <= 1) { // NaN too
		return nil, fmt.Errorf("query: threshold must be in (0, 1] (or 0: each index's own), not %g", o.Threshold)
	}
	s := &Searcher{opts: o}
	if o.CacheBytes > 0 {
		s.cache = newMemCache(o.CacheBytes)
	}
	for _, loc := range locs {
		src, err := openSource(ctx, loc)
		if err != nil {
			s.Close()
			return nil, err
		}
		t := src.ix.Params.Tokenizer
		if o.Tokenizer != "" && t != o.Tokenizer {
			src.close()
			s.Close()
			return nil, fmt.Errorf("index %s was made with --tokenizer %s, not %s: its shingles cannot be compared with queries cut into tokens by the %s rule (query it with --tokenizer %s, or rebuild it)",
				loc, t, o.Tokenizer, o.Tokenizer, t)
		}
		if first := s.sources; o.Tokenizer == "" && len(first) > 0 && first[0].ix.Params.Tokenizer != t {
			src.close()
			s.Close()
			return nil, fmt.Errorf("index %s was made with --tokenizer %s and index %s with --tokenizer %s: their similarities are not comparable; query them separately",
				first[0].loc, first[0].ix.Params.Tokenizer, loc, t)
		}
		s.sources = append(s.sources, src)
	}
	return s, nil
}

// Close closes the signature files the searcher holds open.
func (s *Searcher) Close() {
	for _, src := range s.sources {
		src.close()
	}
}

// Indexes describes the indexes, in the order given to Open.
func (s *Searcher) Indexes() []*index.Index {
	out := make([]*index.Index, len(s.sources))
	for i, src := range s.sources {
		out[i] = src.ix
	}
	return out
}

// Query returns the matches of every document of docs, in the order of
// docs, and what it read to find them.
func (s *Searcher) Query(ctx context.Context, docs []Doc) ([]Result, Stats, error) {
	res := make([]Result, len(docs))
	for i, d := range docs {
		res[i] = Result{ID: d.ID, Matches: []Match{}}
	}
	var st Stats
	st.Docs = len(docs)
	for _, src := range s.sources {
		if err := src.query(ctx, s.opts.Threshold, s.cache, docs, res, &st); err != nil {
			return nil, st, err
		}
	}
	for i := range res {
		// Stable: ties keep the indexes' order.
		slices.SortStableFunc(res[i].Matches, func(a, b Match) int {
			if c := cmp.Compare(b.Similarity, a.Similarity); c != 0 {
				return c
			}
			return cmp.Compare(a.Doc, b.Doc)
		})
		st.Matches += len(res[i].Matches)
	}
	return res, st, nil
}

// maxSigFiles bounds the signature files a source keeps open.
const maxSigFiles = 64

// source is one open index.
type source struct {
	loc    string
	st     *storage.Dir
	ix     *index.Index
	sk     *sketch.Sketcher
	chunks map[int]fileinfo.Info // signature file by chunk
	// files holds the band files of the partitions read so far, runs
	// holds the later runs of chunks read in several, by partition.
	files map[int][]bandRef
	runs  map[int]map[int][]fileinfo.Info
	sigs  map[int]*openSig
}

// frameSharer is a record reader of a text store, whose decoded frames
// the query's cache can hold.
type frameSharer interface {
	ShareFrames(c textstore.FrameCache, key string)
}

type openSig struct {
	r    index.RecordReader
	name string
	done func()
}

func openSource(ctx context.Context, loc string) (*source, error) {
	l, err := storage.ParseLocation(loc)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", loc, err)
	}
	if l.Local() { // storage.Open would create it
		if _, err := os.Stat(l.Path); err != nil {
			return nil, fmt.Errorf("index %s: %w", loc, err)
		}
	}
	st, err := storage.Open(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", loc, err)
	}
	ix, err := index.Load(ctx, st)
	if err == nil {
		err = index.CheckModel(ix)
	}
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("index %s: %w", loc, err)
	}
	sk, err := sketch.NewSketcher(ix.Params)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("index %s: %s: %w", loc, job.IndexFile, err)
	}
	src := &source{loc: loc, st: st, ix: ix, sk: sk, chunks: map[int]fileinfo.Info{},
		files: map[int][]bandRef{}, runs: map[int]map[int][]fileinfo.Info{}, sigs: map[int]*openSig{}}
	for _, c := range ix.Chunks {
		src.chunks[c.Chunk] = c.SigFile
	}
	return src, nil
}

func (src *source) close() {
	for _, s := range src.sigs {
		s.done()
	}
	clear(src.sigs)
	src.st.Close()
}

// candidate is a pair to verify: a queried document (by position) and an
// indexed one.
type candidate struct {
	doc int32
	ord int64
}

// query adds the matches of docs in this index to res.
func (src *source) query(ctx context.Context, threshold float64, cache *memCache, docs []Doc, res []Result, st *Stats) error {
	p := src.ix.Params
	rule := sketch.NewRule(p)
	if threshold > 0 {
		rule = rule.At(threshold)
	}
	// The documents' records (as a signature file would hold them) and
	// their band keys, by partition.
	probes := make([]sigfile.Record, len(docs))
	byPart := map[int][]index.BandKey{}
	for i, d := range docs {
		sk := src.sk.Sketch(d.Text)
		if len(sk.Set) == 0 {
			st.Empty++
			continue
		}
		probes[i] = sigfile.Record{Sig: slices.Clone(sk.Sig), Shingles: slices.Clone(sk.SetBytes)}
		for b, k := range sk.Keys {
			part := bands.Partition(k, p.Partitions)
			byPart[part] = append(byPart[part], index.BandKey{Band: int32(b), Key: int64(k), Tag: int32(i)})
		}
	}
	if len(byPart) == 0 {
		return nil
	}
	cands := map[candidate]struct{}{}
	for _, part := range slices.Sorted(maps.Keys(byPart)) {
		want := byPart[part]
		slices.SortFunc(want, index.CompareBandKeys)
		files, err := src.bandFiles(ctx, part)
		if err != nil {
			return err
		}
		st.Partitions++
		hit := func(tag int32, doc int64) { cands[candidate{doc: tag, ord: doc}] = struct{}{} }
		for _, f := range files {
			st.BandFiles++
			if err := src.lookup(ctx, cache, f, want, hit, st); err != nil {
				return fmt.Errorf("index %s: %w", src.loc, err)
			}
		}
	}
	// Verified in ordinal order: signature files are read in order.
	list := slices.SortedFunc(maps.Keys(cands), func(a, b candidate) int {
		if c := cmp.Compare(a.ord, b.ord); c != 0 {
			return c
		}
		return cmp.Compare(a.doc, b.doc)
	})
	st.Candidates += len(list)
	for i, c := range list {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		rec, err := src.record(ctx, cache, c.ord)
		if err != nil {
			return err
		}
		v, err := sketch.JudgeRecords(rule, p, probes[c.doc], rec)
		if err != nil {
			return fmt.Errorf("index %s: document %d: %w", src.loc, c.ord, err)
		}
		if !v.Pass {
			continue
		}
		res[c.doc].Matches = append(res[c.doc].Matches, Match{
			Index: src.loc, Job: src.ix.JobOf(job.ChunkOf(c.ord)), Doc: c.ord, ID: rec.ID, URL: rec.URL,
			Similarity: v.Similarity, Estimate: v.Estimate, Method: v.Method,
		})
	}
	return nil
}

// bandRef is a band file to look a partition up in: a whole file of one
// partition (index version 2, part -1), or the row groups of partition
// part of a file of several (index.BandFile).
type bandRef struct {
	info fileinfo.Info
	part int
}

// lookup looks the keys of want up in a band file: in its table, cached
// or read into the cache (the partition's row groups of a file of
// several), or without a cache in the columns it needs.
func (src *source) lookup(ctx context.Context, cache *memCache, f bandRef, want []index.BandKey, hit func(int32, int64), st *Stats) error {
	if cache == nil {
		n, err := index.LookupBands(ctx, src.st, f.info, f.part, want, hit)
		st.BandBytes += n
		return err
	}
	name := fmt.Sprintf("%s\x00%s\x00%d", src.loc, f.info.Name, f.part)
	t, ok := cache.table(name)
	if ok {
		st.Cached++
	} else {
		var err error
		if f.part < 0 {
			t, err = index.ReadBandTable(ctx, src.st, f.info)
			st.BandBytes += f.info.Bytes
		} else {
			t, err = index.ReadBandPartTable(ctx, src.st, f.info, f.part)
		}
		if err != nil {
			return err
		}
		if f.part >= 0 {
			st.BandBytes += t.Bytes() // about: the partition's columns
		}
		cache.add(name, t)
	}
	t.Lookup(want, hit)
	return nil
}

// bandFiles returns the band files of a partition: the files of the
// reduce tasks that hold it, or, in an index of version 2, every chunk's
// first run's and its later runs'.
func (src *source) bandFiles(ctx context.Context, part int) ([]bandRef, error) {
	if files, ok := src.files[part]; ok {
		return files, nil
	}
	if src.ix.BandsLayout == index.BandsLayoutTasks {
		files := []bandRef{}
		for _, f := range index.BandFilesOf(src.ix.BandFiles, part) {
			files = append(files, bandRef{info: f.File, part: part})
		}
		src.files[part] = files
		return files, nil
	}
	entries, err := index.ReadPart(ctx, src.st, part)
	if err != nil {
		return nil, fmt.Errorf("index %s: partition %d: %w", src.loc, part, err)
	}
	files := []bandRef{}
	for _, e := range entries {
		if e.File != nil {
			files = append(files, bandRef{info: *e.File, part: -1})
		}
		if e.Runs == nil {
			continue
		}
		runs, ok := src.runs[e.Chunk]
		if !ok {
			if runs, err = index.ReadBandRuns(ctx, src.st, *e.Runs); err != nil {
				return nil, fmt.Errorf("index %s: chunk %d: %w", src.loc, e.Chunk, err)
			}
			src.runs[e.Chunk] = runs
		}
		for _, f := range runs[part] {
			files = append(files, bandRef{info: f, part: -1})
		}
	}
	src.files[part] = files
	return files, nil
}

// record reads the signature record of an indexed document.
func (src *source) record(ctx context.Context, cache *memCache, ord int64) (sigfile.Record, error) {
	chunk := job.ChunkOf(ord)
	s := src.sigs[chunk]
	if s == nil {
		info, ok := src.chunks[chunk]
		if !ok {
			return sigfile.Record{}, fmt.Errorf("index %s: document %d: chunk %d is not in the index (%s lists chunks from %d to %d)",
				src.loc, ord, chunk, job.IndexFile, src.ix.FirstChunk, src.ix.End()-1)
		}
		if len(src.sigs) >= maxSigFiles {
			for c, old := range src.sigs { // any one: order affects speed only
				old.done()
				delete(src.sigs, c)
				break
			}
		}
		r, done, err := index.OpenRecords(ctx, src.st, info, src.ix.Params)
		if err != nil {
			return sigfile.Record{}, fmt.Errorf("index %s: %w", src.loc, err)
		}
		if fs, ok := r.(frameSharer); ok && cache != nil {
			fs.ShareFrames(frames{cache}, src.loc+"\x00"+info.Name)
		}
		s = &openSig{r: r, name: info.Name, done: done}
		src.sigs[chunk] = s
	}
	rec, ok, err := s.r.Record(int(uint32(ord)))
	if err != nil {
		return sigfile.Record{}, fmt.Errorf("index %s: document %d: %w", src.loc, ord, err)
	}
	if !ok {
		return sigfile.Record{}, fmt.Errorf("index %s: %s: document %d has no signature", src.loc, s.name, ord)
	}
	return rec, nil
}
