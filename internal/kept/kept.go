// Package kept writes the deduplicated corpus of a finished job: every
// input file again, without the documents of duplicates.parquet, each
// record kept as it was in the input (JSONL lines, Parquet rows with all
// their columns, WARC and WET records byte for byte). With annotation
// nothing is dropped: every document is written with its cluster, cluster
// size, kept flag and most similar document.
//
// Writing streams: input files are read one after the other, each once
// and in order, and the job's docs/ files are read alongside; memory holds
// the duplicates' ordinals (and, to annotate, the clustered and paired
// documents), not the corpus.
package kept

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"strings"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/formats"
	"github.com/neardup/neardup/pkg/records"
)

// The files written beside the corpus, last.
const (
	// SummaryFile is the Summary, as JSON.
	SummaryFile = "kept.json"
	// SuccessFile marks a complete corpus; written after everything else.
	SuccessFile = "_SUCCESS"
)

// The values of Options.Format.
const (
	FormatAuto    = "auto"    // each JSONL or Parquet input in its own format
	FormatJSONL   = "jsonl"   // every JSONL and Parquet input as .jsonl.gz
	FormatParquet = "parquet" // every JSONL and Parquet input as .parquet
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
	// Format is FormatAuto (the default when empty), FormatJSONL or
	// FormatParquet: how JSONL and Parquet inputs are written.
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
	Docs       int64         `json:"docs"`
	Kept       int64         `json:"kept"`
	Dropped    int64         `json:"dropped"`
	Duplicates int64         `json:"duplicates"`
	Files      []FileSummary `json:"files"`
	// Annotations is the sidecar written with Annotate.
	Annotations string `json:"annotations,omitempty"`
}

// FileSummary is what was written of one input file.
type FileSummary struct {
	Input   string       `json:"input"`
	Kind    formats.Kind `json:"kind"`
	Outputs []string     `json:"outputs"`
	Docs    int64        `json:"docs"`
	Kept    int64        `json:"kept"`
	Dropped int64        `json:"dropped"`
	// Copy says how records were copied: "members" (WARC/WET records that
	// are gzip members of their own, copied compressed, unchanged),
	// "records" (WARC/WET records decompressed, each written as a gzip
	// member of its own), "lines" (JSONL), "rows" (Parquet) or "file" (a
	// text file).
	Copy string `json:"copy"`
}

