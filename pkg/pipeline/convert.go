package pipeline

// The conversions between the public types and the internal ones, in one
// file: a change of the internal types is met here.

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/neardup/neardup/internal/control"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/query"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/formats"
	"github.com/neardup/neardup/pkg/shingle"
)

// params are the job parameters o asks for: job.DefaultParams with the
// options set (not zero) in their place, checked. Bands, Rows and
// Partitions are left for the job to choose, as the command does.
func (o Options) params() (job.Params, error) {
	p := job.DefaultParams()
	set(&p.Method, job.Method(o.Method))
	set(&p.Tokenizer, job.Tokenizer(o.Tokenizer))
	set(&p.Keep, job.Keep(o.Keep))
	set(&p.InputFormat, formats.Kind(o.InputFormat))
	set(&p.IDField, o.IDField)
	set(&p.TextField, o.TextField)
	set(&p.Threshold, o.Threshold)
	set(&p.K, o.Perms)
	set(&p.Hamming, o.Hamming)
	set(&p.Words, o.Words)
	set(&p.Partitions, o.Partitions)
	set(&p.Seed, o.Seed)
	set(&p.Paragraphs, o.Paragraphs)
	set(&p.ParagraphUnit, string(o.ParagraphUnit))
	set(&p.ShingleAfterStrip, o.ShingleAfterStrip)
	if o.NoIndex {
		p.Index = false
	}
	check := p // Check fills in defaults: the job does, not here
	if err := check.Check(); err != nil {
		return job.Params{}, optionsError(err)
	}
	return p, nil
}

// set sets *dst to v unless v is the zero value (the default).
func set[T comparable](dst *T, v T) {
	var zero T
	if v != zero {
		*dst = v
	}
}

// optionsError is an error of job.Params.Resolve, which names the
// command's flags, naming the Options fields instead.
func optionsError(err error) error {
	r := strings.NewReplacer(
		"--method", "Options.Method", "--threshold", "Options.Threshold", "--perms", "Options.Perms",
		"--hamming", "Options.Hamming", "--words", "Options.Words", "--tokenizer", "Options.Tokenizer",
		"--keep", "Options.Keep", "--input-format", "Options.InputFormat", "--partitions", "Options.Partitions",
		"--char-grams", "char grams", "--paragraph-unit", "Options.ParagraphUnit", "--paragraphs", "Options.Paragraphs",
		"--shingle-after-strip", "Options.ShingleAfterStrip", "--index=false", "Options.NoIndex")
	return fmt.Errorf("%w: %s", ErrInvalidOptions, strings.ReplaceAll(r.Replace(err.Error()), "\n", "; "))
}

// config is the pipeline's configuration of the job o describes.
func (o Options) config() (control.Config, error) {
	var errs []error
	locations := func(field string, locs []string) {
		for _, l := range locs {
			if _, err := storage.ParseLocation(l); err != nil {
				errs = append(errs, fmt.Errorf("Options.%s: %w", field, err))
			}
		}
	}
	if o.Out == "" {
		errs = append(errs, errors.New("Options.Out is required"))
	}
	locations("Out", []string{o.Out})
	if len(o.Inputs) == 0 {
		errs = append(errs, errors.New("Options.Inputs: no input given"))
	}
	locations("Inputs", o.Inputs)
	locations("Against", o.Against)
	if o.WriteKept != "" {
		locations("WriteKept", []string{o.WriteKept})
	}
	switch o.KeptFormat {
	case "", CorpusAuto, CorpusJSONL, CorpusParquet, CorpusWARC:
		if o.KeptFormat != "" && o.WriteKept == "" {
			errs = append(errs, errors.New("Options.KeptFormat goes with Options.WriteKept"))
		}
	default:
		errs = append(errs, fmt.Errorf("Options.KeptFormat must be %s, %s, %s or %s, not %q", CorpusAuto, CorpusJSONL, CorpusParquet, CorpusWARC, o.KeptFormat))
	}
	if r := o.StripParagraphs; r != nil {
		switch {
		case o.WriteKept == "":
			errs = append(errs, errors.New("Options.StripParagraphs goes with Options.WriteKept"))
		case !o.Paragraphs:
			errs = append(errs, errors.New("Options.StripParagraphs needs Options.Paragraphs: the paragraph pass finds the units to strip"))
		case o.KeptFormat != CorpusJSONL && o.KeptFormat != CorpusParquet:
			errs = append(errs, fmt.Errorf("Options.StripParagraphs writes each document's id, url and stripped text: it needs Options.KeptFormat %s or %s, not %q", CorpusJSONL, CorpusParquet, o.KeptFormat))
		}
		if r.MinCount < 2 {
			errs = append(errs, fmt.Errorf("Options.StripParagraphs.MinCount must be at least 2 (a unit of one document is not repeated), not %d", r.MinCount))
		}
		if r.MinKeptChars < 0 {
			errs = append(errs, fmt.Errorf("Options.StripParagraphs.MinKeptChars must not be negative, not %d", r.MinKeptChars))
		}
	}
	if o.Workers < 0 {
		errs = append(errs, fmt.Errorf("Options.Workers must not be negative, not %d", o.Workers))
	}
	if len(errs) > 0 {
		return control.Config{}, fmt.Errorf("%w: %w", ErrInvalidOptions, errors.Join(errs...))
	}
	p, err := o.params()
	if err != nil {
		return control.Config{}, err
	}
	workers := o.Workers
	if workers == 0 {
		workers = runtime.NumCPU() // as the command
	}
	conn := queue.DefaultConnConfig()
	conn.URL = o.NATSURL
	diskFull := o.DiskFullTimeout
	switch {
	case diskFull == 0:
		diskFull = control.DefaultDiskFullTimeout
	case diskFull < 0:
		diskFull = 0 // the pipeline's "wait"
	}
	return control.Config{
		Out: location(o.Out), Inputs: o.Inputs, Against: o.Against, Params: p,
		NATSURL: o.NATSURL, Conn: conn, Workers: workers, Queue: queue.DefaultConfig(),
		Overwrite: o.Overwrite, Log: o.Log, Progress: o.Progress, DiskFullTimeout: diskFull,
		WriteKept: keptLocation(o.WriteKept), KeptFormat: string(o.KeptFormat), KeptStrip: o.StripParagraphs.strip(),
	}, nil
}

