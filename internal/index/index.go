// Package index describes what a finished job keeps for later jobs to
// match against it (--against) and for query: its parameters, and for each
// chunk its documents file and its text store (ids, urls and texts; before
// version 3, a signature file of ids, urls, signatures and shingle sets).
// The band records stay where the job wrote them (bands/), listed in
// index/index.json, which is written last and marks the index complete.
//
// Layout, under the job's output:
//
//	index/index.json                 this description, with the list of band files
//	index/text/chunk-CCCCCC.txz      per chunk: id, url and text by slot (package textstore; version 3)
//	index/dropped.parquet            the documents the job dropped, a copy of duplicates.parquet (compacted: a row group a chunk)
//	index/units/parts-FFFFF-LLLLL.parquet per paragraphs task (--paragraphs): the unit table's partitions F to L (UnitTable)
//	bands/parts-FFFFF-LLLLL.parquet  per reduce task: the band records of partitions F to L, a row group each
//	docs/chunk-CCCCCC.parquet        the documents
//
// Versions 1 and 2 (still read) kept signature files and a band file per
// chunk and partition:
//
//	index/sigs/chunk-CCCCCC.sig      per chunk: id, url, signature, shingle set by slot (package sigfile)
//
// Builds of version 3 before index/dropped.parquet wrote a list a chunk
// (still read; compaction merges them into one file):
//
//	index/dropped/chunk-CCCCCC.parquet per chunk: its documents the job dropped
//	index/parts/part=NNNNN.json      per partition: every chunk's band files in bands/
//	index/bandruns/chunk-CCCCCC.json per chunk read in runs: its later runs' band files
//	bands/part=NNNNN/chunk-*.parquet the band records, sorted by (band, key, doc)
package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/internal/storage"
)

// Version is the layout's version; Load refuses others but version 1,
// the same layout made before the tokenizer was a parameter (its
// params, without one, read as words-only). Version 2 keeps older
// builds, which would shingle by words-only whatever the index says, from
// reading an index made by script. The earlier jobs (Against) moved out
// of params within version 2: a build from before reads such an index
// alike but for them, which it only uses to warn of an earlier job's own
// earlier jobs not given to --against.
//
// Version 3 stores each chunk's documents' texts (a text store, package
// textstore, at job.TextFile) instead of their signatures and shingle
// sets, which readers compute again; Model fingerprints the document
// model of the build that wrote it (stage.ModelFingerprint), which a
// reader's must equal. Load reads versions 1 to 4: the chunks of
// versions 1 and 2 name signature files, read as they are.
//
// Version 3 also writes bands/ as one file per reduce task
// (BandsLayoutTasks), listed in index.json instead of index/parts/ and
// index/bandruns/; an index with BandsLayout 0 is read through those.
//
// Version 4 is version 3 with text stores of format NDTXT4 (a frame's
// texts apart from their ids and urls, package textstore), which this
// build reads beside NDTXT3: a build that reads up to version 3 refuses
// such an index by its version rather than finding its text stores
// corrupt.
const Version = 4

// Index describes a job's index.
type Index struct {
	Version int    `json:"version"`
	Job     string `json:"job"`
	// Params are the job's parameters: what made its signatures and band
	// keys.
	Params job.Params `json:"params"`
	// FirstChunk is the first of its own chunks; Chunks lists them.
	FirstChunk int `json:"first_chunk"`
	// Against lists the earlier jobs it was matched against, whose
	// documents are not in this index. Versions before it left job.Params
	// wrote it in params (see UnmarshalJSON).
	Against []job.Against `json:"against,omitempty"`
	Chunks  []Chunk       `json:"chunks"`
	Docs    int64         `json:"docs"`
	// Model is the fingerprint of the document model of the build that
	// made it (version 3 on; see stage.ModelFingerprint).
	Model string `json:"model,omitempty"`
	// BandsLayout is the layout of bands/: 0 (versions 1 and 2) a file
	// per chunk and partition, listed in index/parts/ and
	// index/bandruns/; BandsLayoutTasks a file per reduce task, listed in
	// BandFiles.
	BandsLayout int `json:"bands_layout,omitempty"`
	// BandFiles are the bands/ files of BandsLayoutTasks, by partition
	// range, ascending.
	BandFiles []BandFile `json:"band_files,omitempty"`
	// Compacted lists, for an index written by `coordinator index
	// compact`, the jobs whose indexes it holds (their chunks, under the
	// same numbers); nil for a job's own index. Compacted indexes made
	// before it was recorded lack it: their chunks say the same.
	Compacted []job.Against `json:"compacted,omitempty"`
	// Units is its unit table (--paragraphs): the units of its documents
	// and of the earlier jobs' whose tables it merged; nil for none (a
	// job without --paragraphs, or indexes made before unit tables).
	Units *UnitTable `json:"units,omitempty"`
}

