package accuracy

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/control"
	"github.com/neardup/neardup/internal/corpus"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/pkg/records"
)

// TruthFile is the name of the generator's ground truth in the corpus
// directory; the leading _ keeps it out of the job's inputs.
const TruthFile = "_truth.jsonl"

// Options say what to measure.
type Options struct {
	// Corpus is the generated corpus, e.g. corpus.AccuracyConfig(n, seed).
	Corpus corpus.Config
	// ProseDir holds the prose the corpus is built from (empty: the
	// prose built into package corpus).
	ProseDir string
	// CorpusDir receives the corpus (JSONL and TruthFile); empty means a
	// temporary directory, removed at the end.
	CorpusDir string
	// OutDir receives one job output per run, named METHOD-THRESHOLD (an
	// existing one is replaced); empty means temporary directories.
	OutDir string
	// Thresholds and Methods: one job per method and threshold.
	Thresholds []float64
	Methods    []job.Method
	// Params are the job's parameters, except Method and Threshold, which
	// each run sets.
	Params control.Params
	// Workers is the number of in-process workers of each job.
	Workers int
	// Command is recorded in the report.
	Command []string
	// Log receives the harness's progress, JobLog the jobs' logs; nil
	// discards.
	Log, JobLog *slog.Logger
}

// Report is the outcome of Measure.
type Report struct {
	Command []string      `json:"command"`
	Started time.Time     `json:"started"`
	Corpus  CorpusSummary `json:"corpus"`
	Runs    []Run         `json:"runs"`
	// Pass says whether every checked run meets the --check criteria.
	Pass bool `json:"pass"`
}

// CorpusSummary describes the generated corpus and its ground truth.
type CorpusSummary struct {
	Config    corpus.Config       `json:"config"`
	Dir       string              `json:"dir,omitempty"` // empty when it was temporary
	Files     int                 `json:"files"`
	Docs      int                 `json:"docs"`
	Kinds     map[corpus.Kind]int `json:"kinds"`
	ShortDocs int                 `json:"short_docs"` // under ShortWords tokens
	Lengths   []LengthBin         `json:"lengths"`
	// MinJ is the least similarity of the ground truth; TruePairs counts its
	// pairs by bin (Listed and Clustered are 0).
	MinJ            float64 `json:"min_j"`
	TruePairs       []Bin   `json:"true_pairs"`
	Template        Spread  `json:"template_family"`
	GenerateSeconds float64 `json:"generate_seconds"`
	TruthSeconds    float64 `json:"truth_seconds"` // shingle sets and the join
}

// Run is one job and its accuracy.
type Run struct {
	Method job.Method     `json:"method"`
	Params control.Params `json:"params"` // as resolved by the job
	Out    string         `json:"out,omitempty"`
	// Seconds is the wall time of control.Run.
	Seconds float64         `json:"seconds"`
	Counts  manifest.Counts `json:"counts"`
	Result  *Result         `json:"result"`
	// Checked says whether the --check criteria apply (MinHash with exact
	// verification); Failures lists those not met, checked or not.
	Checked  bool     `json:"checked"`
	Failures []string `json:"failures"`
	// Languages holds the accuracy per language of a multilingual run.
	Languages []LanguageResult `json:"languages,omitempty"`
}