// strip is the job's rule of r (nil for none).
func (r *StripRule) strip() *job.Strip {
	if r == nil {
		return nil
	}
	return &job.Strip{MinCount: r.MinCount, KeepFirst: !r.All, MinKeptChars: r.MinKeptChars}
}

// keptLocation is location(s), or "" for none.
func keptLocation(s string) string {
	if s == "" {
		return ""
	}
	return location(s)
}

// location is a local path made absolute, or a URL as it is.
func location(s string) string {
	if l, err := storage.ParseLocation(s); err == nil && l.Local() {
		if abs, err := filepath.Abs(l.Path); err == nil {
			return abs
		}
	}
	return s
}

// result describes the finished job whose manifest is m, written to out.
func result(out string, m *control.Manifest) *Result {
	c := m.Counts
	return &Result{
		Out: out, Job: m.Job, Status: Status(m.Status), Duration: time.Duration(m.Seconds * float64(time.Second)),
		Counts: Counts{
			InputBytes: c.InputBytes, Docs: c.Docs, Rejected: c.Rejected, Empty: c.Empty,
			Pairs: c.Pairs, ExactGroups: c.ExactGroups, Clusters: c.Clusters,
			Duplicates: c.Duplicates, ExactDuplicates: c.ExactDups,
		},
		FailedTasks: len(m.Failures),
		Warnings:    append([]string{}, m.Warnings...),
	}
}

// options are the query options o asks for.
func (o IndexOptions) options() (query.Options, error) {
	if o.Tokenizer != "" {
		if _, err := shingle.ParseTokenizer(string(o.Tokenizer)); err != nil {
			return query.Options{}, fmt.Errorf("%w: IndexOptions.Tokenizer must be %s or %s, not %q",
				ErrInvalidOptions, TokenizeScripts, TokenizeWordsOnly, o.Tokenizer)
		}
	}
	if o.CacheBytes < 0 {
		return query.Options{}, fmt.Errorf("%w: IndexOptions.CacheBytes must not be negative, not %d", ErrInvalidOptions, o.CacheBytes)
	}
	if !(o.Threshold >= 0 && o.Threshold <= 1) { // NaN too
		return query.Options{}, fmt.Errorf("%w: IndexOptions.Threshold must be in (0, 1] (0: each index's own), not %g", ErrInvalidOptions, o.Threshold)
	}
	return query.Options{Threshold: o.Threshold, Tokenizer: job.Tokenizer(o.Tokenizer), CacheBytes: o.CacheBytes}, nil
}

// queryDocs are docs as the query package takes them.
func queryDocs(docs []Doc) []query.Doc {
	out := make([]query.Doc, len(docs))
	for i, d := range docs {
		out[i] = query.Doc{ID: d.ID, Text: []byte(d.Text)}
	}
	return out
}

// queryResults are the query package's results as public ones.
func queryResults(res []query.Result) []QueryResult {
	out := make([]QueryResult, len(res))
	for i, r := range res {
		ms := make([]Match, len(r.Matches))
		for j, m := range r.Matches {
			ms[j] = Match{Index: m.Index, Job: m.Job, Doc: m.Doc, ID: m.ID, URL: m.URL,
				Similarity: m.Similarity, Estimate: m.Estimate, Method: m.Method}
		}
		out[i] = QueryResult{ID: r.ID, Matches: ms}
	}
	return out
}
