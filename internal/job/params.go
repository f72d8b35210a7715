// Package job is the vocabulary of a dedup job, shared by its stages and
// its control plane: the parameters (Params) and the spec every worker
// reads (Spec), the plan of chunks (Plan), the layout of the job's files,
// document ordinals, and what each task reports (MapResult, ReduceResult,
// VerifyResult).
package job

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/neardup/neardup/internal/paragraph"
	"github.com/neardup/neardup/pkg/bands"
	"github.com/neardup/neardup/pkg/formats"
	"github.com/neardup/neardup/pkg/shingle"
	"github.com/neardup/neardup/pkg/simhash"
)

// Params are the parameters of a job; equal params and inputs give
// byte-identical pairs and clusters. They come in groups, embedded so that
// their fields read as Params' own (p.K, p.Words) and so that params encode
// as one flat JSON object, with the keys every earlier version wrote and
// reads (see UnmarshalJSON for the values an earlier one may leave out).
type Params struct {
	LSHParams
	ShingleParams
	ExecParams
	InputParams
}

// LSHParams choose the sketches of documents (MinHash signatures or SimHash
// fingerprints), the candidates their bands make, and the similarity of a
// pair.
type LSHParams struct {
	Method Method `json:"method"`
	Sketch Sketch `json:"sketch"` // MinHash
	K      int    `json:"k"`      // MinHash signature values
	// Bands and Rows are the banding: MinHash's, given or chosen by
	// Resolve from the threshold; SimHash's, its blocks of bits.
	Bands          int     `json:"bands"`
	Rows           int     `json:"rows"`
	Hamming        int     `json:"hamming"`         // SimHash: largest Hamming distance of a pair
	SimHashWeights Weights `json:"simhash_weights"` // SimHash
	Threshold      float64 `json:"threshold"`
	// FPWeight and FNWeight weigh the false-positive and false-negative
	// areas under the S-curve when Resolve chooses MinHash's bands.
	FPWeight float64 `json:"fp_weight"`
	FNWeight float64 `json:"fn_weight"`
	Seed     uint64  `json:"seed"`
	// MaxBucket bounds the candidate pairs of one band bucket: a bucket of
	// m > MaxBucket representatives compares each of them with its h
	// smallest members only, h = max(1, MaxBucket*(MaxBucket-1)/2 / m),
	// and the pairs not compared are reported.
	MaxBucket int `json:"max_bucket"`
}

// ShingleParams are the document model: how text becomes a set of
// shingles (see shingle.Options, which ShingleOptions makes of them).
type ShingleParams struct {
	Words int `json:"words"` // words per shingle
	// Tokenizer is the rule that cuts text into tokens: "scripts" (words
	// in scripts written with spaces, one token per character in those
	// written without) or "words-only" (runs of letters and digits, the
	// rule before scripts). An index without it was made with words-only.
	Tokenizer       Tokenizer `json:"tokenizer"`
	CharGrams       int       `json:"char_grams,omitempty"`
	DigitsToZero    bool      `json:"digits_to_zero,omitempty"`
	StripDiacritics bool      `json:"strip_diacritics,omitempty"`
}

// ExecParams are how a job runs: its tasks, what it verifies and keeps,
// and what it writes.
type ExecParams struct {
	Partitions int    `json:"partitions"`
	Verify     Verify `json:"verify"`
	// Gather is how verify tasks get the signatures of their candidates'
	// documents (GatherAuto: a job resolves it with AutoGather).
	Gather Gather `json:"gather"`
	Keep   Keep   `json:"keep"`
	// Index keeps the job's index (IndexDir: signatures, shingle sets and
	// the lists of band files) after success, for later jobs' --against
	// and for query; without it the index goes with the work area.
	Index bool `json:"index"`
	// MaxClusterPairs bounds the pairs listed for one cluster: a cluster
	// whose complete pair list is longer lists only its kept document's
	// pairs, and is reported with the number of pairs not listed.
	MaxClusterPairs int64 `json:"max_cluster_pairs"`
	Strict          bool  `json:"strict"`
	Fsync           bool  `json:"fsync,omitempty"` // flush every file before renaming it
	// Paragraphs runs the paragraph pass: every document cut into units
	// of ParagraphUnit (paragraph.Line or paragraph.Paragraph), the
	// documents holding each unit counted, the repeated ones listed in
	// paragraphs/.
	Paragraphs    bool   `json:"paragraphs,omitempty"`
	ParagraphUnit string `json:"paragraph_unit,omitempty"`
	// ShingleAfterStrip, when not 0, sketches every document without the
	// units (of ParagraphUnit) that at least ShingleAfterStrip documents
	// of the job hold: a pass before map counts them (the strip-units
	// and strip-count stages). 0 (the default) sketches the whole text.
	ShingleAfterStrip int `json:"shingle_after_strip,omitempty"`
}

