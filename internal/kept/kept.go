// Package kept writes the deduplicated corpus of a job: every input file
// again, without the documents of duplicates.parquet, each record kept as
// it was in the input (JSONL lines, Parquet rows with all their columns,
// WARC and WET records byte for byte), or in another format
// (FormatMatrix). With annotation nothing is dropped: every document is
// written with its cluster, cluster size, kept flag and most similar
// document.
//
// Write is `coordinator write-kept`, one process writing a finished job's
// corpus; WriteTask is a task of a job's write-kept stage (--write-kept),
// a run of the job's input files written on a worker. Both write each
// input file the same way, into the same names.
//
// Writing streams: input files are read one after the other, each once
// and in order (a JSONL file written as Parquet twice: its columns are
// found first), and the job's docs/ files are read alongside; memory
// holds the duplicates' ordinals (and, to annotate, the clustered and
// paired documents), not the corpus.
package kept

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/formats"
)

// The files written beside the corpus, last.
const (
	// SummaryFile is the Summary, as JSON.
	SummaryFile = "kept.json"
	// SuccessFile marks a complete corpus; written after everything else.
	SuccessFile = "_SUCCESS"
	// PartialFile marks the corpus of a job finished partial (its
	// _PARTIAL): the inputs of its failed map tasks are copied whole.
	PartialFile = "_PARTIAL"
)

// Errors a caller may tell apart.
var (
	// ErrNotFinished is a job without _SUCCESS or _PARTIAL.
	ErrNotFinished = errors.New("the job is not finished")
	// ErrNotEmpty is an output directory that holds files already.
	ErrNotEmpty = errors.New("the output directory is not empty")
)

// Options describe what to write.
type Options struct {
	// Job is the finished job's output directory or object-store URL.
	Job string
	// Dir is where to write: a local directory or object-store URL.
	Dir string
	// Format is one of Formats (FormatAuto when empty): what the
	// corpus's files are (FormatMatrix).
	Format string
	// Annotate writes every document, with its annotation, instead of
	// the kept ones only.
	Annotate bool
	// ShardDocs starts a new output file every ShardDocs documents of an
	// input file; 0 writes one output file per input file.
	ShardDocs int64
	// Roots bound what Write reads: every input the job's manifest names
	// must lie under every one of them (Write refuses to run with none).
	// Its manifest is the job directory's word, which whoever ran its
	// tasks could have written; the roots are the operator's.
	Roots []Roots
	// Inputs are the job's inputs as the operator names them (files,
	// directories, object-store prefixes); Dir may not be, lie under or
	// hold any of them, nor the job or an input its manifest names.
	Inputs []string
	// Overwrite replaces the corpus in a Dir that holds one write-kept
	// wrote (MarkerFile); a Dir holding other files is refused.
	Overwrite bool
	// Fsync flushes each file to disk before renaming it.
	Fsync bool
	// Log receives a line per input file; nil discards.
	Log *slog.Logger
	// Open opens an input file by path or URL; nil: storage.OpenFile.
	Open func(ctx context.Context, path string) (storage.File, error)
	// Strip strips the repeated units the job's paragraph pass found
	// (--strip-paragraphs); nil for none. It needs Format jsonl or
	// parquet (CheckStrip).
	Strip *job.Strip
}

// Summary is what was written: kept.json.
type Summary struct {
	Job      string `json:"job"`
	Format   string `json:"format"`
	Annotate bool   `json:"annotate"`
	// ShardDocs is the documents per output file (0: one output file per
	// input file).
	ShardDocs int64 `json:"shard_docs"`
	// Docs is the documents read (rows of docs/), Kept those written
	// (all of them when annotating) and Dropped the others; Duplicates
	// is the rows of duplicates.parquet, which Dropped equals unless
	// annotating.
	Docs       int64 `json:"docs"`
	Kept       int64 `json:"kept"`
	Dropped    int64 `json:"dropped"`
	Duplicates int64 `json:"duplicates"`
	// Bytes is the size of the corpus's files (the outputs of Files).
	Bytes int64         `json:"bytes"`
	Files []FileSummary `json:"files"`
	// Annotations is the sidecar written with Annotate.
	Annotations string `json:"annotations,omitempty"`
	// Strip is how the documents were stripped of repeated units;
	// Stripped and StrippedBytes count the units stripped and their
	// bytes, Short the documents dropped as too short after (each input's
	// listed in its ShortFile).
	Strip         *job.Strip `json:"strip,omitempty"`
	Stripped      int64      `json:"stripped,omitempty"`
	StrippedBytes int64      `json:"stripped_bytes,omitempty"`
	Short         int64      `json:"short,omitempty"`
}

// FileSummary is what was written of one input file.
type FileSummary struct {
	// KeptFile is the input, its outputs, its documents read, kept and
	// dropped, and the outputs' bytes: what the job's manifest lists too.
	manifest.KeptFile
	Kind formats.Kind `json:"kind"`
	// Copy says how records were written: "members" (WARC/WET records
	// that are gzip members of their own, copied compressed, unchanged),
	// "records" (WARC/WET records decompressed, each written as a gzip
	// member of its own), "lines" (JSONL lines as they are), "rows"
	// (Parquet rows, as they are or as JSON objects), "file" (a text file
	// as it is), "columns" (JSONL documents as Parquet rows of their
	// members) or "documents" (the id, URL and text of each document of a
	// WARC, WET or text file, as JSON objects or Parquet rows).
	Copy string `json:"copy"`
}

