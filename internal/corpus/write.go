package corpus

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// Format is an output file format.
type Format string

// Supported output formats.
const (
	// FormatJSONL writes one JSON object {"id","url","text"} per line.
	FormatJSONL Format = "jsonl"
	// FormatWET writes Common Crawl style WET files: a warcinfo record and
	// one WARC/1.0 conversion record with a text/plain body per document.
	FormatWET Format = "wet"
	// FormatWARC writes a warcinfo record and one WARC/1.0 response record
	// per document, whose body is an HTTP/1.1 response carrying an HTML page.
	FormatWARC Format = "warc"
	// FormatParquet writes a Parquet table of string columns id, url and
	// text (zstd-compressed; Gzip does not apply).
	FormatParquet Format = "parquet"
)

// ParseFormat parses a format name.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatJSONL, FormatWET, FormatWARC, FormatParquet:
		return f, nil
	}
	return "", fmt.Errorf("unknown format %q (want jsonl, wet, warc or parquet)", s)
}

// Extension returns the file-name extension of f, with ".gz" when gz.
func (f Format) Extension(gz bool) string {
	var ext string
	switch f {
	case FormatJSONL:
		ext = ".jsonl"
	case FormatWET:
		ext = ".warc.wet"
	case FormatWARC:
		ext = ".warc"
	case FormatParquet:
		return ".parquet"
	}
	if gz {
		ext += ".gz"
	}
	return ext
}

// DocsPerFile is the default number of documents per output file.
const DocsPerFile = 10000

// DefaultFiles returns the default number of output files for n documents:
// one per DocsPerFile documents, at least one.
func DefaultFiles(n int) int {
	return max(1, (n+DocsPerFile-1)/DocsPerFile)
}

// WriteOptions says where and how Write stores a corpus.
type WriteOptions struct {
	// Dir is the output directory; it is created if missing.
	Dir string
	// Format is the file format.
	Format Format
	// Files is the number of data files; 0 means DefaultFiles(N).
	// Documents are split into contiguous, nearly equal ranges.
	Files int
	// Gzip compresses the data files. JSONL files are one gzip stream;
	// WARC and WET files have one gzip member per record, like Common
	// Crawl's.
	Gzip bool
	// Name is the stem of the data file names. Empty means "part", with
	// files named part-0000.jsonl and so on; a non-empty Name with a single
	// file gives Name plus the extension, e.g. sample.jsonl.gz.
	Name string
	// Truth is the file name, inside Dir, of the ground-truth JSONL file;
	// empty means none is written. A name ending in ".gz" is gzipped.
	Truth string
	// Workers bounds how many files are written at once; 0 means
	// GOMAXPROCS. It never changes the output.
	Workers int
}

// FileName returns the name of data file idx of files.
func (o WriteOptions) FileName(idx, files int) string {
	ext := o.Format.Extension(o.Gzip)
	if o.Name != "" && files == 1 {
		return o.Name + ext
	}
	stem := o.Name
	if stem == "" {
		stem = "part"
	}
	return stem + "-" + pad(idx, 4) + ext
}

// Source is a generated corpus whose documents and ground truth are pure
// functions of their position: a *Generator or a *Multilingual.
type Source interface {
	// Len returns the number of documents.
	Len() int
	// Doc returns the document at position i, 0 <= i < Len().
	Doc(i int) Doc
	// Text returns the text of the document at position i.
	Text(i int) string
	// Truth returns the ground truth of the document at position i.
	Truth(i int) Truth
}

// Written lists the files Write produced, as paths.
type Written struct {
	Files []string
	Truth string
}

// Write writes every document of g to opts.Dir, plus the ground truth. The
// output depends only on g and opts (never on Workers or the machine).
// WARC and WET files need a *Generator (their records are dated and
// identified by it); JSONL and Parquet take any Source.
func Write(g Source, opts WriteOptions) (Written, error) {
	if _, err := ParseFormat(string(opts.Format)); err != nil {
		return Written{}, err
	}
	if _, ok := g.(*Generator); !ok && (opts.Format == FormatWARC || opts.Format == FormatWET) {
		return Written{}, fmt.Errorf("format %s needs an English corpus (a *Generator)", opts.Format)
	}
	files := opts.Files
	if files <= 0 {
		files = DefaultFiles(g.Len())
	}
	if files > max(1, g.Len()) {
		return Written{}, fmt.Errorf("%d files requested for %d documents", files, g.Len())
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return Written{}, fmt.Errorf("create output directory: %w", err)
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}

	var out Written
	for f := range files {
		out.Files = append(out.Files, filepath.Join(opts.Dir, opts.FileName(f, files)))
	}
	errs := make([]error, files)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, files) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range jobs {
				lo, hi := f*g.Len()/files, (f+1)*g.Len()/files
				errs[f] = writeFile(g, opts, out.Files[f], f, lo, hi)
			}
		}()
	}
	for f := range files {
		jobs <- f
	}
	close(jobs)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Written{}, err
	}

	if opts.Truth != "" {
		out.Truth = filepath.Join(opts.Dir, opts.Truth)
		if err := writeTruth(g, opts.Format, out.Truth); err != nil {
			return Written{}, err
		}
	}
	return out, nil
}

// writeFile writes documents [lo, hi) as data file number idx.
func writeFile(g Source, opts WriteOptions, path string, idx, lo, hi int) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create data file: %w", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", path, cerr)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	switch opts.Format {
	case FormatJSONL:
		err = writeJSONL(g, bw, opts.Gzip, lo, hi)
	case FormatParquet:
		err = writeParquet(g, bw, lo, hi)
	default:
		err = writeWARC(g.(*Generator), bw, opts, filepath.Base(path), idx, lo, hi)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeJSONL writes documents [lo, hi) as JSON lines, in one gzip stream
// when gz is set.
func writeJSONL(g Source, w io.Writer, gz bool, lo, hi int) error {
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(w)
		w = zw
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := lo; i < hi; i++ {
		if err := enc.Encode(g.Doc(i)); err != nil {
			return fmt.Errorf("encode document %d: %w", i, err)
		}
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return fmt.Errorf("finish gzip stream: %w", err)
		}
	}
	return nil
}

// writeTruth writes the ground truth, one JSON object per document, with
// the record ids of a *Generator's documents in formats other than JSONL.
func writeTruth(g Source, format Format, path string) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create truth file: %w", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", path, cerr)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	var w io.Writer = bw
	var zw *gzip.Writer
	if strings.HasSuffix(path, ".gz") {
		zw = gzip.NewWriter(bw)
		w = zw
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	gen, _ := g.(*Generator)
	for i := range g.Len() {
		t := g.Truth(i)
		if format != FormatJSONL && gen != nil {
			t.RecordID = gen.RecordID(format, i)
		}
		if err := enc.Encode(t); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteDefault writes n documents of the default mix (DefaultConfig(n,
// seed), the bundled pool) as JSONL in files files under dir, and returns
// the generator with what it wrote: a test's or benchmark's corpus in one
// call.
func WriteDefault(dir string, n int, seed uint64, files int) (*Generator, Written, error) {
	pool, err := BundledPool()
	if err != nil {
		return nil, Written{}, err
	}
	g, err := New(pool, DefaultConfig(n, seed))
	if err != nil {
		return nil, Written{}, err
	}
	w, err := Write(g, WriteOptions{Dir: dir, Format: FormatJSONL, Files: files})
	return g, w, err
}