// Write writes the corpus of the job o.Job into o.Dir and returns its
// summary. It refuses a job that is not finished (ErrNotFinished), an
// input of the manifest outside o.Roots, an o.Dir that is, lies under or
// holds the job or an input, and an output directory that holds files
// (ErrNotEmpty) unless o.Overwrite and they are write-kept's own. The
// summary (kept.json) and then _SUCCESS are written last.
func Write(ctx context.Context, o Options) (*Summary, error) {
	if o.Format == "" {
		o.Format = FormatAuto
	}
	if o.Format != FormatAuto && o.Format != FormatJSONL && o.Format != FormatParquet {
		return nil, fmt.Errorf("format must be %s, %s or %s, not %q", FormatAuto, FormatJSONL, FormatParquet, o.Format)
	}
	if o.ShardDocs < 0 {
		return nil, fmt.Errorf("documents per output file must be 0 (one file per input) or more, not %d", o.ShardDocs)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Open == nil {
		o.Open = storage.OpenFile
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
	places := []place{{"the job", o.Job}}
	for i, in := range man.Inputs {
		places = append(places, place{fmt.Sprintf("input %d of the job", i), in.Path})
	}
	for _, in := range o.Inputs {
		places = append(places, place{"an INPUT", in})
	}
	if err := checkPlacement(o.Dir, places); err != nil {
		return nil, err
	}
	if man.Status != manifest.StatusComplete {
		o.Log.Warn("the job is partial: the inputs of its failed map tasks have no documents in docs/ and are copied whole", "status", man.Status)
	}
	dst, err := openOutput(ctx, o)
	if err != nil {
		return nil, err
	}
	defer dst.Close()
	dst.Fsync = o.Fsync

	dups, err := readDuplicates(ctx, src)
	if err != nil {
		return nil, err
	}
	chunks, err := docFiles(ctx, src)
	if err != nil {
		return nil, err
	}
	members, err := membersOnly(ctx, src, chunks)
	if err != nil {
		return nil, err
	}
	docs := newDocCursor(ctx, src, chunks, man.Inputs)
	defer docs.close()
	w := &writer{o: o, dst: dst, params: man.Params, dups: dups, docs: docs}
	sum := &Summary{Job: o.Job, Format: o.Format, Annotate: o.Annotate, ShardDocs: o.ShardDocs, Duplicates: int64(len(dups))}
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
	for i, in := range man.Inputs {
		docs.begin(i, in.Path)
		fs, err := w.file(ctx, i, in, members[in.Path])
		if err != nil {
			return nil, err
		}
		o.Log.Info("input written", "input", in.Path, "outputs", fs.Outputs, "docs", fs.Docs, "kept", fs.Kept, "dropped", fs.Dropped, "copy", fs.Copy)
		sum.Files = append(sum.Files, *fs)
		sum.Docs += fs.Docs
		sum.Kept += fs.Kept
		sum.Dropped += fs.Dropped
	}
	if r, err := docs.row(); err != nil || r != nil {
		return nil, errors.Join(err, fmt.Errorf("%s: docs/ lists documents of no input", o.Job))
	}
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
	return sum, finish(ctx, dst, sum)
}

// finish writes the summary, then the marker of a complete corpus.
func finish(ctx context.Context, dst storage.Creator, sum *Summary) error {
	data, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return err
	}
	if err := storage.WriteFile(ctx, dst, SummaryFile, append(data, '\n')); err != nil {
		return err
	}
	return storage.WriteFile(ctx, dst, SuccessFile, nil)
}

// openOutput opens o.Dir, which must be empty or, with o.Overwrite, hold
// a corpus write-kept wrote (checkOwn), which it empties; then it marks
// the directory as write-kept's (MarkerFile).
func openOutput(ctx context.Context, o Options) (*storage.Dir, error) {
	dst, err := storage.Open(ctx, o.Dir)
	if err != nil {
		return nil, err
	}
	if err := emptyOwn(ctx, o, dst); err != nil {
		dst.Close()
		return nil, err
	}
	if err := storage.WriteJSON(ctx, dst, MarkerFile, struct {
		Job string `json:"job"`
	}{o.Job}, false); err != nil {
		dst.Close()
		return nil, err
	}
	return dst, nil
}

// emptyOwn empties dst when it holds write-kept's files and o.Overwrite;
// any other file is left where it is and refused.
func emptyOwn(ctx context.Context, o Options, dst *storage.Dir) error {
	names, err := dst.List(ctx, "")
	if err != nil || len(names) == 0 {
		return err
	}
	if !o.Overwrite {
		return fmt.Errorf("%s: %w (%d files; pass --overwrite to replace a corpus write-kept wrote)", o.Dir, ErrNotEmpty, len(names))
	}
	if err := checkOwn(o.Dir, names); err != nil {
		return err
	}
	// The marker of completion goes first: a corpus half replaced is
	// never complete. The marker of write-kept's stays.
	if err := dst.Remove(ctx, SuccessFile); err != nil {
		return err
	}
	for _, n := range names {
		if n == MarkerFile {
			continue
		}
		if err := dst.Remove(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// writer holds what every input file is written with.
type writer struct {
	o       Options
	dst     storage.Creator
	docs    *docCursor
	params  job.Params
	dups    []int64
	ann     *annotator
	annW    *pqfile.Writer[Annotation]
	notKept int64 // documents annotated as not kept
}

// file writes input i; members tells that every document of it is a gzip
// member of its own.
func (w *writer) file(ctx context.Context, i int, in job.Input, members bool) (*FileSummary, error) {
	f := &fileJob{ctx: ctx, w: w, in: in, docs: w.docs,
		sum: FileSummary{Input: in.Path, Kind: in.Kind, Outputs: []string{}}}
	stem := fmt.Sprintf("%05d-%s", i, stem(in.Path))
	file, err := w.o.Open(ctx, in.Path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	if err := checkOpened(file, in.Path, w.o.Roots); err != nil {
		return nil, err
	}
	if file.Size() != in.Size {
		return nil, fmt.Errorf("%s: %d bytes, but %d when the job read it: the file has changed", in.Path, file.Size(), in.Size)
	}
	switch in.Kind {
	case formats.KindJSONL:
		f.out = newShards(ctx, w.dst, stem, tableExt(w.o.Format, FormatJSONL), w.o.ShardDocs)
		f.sum.Copy = "lines"
		err = f.jsonl(file)
	case formats.KindParquet:
		f.out = newShards(ctx, w.dst, stem, tableExt(w.o.Format, FormatParquet), w.o.ShardDocs)
		f.sum.Copy = "rows"
		err = f.parquet(file)
	case formats.KindWARC, formats.KindWET:
		ext := ".warc.gz"
		if in.Kind == formats.KindWET {
			ext = ".warc.wet.gz"
		}
		f.out = newShards(ctx, w.dst, stem, ext, w.o.ShardDocs)
		if members && compressionOf(in) == "gzip" {
			f.sum.Copy = "members"
			err = f.members(file)
		} else {
			f.sum.Copy = "records"
			err = f.records(file)
		}
	case formats.KindText:
		f.out = newShards(ctx, w.dst, fmt.Sprintf("%05d-%s", i, baseName(in.Path)), "", 0)
		f.sum.Copy = "file"
		err = f.text(file)
	default:
		err = fmt.Errorf("%s: inputs of kind %q cannot be written", in.Path, in.Kind)
	}
	if err == nil {
		err = f.docs.finish()
	}
	if err == nil {
		err = f.out.finish()
	}
	if err != nil {
		f.out.abort()
		return nil, err
	}
	f.sum.Outputs = append(f.sum.Outputs, f.out.names...)
	return &f.sum, nil
}

// fileJob is the writing of one input file.
type fileJob struct {
	ctx  context.Context
	w    *writer
	in   job.Input
	docs *docCursor
	out  *shards
	sum  FileSummary
	an   Annotation // the annotation of the last document met
}

// write reports whether document d is written: a kept one, or any when
// annotating. For a document written it makes room for it in the output
// (a new shard when the current one is full) and, when annotating, fills
// f.an and adds its row to the annotations. Call it before writing d.
func (f *fileJob) write(d records.DocRecord) (bool, error) {
	f.sum.Docs++
	keep := !contains(f.w.dups, d.Doc)
	if !keep && f.w.ann == nil {
		f.sum.Dropped++
		return false, nil
	}
	f.sum.Kept++
	if err := f.out.forDoc(); err != nil {
		return false, err
	}
	if f.w.ann != nil {
		f.an = f.w.ann.annotate(d)
		f.an.Output = f.out.name
		if !f.an.Keep {
			f.w.notKept++
		}
		if err := f.w.annW.Write([]Annotation{f.an}); err != nil {
			return false, err
		}
	}
	return true, nil
}

// text copies a text file, one document, unless it is dropped.
func (f *fileJob) text(file storage.File) error {
	d, ok, err := f.docs.at(0)
	if err != nil {
		return err
	}
	if ok {
		if write, err := f.write(d); err != nil || !write {
			return err
		}
	}
	if err := f.out.ensure(); err != nil {
		return err
	}
	if _, err := io.Copy(f.out, io.NewSectionReader(file, 0, file.Size())); err != nil {
		return fmt.Errorf("%s: %w", f.in.Path, err)
	}
	return nil
}

// tableExt is the ending of the outputs of a JSONL or Parquet input
// (whose own format is own) written with format.
func tableExt(format, own string) string {
	if format == FormatAuto {
		format = own
	}
	if format == FormatParquet {
		return ".parquet"
	}
	return ".jsonl.gz"
}

// compressionOf is the compression of an input: what its content told,
// else its name's ("gzip", "zstd" or "none").
func compressionOf(in job.Input) string {
	if in.Compression != "" {
		return in.Compression
	}
	name := strings.ToLower(in.Path)
	if i := strings.IndexByte(name, '?'); i >= 0 && strings.Contains(name, "://") {
		name = name[:i]
	}
	switch {
	case strings.HasSuffix(name, ".gz"):
		return "gzip"
	case strings.HasSuffix(name, ".zst"):
		return "zstd"
	}
	return "none"
}

// baseName is the last element of a path or URL, without a URL's query.
func baseName(p string) string {
	if strings.Contains(p, "://") {
		if i := strings.IndexByte(p, '?'); i >= 0 {
			p = p[:i]
		}
	}
	return path.Base(strings.ReplaceAll(p, "\\", "/"))
}

// stem is an input's base name without its kind's and compression's
// endings: "sample" for "dir/sample.warc.wet.gz".
func stem(p string) string {
	name := baseName(p)
	for _, ext := range []string{".gz", ".zst", ".jsonl", ".ndjson", ".parquet", ".wet", ".warc", ".txt"} {
		if len(name) > len(ext) && strings.EqualFold(name[len(name)-len(ext):], ext) {
			name = name[:len(name)-len(ext)]
		}
	}
	return name
}