// Write writes the corpus of the job o.Job into o.Dir and returns its
// summary. It refuses a job that is not finished (ErrNotFinished), an
// input of the manifest outside o.Roots, an o.Dir that is, lies under or
// holds the job or an input, a format that cannot write one of the inputs
// (CheckFormat), and an output directory that holds files (ErrNotEmpty)
// unless o.Overwrite and they are write-kept's own. The summary
// (kept.json) and then _SUCCESS are written last.
func Write(ctx context.Context, o Options) (*Summary, error) {
	if o.Format == "" {
		o.Format = FormatAuto
	}
	if err := CheckFormat(o.Format, nil); err != nil {
		return nil, err
	}
	if err := CheckStrip(o.Strip, o.Format); err != nil {
		return nil, err
	}
	if o.Strip != nil && o.Annotate {
		return nil, errors.New("--strip-paragraphs and --annotate do not go together: an annotated corpus keeps every document as it is")
	}
	if o.ShardDocs < 0 {
		return nil, fmt.Errorf("documents per output file must be 0 (one file per input) or more, not %d", o.ShardDocs)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if l, err := storage.ParseLocation(o.Job); err != nil {
		return nil, err
	} else if _, err := os.Stat(l.Path); l.Local() && err != nil {
		return nil, fmt.Errorf("job: %w", err) // not created by opening it
	}
	src, err := storage.Open(ctx, o.Job)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	man, err := readManifest(ctx, src, o.Job)
	if err != nil {
		return nil, err
	}
	if err := checkInputs(o.Job, man.Inputs, o.Roots); err != nil {
		return nil, err
	}
	if err := CheckPlacement(o.Dir, JobPlaces(o.Job, man.Inputs, o.Inputs)); err != nil {
		return nil, err
	}
	if err := CheckFormat(o.Format, man.Inputs); err != nil {
		return nil, err
	}
	if man.Status != manifest.StatusComplete {
		o.Log.Warn("the job is partial: the inputs of its failed map tasks have no documents in docs/ and are copied whole", "status", man.Status)
	}
	dst, err := Claim(ctx, o.Dir, Marker{Job: o.Job}, o.Overwrite)
	if err != nil {
		return nil, err
	}
	defer dst.Close()
	dst.Fsync = o.Fsync

	dups, err := ReadDuplicates(ctx, src)
	if err != nil {
		return nil, err
	}
	chunks, err := docFiles(ctx, src)
	if err != nil {
		return nil, err
	}
	checks := make([]checker, len(o.Roots))
	for i, r := range o.Roots {
		checks[i] = r
	}
	w := &writer{src: src, dst: dst, inputs: man.Inputs, params: man.Params, format: o.Format, shardDocs: o.ShardDocs,
		dups: dups, open: o.Open, checks: checks, log: o.Log}
	sum := &Summary{Job: o.Job, Format: o.Format, Annotate: o.Annotate, ShardDocs: o.ShardDocs, Duplicates: int64(len(dups)), Strip: o.Strip}
	if o.Strip != nil {
		files, err := paragraphFiles(ctx, src)
		if err != nil {
			return nil, err
		}
		if w.strip, err = loadStripper(ctx, src, files, man.Params, *o.Strip); err != nil {
			return nil, err
		}
	}
	if o.Annotate {
		if w.ann, err = newAnnotator(ctx, src, dups); err != nil {
			return nil, err
		}
		if w.annW, err = pqfile.NewWriter[Annotation](ctx, dst, AnnotationsFile, pqfile.Options{}); err != nil {
			return nil, err
		}
		defer w.annW.Abort()
		sum.Annotations = AnnotationsFile
	}
	files, err := w.part(ctx, Task{First: 0, Last: len(man.Inputs) - 1, Docs: chunks})
	if err != nil {
		return nil, err
	}
	sum.Add(files)
	sum.AddStripped(w.strip)
	dropped := sum.Dropped
	if o.Annotate {
		dropped = w.notKept
	}
	if dropped != sum.Duplicates {
		return nil, fmt.Errorf("%s: %d documents dropped, but %s lists %d: the inputs are not those the job read", o.Job, dropped, job.DuplicatesFile, sum.Duplicates)
	}
	if w.annW != nil {
		if _, err := w.annW.Close(); err != nil {
			return nil, err
		}
	}
	if err := WriteSummary(ctx, dst, sum); err != nil {
		return nil, err
	}
	return sum, storage.WriteFile(ctx, dst, SuccessFile, nil)
}

// Add adds the files written, in input order, to the summary's.
func (s *Summary) Add(files []FileSummary) {
	for _, f := range files {
		s.Files = append(s.Files, f)
		s.Docs += f.Docs
		s.Kept += f.Kept
		s.Dropped += f.Dropped
		s.Bytes += f.Bytes
		s.Short += f.Short
	}
}

// AddStripped adds what a writer's stripper stripped (none when nil).
func (s *Summary) AddStripped(st *stripper) {
	if st != nil {
		s.Stripped += st.Units
		s.StrippedBytes += st.Bytes
	}
}