// InputParams are how the input files are read and cut into chunks (see
// formats.Options, which ReadOptions makes of them).
type InputParams struct {
	IDField     string `json:"id_field"`
	TextField   string `json:"text_field"`
	MaxDocBytes int    `json:"max_doc_bytes"`
	ChunkBytes  int64  `json:"chunk_bytes"`
	// InputFormat is the kind of every input file (warc, wet, jsonl,
	// parquet, txt), or formats.KindAuto: by its name, else by its
	// content.
	InputFormat formats.Kind `json:"input_format"`
}

// Derived is what a job derives from --against when it starts: the
// earlier jobs it is matched against, and where its own chunks begin. It
// is no parameter, but the job's state (Spec.Derived); versions before
// this one kept it in Params, and wrote its keys inside the params object
// of the spec, the index and the manifest (see ReadParams).
type Derived struct {
	// FirstChunk is the first chunk of the job's own documents. The chunks
	// below it are the documents of earlier jobs it is matched against
	// (--against): never dropped, never paired with each other.
	FirstChunk int `json:"first_chunk,omitempty"`
	// Against lists the earlier jobs whose indexes the job is matched
	// against, in the order given: their documents are the chunks below
	// FirstChunk.
	Against []Against `json:"against,omitempty"`
}

// sketchHelp describes the --sketch values.
const sketchHelp = "dart (K independent values from a Poisson process of darts, O(n + K log K)) or classic (K multiply-shift permutations, O(nK)); both give band collisions 1-(1-J^r)^b at every set size"

// Defaults of the bounds on candidate and listed pairs. A bucket of 5,000
// representatives is 12.5 million candidate pairs, about a second of
// verification; a cluster of 1,415 documents already has a million pairs,
// about 40 MB of pairs/.
const (
	DefaultMaxBucket       = 5000
	DefaultMaxClusterPairs = 1_000_000
)

// DefaultParams are the parameters used unless told otherwise. Bands and
// Rows are 0: Resolve chooses them from the threshold.
func DefaultParams() Params {
	return Params{
		LSHParams: LSHParams{
			Method:         MethodMinHash,
			Sketch:         SketchDart,
			K:              128,
			Hamming:        3,
			SimHashWeights: WeightsNone,
			Threshold:      0.8,
			FPWeight:       0.05,
			FNWeight:       0.95,
			Seed:           1,
			MaxBucket:      DefaultMaxBucket,
		},
		ShingleParams: ShingleParams{
			Words:     5,
			Tokenizer: TokenizeScripts,
		},
		ExecParams: ExecParams{
			Partitions:      0, // automatic: AutoPartitions
			Verify:          VerifyExact,
			Gather:          GatherAuto,
			Keep:            KeepFirst,
			Index:           true,
			MaxClusterPairs: DefaultMaxClusterPairs,
		},
		InputParams: InputParams{
			IDField:     "id",
			TextField:   "text",
			MaxDocBytes: 16 << 20,
			ChunkBytes:  0, // automatic: AutoChunkBytes
			InputFormat: formats.KindAuto,
		},
	}
}

// Resolve checks p (see Check) and fills in Bands and Rows when both are
// 0: for MinHash below threshold 1 by bands.Optimal, about 1 ms of CPU
// (so a job resolves its parameters once, and checks them elsewhere).
func (p *Params) Resolve() error {
	if err := p.Check(); err != nil {
		return err
	}
	if p.Method != MethodSimHash && p.Bands == 0 && p.Rows == 0 {
		bp, err := bands.Optimal(p.Threshold, p.K, p.FPWeight, p.FNWeight)
		if err != nil {
			return fmt.Errorf("choosing bands and rows: %w", err)
		}
		p.Bands, p.Rows = bp.Bands, bp.Rows
	}
	return nil
}

