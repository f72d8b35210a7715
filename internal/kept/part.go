package kept

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path"
	"strings"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// checker refuses paths that are not to be read: Roots, or a worker's
// data roots.
type checker interface {
	Check(path string) error
}

// writer holds what every input file is written with.
type writer struct {
	src       storage.Opener // the job's files: docs/
	dst       storage.Creator
	inputs    []job.Input // the job's, in the order of its manifest
	params    job.Params
	format    string
	shardDocs int64
	// dups holds, sorted, the ordinals of the duplicates among the
	// documents written (and maybe others).
	dups []int64
	open func(ctx context.Context, path string) (storage.File, error)
	// checks refuse, again, an input file opened elsewhere than they
	// allow (checkOpened).
	checks  []checker
	log     *slog.Logger
	docs    *docCursor
	ann     *annotator
	annW    *pqfile.Writer[Annotation]
	notKept int64 // documents annotated as not kept
	// strip strips the repeated units of the documents written
	// (--strip-paragraphs); nil for none.
	strip *stripper
}

// part writes the inputs t.First to t.Last, whose documents the docs/
// files t.Docs list, and returns what it wrote of each. The duplicates
// are w.dups (t.Dups is not read).
func (w *writer) part(ctx context.Context, t Task) ([]FileSummary, error) {
	if t.First < 0 || t.Last >= len(w.inputs) || t.First > t.Last+1 {
		return nil, fmt.Errorf("inputs %d to %d of a job of %d inputs", t.First, t.Last, len(w.inputs))
	}
	if w.open == nil {
		w.open = storage.OpenFile
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	members, err := membersOnly(ctx, w.src, t.Docs)
	if err != nil {
		return nil, err
	}
	w.docs = newDocCursor(ctx, w.src, t.Docs, w.inputs, t.First)
	defer w.docs.close()
	var files []FileSummary
	for i := t.First; i <= t.Last; i++ {
		in := w.inputs[i]
		w.docs.begin(i, in.Path)
		fs, err := w.file(ctx, i, in, members[in.Path])
		if err != nil {
			return nil, err
		}
		w.log.Info("input written", "input", in.Path, "outputs", fs.Outputs, "docs", fs.Docs, "kept", fs.Kept, "dropped", fs.Dropped, "copy", fs.Copy)
		files = append(files, *fs)
	}
	// What docs/ lists after them is of the inputs that follow.
	r, err := w.docs.row()
	if err != nil {
		return nil, err
	}
	if r != nil {
		if i, ok := w.docs.order[r.File]; !ok || i <= t.Last {
			return nil, fmt.Errorf("docs/ lists document %d (id %q) of %s, which is not among the inputs written", r.Doc, r.ID, r.File)
		}
	}
	return files, nil
}

// file writes input i; members tells that every document of it is a gzip
// member of its own.
func (w *writer) file(ctx context.Context, i int, in job.Input, members bool) (*FileSummary, error) {
	how := FormatMatrix[in.Kind][w.format]
	if how == "" {
		return nil, CheckFormat(w.format, []job.Input{in})
	}
	if w.strip != nil && how != copyLines {
		how = copyDocs // a stripped document is written anew (a JSONL line keeps its other members)
	}
	f := &fileJob{ctx: ctx, w: w, in: in, docs: w.docs,
		sum: FileSummary{KeptFile: manifest.KeptFile{Input: in.Path, Outputs: []string{}}, Kind: in.Kind, Copy: how}}
	file, err := w.open(ctx, in.Path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	if err := checkOpened(file, in.Path, w.checks); err != nil {
		return nil, err
	}
	if file.Size() != in.Size {
		return nil, fmt.Errorf("%s: %d bytes, but %d when the job read it: the file has changed", in.Path, file.Size(), in.Size)
	}
	if how == copyFile {
		f.out = newShards(ctx, w.dst, fmt.Sprintf("%05d-%s", i, baseName(in.Path)), "", 0)
	} else {
		f.out = newShards(ctx, w.dst, fmt.Sprintf("%05d-%s", i, stem(in.Path)), extension(in.Kind, w.format), w.shardDocs)
	}
	switch how {
	case copyLines:
		if w.strip != nil {
			err = f.strippedJSONL(file)
		} else {
			err = f.jsonl(file)
		}
	case copyColumns:
		err = f.columns(file)
	case copyRows:
		err = f.parquet(file)
	case copyRecords:
		if members && compressionOf(in) == "gzip" {
			f.sum.Copy = copyMembers
			err = f.members(file)
		} else {
			err = f.records(file)
		}
	case copyFile:
		err = f.text(file)
	case copyDocs:
		err = f.documents(file)
	}
	if err == nil {
		err = f.docs.finish()
	}
	if err == nil {
		err = f.out.finish()
	}
	if err == nil {
		err = f.writeShort(i)
	}
	if err != nil {
		f.out.abort()
		return nil, err
	}
	f.sum.Outputs = append(f.sum.Outputs, f.out.names...)
	f.sum.Bytes = f.out.bytes
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
	// short are the documents stripping left too short, dropped.
	short []ShortDoc
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

// annotation is the annotation of the document last written, nil when
// not annotating.
func (f *fileJob) annotation() *Annotation {
	if f.w.ann == nil {
		return nil
	}
	return &f.an
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

// docInfo is the description of a docs/ file to open: nil, unchecked,
// when its writer's record is not known (Write lists docs/).
func docInfo(f fileinfo.Info) *fileinfo.Info {
	if f.Bytes == 0 && f.Checksum == 0 {
		return nil
	}
	return &f
}