// BandsLayoutTasks is the bands/ layout of one file per reduce task, a
// row group per partition (records.Band).
const BandsLayoutTasks = 3

// BandFile is a bands/ file of BandsLayoutTasks: the records of
// partitions First to Last, sorted by (part, band, key, doc), a row group
// (or more) per partition. Its name is relative to the job's output.
type BandFile struct {
	File  fileinfo.Info `json:"file"`
	First int           `json:"first"`
	Last  int           `json:"last"`
}

// BandFilesOf returns the files of files holding partition part.
func BandFilesOf(files []BandFile, part int) []BandFile {
	var out []BandFile
	for _, f := range files {
		if f.First <= part && part <= f.Last {
			out = append(out, f)
		}
	}
	return out
}

// UnmarshalJSON decodes an index as encoded by encoding/json, or as a
// version before job.Derived left job.Params wrote it: the earlier jobs in
// params.against (and params.first_chunk, the same as first_chunk).
func (ix *Index) UnmarshalJSON(data []byte) error {
	type plain Index // without this method
	q := plain(*ix)  // fields the JSON leaves out keep their values
	if err := json.Unmarshal(data, &q); err != nil {
		return err
	}
	if q.Against == nil {
		d := job.Derived{}
		if err := d.ReadParams(data); err != nil {
			return err
		}
		q.Against = d.Against
	}
	*ix = Index(q)
	return nil
}

// Chunk is one chunk's files.
type Chunk struct {
	Chunk   int           `json:"chunk"`
	Docs    int64         `json:"docs"`
	DocFile fileinfo.Info `json:"doc_file"`
	// SigFile is the chunk's record file: its text store (version 3),
	// or its signature file (versions 1 and 2); readers tell them by
	// their trailers (stage.OpenRecords).
	SigFile fileinfo.Info `json:"sig_file"`
	// Dropped lists the chunk's documents its job dropped (WriteDropped):
	// a later job never keeps them. Nil in an index made before it was
	// recorded, whose documents are all taken as published.
	Dropped *job.DroppedList `json:"dropped,omitempty"`
}

// PartEntry is one chunk's entry in the list of a partition
// (index/parts/part=NNNNN.json, job.TaskInputFile(job.InputsReduce, part)):
// its band file in the partition (the first run's; nil when it has no
// record there) and the list of its later runs (nil when it has none).
// File names are relative to the job's output.
type PartEntry struct {
	Chunk int            `json:"c"`
	File  *fileinfo.Info `json:"f,omitempty"`
	Runs  *fileinfo.Info `json:"r,omitempty"`
}

// ReadPart reads the list of partition part of the index at st.
func ReadPart(ctx context.Context, st storage.Opener, part int) ([]PartEntry, error) {
	name := job.TaskInputFile(job.InputsReduce, part)
	data, err := storage.ReadFile(ctx, st, name)
	if err != nil {
		return nil, err
	}
	var list []PartEntry
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return list, nil
}

// New describes the index of a job from its spec and its map results.
func New(spec *job.Spec, maps []job.MapResult) *Index {
	ix := &Index{Version: Version, Job: spec.Job, Params: spec.Params, FirstChunk: spec.FirstChunk, Against: spec.Against}
	for _, m := range maps {
		ix.Chunks = append(ix.Chunks, Chunk{Chunk: m.Chunk, Docs: m.Docs, DocFile: m.DocFile, SigFile: m.SigFile})
		ix.Docs += m.Docs
	}
	return ix
}

// JobOf names the job chunk is of: the job a compacted index holds it
// for, else the index's.
func (ix *Index) JobOf(chunk int) string {
	return job.Against{Job: ix.Job, Held: ix.Compacted}.JobOf(chunk)
}

// End is one past its last chunk.
func (ix *Index) End() int {
	if len(ix.Chunks) == 0 {
		return ix.FirstChunk
	}
	return ix.Chunks[len(ix.Chunks)-1].Chunk + 1
}