// Check checks p and fills in its defaults: all that Resolve does but
// choose a MinHash job's bands and rows by its threshold (which leaves
// them 0).
func (p *Params) Check() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	check := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	check(p.Method.Check())
	check(p.SimHashWeights.Check())
	if _, err := simhash.NewBlocks(p.Hamming); err != nil {
		bad("--hamming: %v", err)
	}
	check(p.Sketch.Check())
	if p.K < 1 || p.K > 4096 {
		bad("--perms must be in 1..4096, not %d", p.K)
	}
	if !(p.Threshold > 0 && p.Threshold <= 1) { // NaN too
		bad("--threshold must be in (0, 1], not %g", p.Threshold)
	}
	if p.Partitions == 0 {
		p.Partitions = MinPartitions // without inputs; a job sets AutoPartitions
	}
	if p.Partitions < 1 || p.Partitions > 99999 {
		bad("--partitions must be in 1..99999 (0: automatic), not %d", p.Partitions)
	}
	check(p.Verify.Check())
	check(p.Gather.Check())
	check(p.Keep.Check())
	if p.MaxBucket < 2 {
		bad("--max-bucket must be at least 2, not %d", p.MaxBucket)
	}
	if p.MaxClusterPairs < 1 {
		bad("--max-cluster-pairs must be at least 1, not %d", p.MaxClusterPairs)
	}
	if p.ChunkBytes != 0 && p.ChunkBytes < 1<<10 {
		bad("--chunk-bytes must be 0 (automatic) or at least 1024, not %d", p.ChunkBytes)
	}
	if p.InputFormat == "" {
		p.InputFormat = formats.KindAuto
	}
	if k, err := formats.ParseKind(string(p.InputFormat)); err != nil {
		errs = append(errs, err)
	} else {
		p.InputFormat = k // "text" is KindText, "txt"
	}
	if p.MaxDocBytes < 0 {
		bad("--max-doc-bytes must not be negative")
	}
	check(p.Tokenizer.Check())
	units := p.Paragraphs || p.ShingleAfterStrip != 0
	switch {
	case units && p.ParagraphUnit == "":
		p.ParagraphUnit = paragraph.Line
	case !units && p.ParagraphUnit != "":
		bad("--paragraph-unit goes with --paragraphs or --shingle-after-strip")
	}
	switch {
	case p.ShingleAfterStrip < 0 || p.ShingleAfterStrip == 1:
		bad("--shingle-after-strip %d: it is the least number of documents holding a unit for it to be left out of the sketches: 2 or more (0: off)", p.ShingleAfterStrip)
	case p.ShingleAfterStrip != 0 && p.Index:
		bad("--shingle-after-strip needs --index=false: an index's documents would be sketched again, by later jobs and queries, without this job's repeated units left out")
	}
	if units {
		check(paragraph.CheckKind(p.ParagraphUnit))
	}
	if err := p.ShingleOptions().Validate(); err != nil {
		bad("--words %d, --char-grams %d: %v", p.Words, p.CharGrams, err)
	}
	if !(p.FPWeight >= 0 && p.FNWeight >= 0 && p.FPWeight+p.FNWeight > 0) || math.IsInf(p.FPWeight+p.FNWeight, 0) {
		bad("--fp-weight %g and --fn-weight %g must be finite, not negative, and not both 0", p.FPWeight, p.FNWeight)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if p.Method == MethodSimHash {
		// One band per block of the fingerprint: pigeonhole search.
		blocks, _ := simhash.NewBlocks(p.Hamming)
		p.Bands, p.Rows = blocks.N(), 64/blocks.N()
		return nil
	}
	switch {
	case p.Bands == 0 && p.Rows == 0 && p.Threshold >= 1:
		// Only identical sets: one band of every value catches all of
		// them (identical sets have identical signatures) and the fewest
		// others.
		p.Bands, p.Rows = 1, p.K
	case p.Bands == 0 && p.Rows == 0:
		// Resolve chooses them.
	case p.Bands < 1 || p.Rows < 1:
		return fmt.Errorf("--bands and --rows go together and must both be positive (got %d and %d)", p.Bands, p.Rows)
	case p.Bands*p.Rows > p.K:
		return fmt.Errorf("--bands %d x --rows %d = %d exceeds --perms %d", p.Bands, p.Rows, p.Bands*p.Rows, p.K)
	}
	return nil
}

// BandParams are the banding parameters.
func (p LSHParams) BandParams() bands.Params { return bands.Params{Bands: p.Bands, Rows: p.Rows} }

// ShingleOptions are the document-model options; an unknown tokenizer
// makes them invalid (see Tokenizer.Rule).
func (p ShingleParams) ShingleOptions() shingle.Options {
	return shingle.Options{
		Words:           p.Words,
		CharGrams:       p.CharGrams,
		DigitsToZero:    p.DigitsToZero,
		StripDiacritics: p.StripDiacritics,
		Tokenizer:       p.Tokenizer.Rule(),
	}
}