// Measure generates the corpus, computes its exact ground truth, runs the
// job once per method and threshold, and measures each run.
func Measure(ctx context.Context, o Options) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rep := &Report{Command: o.Command, Started: time.Now().UTC(), Pass: true}
	tmp, err := os.MkdirTemp("", "neardup-accuracy-")
	if err != nil {
		return nil, fmt.Errorf("temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)

	start := time.Now()
	pool, err := corpus.PoolFrom(o.ProseDir)
	if err != nil {
		return nil, err
	}
	g, err := corpus.New(pool, o.Corpus)
	if err != nil {
		return nil, err
	}
	c, err := o.prepare(g, tmp, start, log)
	if err != nil {
		return nil, err
	}
	rep.Corpus.Dir = c.dir
	rep.Corpus.GenerateSeconds, rep.Corpus.TruthSeconds = c.generateSeconds, c.truthSeconds
	rep.Corpus.summarise(g, c.truth, len(c.files))

	rep.Runs, err = o.runAll(ctx, c.files, tmp, log, func(run *Run, threshold float64, pairs []records.Pair, clusters []records.ClusterRecord) error {
		var err error
		if run.Result, err = Evaluate(c.truth, threshold, pairs, clusters); err != nil {
			return err
		}
		run.Failures = run.Result.Check()
		return nil
	})
	if err != nil {
		return nil, err
	}
	rep.Pass = passed(rep.Runs)
	return rep, nil
}

// passed reports whether no checked run failed.
func passed(runs []Run) bool {
	for _, run := range runs {
		if run.Checked && len(run.Failures) > 0 {
			return false
		}
	}
	return true
}

// prepared is a corpus written for the jobs, with its exact ground truth.
type prepared struct {
	dir             string // o.CorpusDir, or "" when the corpus is temporary
	files           []string
	truth           *Truth
	generateSeconds float64 // since the start given to prepare
	truthSeconds    float64
}

// prepare writes src as JSONL, with its ground truth as TruthFile, into
// o.CorpusDir (or a directory under tmp), and computes every pair with
// J >= min(0.5, lowest threshold) exactly, under the shingling of the
// job's parameters.
func (o Options) prepare(src corpus.Source, tmp string, start time.Time, log *slog.Logger) (*prepared, error) {
	dir := o.CorpusDir
	if dir == "" {
		dir = filepath.Join(tmp, "corpus")
	}
	written, err := corpus.Write(src, corpus.WriteOptions{Dir: dir, Format: corpus.FormatJSONL, Truth: TruthFile})
	if err != nil {
		return nil, fmt.Errorf("write corpus: %w", err)
	}
	c := &prepared{dir: o.CorpusDir, files: written.Files, generateSeconds: time.Since(start).Seconds()}
	log.Info("corpus written", "docs", src.Len(), "dir", dir, "seconds", round2(c.generateSeconds))

	start = time.Now()
	p := o.Params
	if err := p.Resolve(); err != nil {
		return nil, err
	}
	minJ := min(0.5, slices.Min(o.Thresholds))
	if c.truth, err = NewTruth(DocsOf(src, p.ShingleOptions()), minJ); err != nil {
		return nil, err
	}
	c.truthSeconds = time.Since(start).Seconds()
	log.Info("ground truth", "min_j", minJ, "pairs", len(c.truth.Pairs), "seconds", round2(c.truthSeconds))
	return c, nil
}

// measureFunc fills in run.Result and run.Failures from the pairs/ and
// clusters.parquet of a job run at threshold.
type measureFunc func(run *Run, threshold float64, pairs []records.Pair, clusters []records.ClusterRecord) error

// runAll runs the job on inputs once per method and threshold, each into
// its own directory under o.OutDir (or tmp, removed after the run), and
// measures each run.
func (o Options) runAll(ctx context.Context, inputs []string, tmp string, log *slog.Logger, measure measureFunc) ([]Run, error) {
	outRoot := o.OutDir
	if outRoot == "" {
		outRoot = filepath.Join(tmp, "out")
	}
	var runs []Run
	for _, method := range o.Methods {
		for _, t := range o.Thresholds {
			out := filepath.Join(outRoot, fmt.Sprintf("%s-%.2f", method, t))
			run, err := o.run(ctx, inputs, out, method, t, measure)
			if err != nil {
				return nil, fmt.Errorf("%s at threshold %v: %w", method, t, err)
			}
			if o.OutDir != "" {
				run.Out = out
			} else if err := os.RemoveAll(out); err != nil {
				return nil, fmt.Errorf("remove job output: %w", err)
			}
			log.Info("job measured", "method", method, "threshold", t, "seconds", round2(run.Seconds),
				"pair_recall", round4(run.Result.Total.All.PairRecall()), "precision", round4(run.Result.Precision))
			runs = append(runs, *run)
		}
	}
	return runs, nil
}

// Validate reports what is wrong with the options.
func (o Options) Validate() error {
	var errs []error
	if len(o.Thresholds) == 0 {
		errs = append(errs, errors.New("no threshold"))
	}
	for _, t := range o.Thresholds {
		if !(t > 0 && t <= 1) {
			errs = append(errs, fmt.Errorf("threshold %v: must be in (0, 1]", t))
		}
	}
	if len(o.Methods) == 0 {
		errs = append(errs, errors.New("no method"))
	}
	for _, m := range o.Methods {
		if m.Check() != nil {
			errs = append(errs, fmt.Errorf("method %q: must be minhash or simhash", m))
		}
	}
	if o.Workers < 1 {
		errs = append(errs, fmt.Errorf("workers %d: need at least 1", o.Workers))
	}
	return errors.Join(errs...)
}

// run runs one job into out and measures it.
func (o Options) run(ctx context.Context, inputs []string, out string, method job.Method, threshold float64, measure measureFunc) (*Run, error) {
	p := o.Params
	p.Method, p.Threshold = method, threshold
	jobLog := o.JobLog
	if jobLog == nil {
		jobLog = slog.New(slog.DiscardHandler)
	}
	cfg := control.Config{Out: out, Inputs: inputs, Params: p, Workers: o.Workers,
		Queue: queue.DefaultConfig(), Log: jobLog, Overwrite: true}
	start := time.Now()
	man, err := control.Run(ctx, cfg)
	if err != nil {
		return nil, err
	}
	run := &Run{Method: method, Params: man.Params, Seconds: time.Since(start).Seconds(), Counts: man.Counts,
		Checked: method == job.MethodMinHash && man.Params.Verify == job.VerifyExact}
	pairs, err := readPairs(out)
	if err != nil {
		return nil, err
	}
	clusters, err := readClusters(out)
	if err != nil {
		return nil, err
	}
	if err := measure(run, threshold, pairs, clusters); err != nil {
		return nil, err
	}
	return run, nil
}

// readPairs reads every row of out's pairs/*.parquet.
func readPairs(out string) ([]records.Pair, error) {
	files, err := filepath.Glob(filepath.Join(out, "pairs", "*.parquet"))
	if err != nil {
		return nil, err
	}
	var all []records.Pair
	for _, f := range files {
		rows, err := parquet.ReadFile[records.Pair](f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		all = append(all, rows...)
	}
	return all, nil
}

// readClusters reads out's clusters.parquet; a missing file is no cluster.
func readClusters(out string) ([]records.ClusterRecord, error) {
	path := filepath.Join(out, "clusters.parquet")
	rows, err := parquet.ReadFile[records.ClusterRecord](path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return rows, nil
}

// summarise fills in s from the generator and the truth.
func (s *CorpusSummary) summarise(g *corpus.Generator, t *Truth, files int) {
	s.Config, s.Files, s.Docs, s.MinJ = g.Config(), files, g.Len(), t.MinJ
	s.Kinds = map[corpus.Kind]int{}
	for i := range g.Len() {
		s.Kinds[g.Truth(i).Kind]++
	}
	for _, d := range t.Docs {
		if d.Words < ShortWords {
			s.ShortDocs++
		}
	}
	s.Lengths = t.LengthHistogram()
	r, _ := Evaluate(t, t.MinJ, nil, nil) // threshold MinJ cannot fail
	s.TruePairs = r.Bins
	s.Template = t.TemplateSpread()
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }
func round4(x float64) float64 { return math.Round(x*10000) / 10000 }