// Write writes the index's description (last: it marks the index
// complete).
func Write(ctx context.Context, st storage.Creator, ix *Index) error {
	data, err := json.MarshalIndent(ix, "", " ")
	if err != nil {
		return err
	}
	return storage.WriteFile(ctx, st, job.IndexFile, append(data, '\n'))
}

// ErrNoIndex marks a location that holds no complete index.
var ErrNoIndex = errors.New("no index")

// Load reads the index of the job at st.
func Load(ctx context.Context, st storage.Opener) (*Index, error) {
	data, err := storage.ReadFile(ctx, st, job.IndexFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s is missing (was the job run with --index=false, or is it unfinished?)", ErrNoIndex, job.IndexFile)
	}
	if err != nil {
		return nil, err
	}
	var ix Index
	if err := json.Unmarshal(data, &ix); err != nil {
		return nil, fmt.Errorf("%s: %w", job.IndexFile, err)
	}
	if ix.Version < 1 || ix.Version > Version {
		return nil, fmt.Errorf("%s: layout version %d, this build reads versions 1 to %d", job.IndexFile, ix.Version, Version)
	}
	return &ix, nil
}

// Incomparable names the parameters of p that differ from the index's
// in a way that makes their signatures or band keys incomparable, as
// "--flag OLD (this job: NEW)", or returns nil.
func (ix *Index) Incomparable(p job.Params) []string {
	o := ix.Params
	var diff []string
	check := func(flag string, old, now any) {
		if old != now {
			diff = append(diff, fmt.Sprintf("--%s %v (this job: %v)", flag, old, now))
		}
	}
	check("method", o.Method, p.Method)
	if o.Method == job.MethodMinHash {
		check("sketch", o.Sketch, p.Sketch)
		check("perms", o.K, p.K)
	} else {
		check("simhash-weights", o.SimHashWeights, p.SimHashWeights)
		check("hamming", o.Hamming, p.Hamming)
	}
	check("seed", o.Seed, p.Seed)
	check("words", o.Words, p.Words)
	check("tokenizer", o.Tokenizer, p.Tokenizer)
	check("char-grams", o.CharGrams, p.CharGrams)
	check("digits-to-zero", o.DigitsToZero, p.DigitsToZero)
	check("strip-diacritics", o.StripDiacritics, p.StripDiacritics)
	if o.Verify == job.VerifyEstimate && p.Verify == job.VerifyExact {
		// Its signature files hold no shingle sets to compare exactly.
		diff = append(diff, "--verify estimate (this job: exact; an index without shingle sets verifies by estimate only)")
	}
	check("bands", o.Bands, p.Bands)
	check("rows", o.Rows, p.Rows)
	check("partitions", o.Partitions, p.Partitions)
	return diff
}

// Explain is Incomparable as one error naming the index's location, or
// nil.
func (ix *Index) Explain(loc string, p job.Params) error {
	diff := ix.Incomparable(p)
	if len(diff) == 0 {
		return nil
	}
	hint := ""
	if ix.Params.Tokenizer != p.Tokenizer {
		hint = fmt.Sprintf(" (its text was cut into tokens by the %s rule; run this job with --tokenizer %s, or rebuild that index with --tokenizer %s)",
			ix.Params.Tokenizer, ix.Params.Tokenizer, p.Tokenizer)
	}
	return fmt.Errorf("--against %s: its index was made with other parameters, so its signatures cannot be compared with this job's: %s%s",
		loc, strings.Join(diff, ", "), hint)
}

// CheckModel refuses an index that stores texts (version 3 on) made by a
// build whose document model differs from this one's: sketched again
// here, its texts would not give the band keys its band records hold.
// Indexes before version 3 store their shingle sets and signatures, and
// pass.
func CheckModel(ix *Index) error {
	if ix.Version < 3 {
		return nil
	}
	fp, err := sketch.ModelFingerprint(ix.Params)
	if err != nil {
		return fmt.Errorf("%s: %w", job.IndexFile, err)
	}
	if ix.Model != fp {
		return fmt.Errorf("%s: the index was made by a build with another document model (model %q, this build's %q under its parameters): "+
			"this build would sketch its stored texts differently from the band keys it holds; rebuild the index with this build, or query it with the build that made it",
			job.IndexFile, ix.Model, fp)
	}
	return nil
}