// UnmarshalJSON decodes params as encoded by encoding/json (the flat
// object of every version), with two rules for what earlier versions
// wrote: params without a tokenizer (the job state, index, spec or
// manifest of a version before it was a parameter) read as "words-only",
// the rule they were made by; and an input format that names a kind as
// formats.ParseKind reads it ("text", "JSONL") reads as that kind, as
// --input-format sets it now, so that a job begun with it resumes.
func (p *Params) UnmarshalJSON(data []byte) error {
	type plain Params // without this method
	q := plain(*p)    // fields the JSON leaves out keep their values
	if err := json.Unmarshal(data, &q); err != nil {
		return err
	}
	if q.Tokenizer == "" {
		q.Tokenizer = TokenizeWordsOnly
	}
	if k, err := formats.ParseKind(string(q.InputFormat)); err == nil {
		q.InputFormat = k
	}
	*p = Params(q)
	return nil
}

// InputKind is the kind of every input file, or formats.KindAuto; call it
// after Resolve.
func (p InputParams) InputKind() formats.Kind {
	k, _ := formats.ParseKind(string(p.InputFormat))
	return k
}

// ReadOptions are the input-reading options.
func (p InputParams) ReadOptions() formats.Options {
	return formats.Options{IDField: p.IDField, TextField: p.TextField, MaxDocBytes: p.MaxDocBytes, Open: OpenInput}
}

// Earlier reports whether doc is a document of an earlier job (--against).
func (d Derived) Earlier(doc int64) bool { return ChunkOf(doc) < d.FirstChunk }

// IsZero reports whether d is the derived state of a job matched against
// no earlier job.
func (d Derived) IsZero() bool { return d.FirstChunk == 0 && len(d.Against) == 0 }

// ReadParams sets d, when it is zero, from the keys first_chunk and
// against of the "params" object of doc (the JSON of a spec, an index or a
// manifest), where versions before Derived left Params wrote them.
func (d *Derived) ReadParams(doc []byte) error {
	if !d.IsZero() {
		return nil
	}
	var old struct {
		Params Derived `json:"params"`
	}
	if err := json.Unmarshal(doc, &old); err != nil {
		return fmt.Errorf("the derived state in params: %w", err)
	}
	*d = old.Params
	return nil
}

// Against is an earlier job whose index a job is matched against.
type Against struct {
	Job string `json:"job"`
	// Out is its output's location, as every worker sees it.
	Out string `json:"out"`
	// FirstChunk and Chunks are the range of chunk numbers its documents
	// have (its own ordinals: indexes whose ranges overlap are refused).
	FirstChunk int   `json:"first_chunk"`
	Chunks     int   `json:"chunks"`
	Docs       int64 `json:"docs"`
	// Held lists, for a compacted index, the jobs it holds (their chunk
	// ranges): each document belongs to its own (JobOf).
	Held []Against `json:"held,omitempty"`
}

// String describes a as %v does a struct, with the jobs it holds when it
// holds some.
func (a Against) String() string {
	s := fmt.Sprintf("{%s %s %d %d %d", a.Job, a.Out, a.FirstChunk, a.Chunks, a.Docs)
	if len(a.Held) > 0 {
		s += fmt.Sprintf(" held %v", a.Held)
	}
	return s + "}"
}

// JobOf names the job that chunk is of: the job a compacted index holds
// it for, else a.Job.
func (a Against) JobOf(chunk int) string {
	for _, h := range a.Held {
		if chunk >= h.FirstChunk && chunk < h.FirstChunk+h.Chunks {
			return h.Job
		}
	}
	return a.Job
}

// UnitsNotCounted is an earlier job whose units the paragraph pass did
// not count (its index holds no unit table that can be counted), and why.
type UnitsNotCounted struct {
	Job    string `json:"job"`
	Reason string `json:"reason"`
}

// Mount is the name prefix under which a job's workers read the files of
// its i-th earlier job (see storage.Mounted).
func Mount(i int) string { return fmt.Sprintf("@against-%d", i) }

// InMount names a file of the i-th earlier job's output (name relative to
// it) as its workers read it: under its mount.
func InMount(i int, name string) string { return Mount(i) + "/" + name }

// AgainstOf returns the earlier job that holds doc, if any.
func (d Derived) AgainstOf(doc int64) (int, bool) {
	c := ChunkOf(doc)
	for i, a := range d.Against {
		if c >= a.FirstChunk && c < a.FirstChunk+a.Chunks {
			return i, true
		}
	}
	return 0, false
}
