// Command accuracy measures neardup's pairs and clusters against the exact
// ground truth of a generated corpus with a realistic length mix.
//
//	go run ./cmd/accuracy --n 20000 --json accuracy.json
//	go run ./cmd/accuracy --n 20000 --method simhash --hamming 3
//	go run ./cmd/accuracy --multilingual --n 16000 --check
//
// It writes a Markdown report on stdout. With --check it exits with status
// 1 unless every MinHash run lists exactly the true pairs it should (see
// package github.com/neardup/neardup/internal/accuracy).
//
// With --multilingual the corpus is a mixed crawl of generated text in
// eight languages and scripts (en, ru, ar, hi, zh, ja, ko, th; see
// corpus.Multilingual), --n documents split evenly among them, and the
// report gives recall per language and similarity bin, and the recall of
// planted near copies with 1% of their words or graphemes edited. --check
// then exits 1 unless, in every language, precision is 1, pair recall is
// at least 0.99 for J >= t+0.05, and the run at 0.8 lists at least 99% of
// the planted pairs.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/neardup/neardup/internal/accuracy"
	"github.com/neardup/neardup/internal/control"
	"github.com/neardup/neardup/internal/corpus"
	"github.com/neardup/neardup/internal/job"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	p := control.DefaultParams()
	fs := flag.NewFlagSet("accuracy", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: accuracy [flags]\n\nflags:\n")
		fs.PrintDefaults()
	}
	n := fs.Int("n", 20000, "documents in the generated corpus")
	seed := fs.Uint64("seed", 1, "corpus seed")
	pages := fs.Int("template-pages", -1, fmt.Sprintf("pages of the template family (-1: %d, at most n/10)", corpus.DefaultTemplatePages))
	prose := fs.String("prose", "", "directory of .txt prose files (default: the built-in prose, internal/corpus/prose)")
	corpusDir := fs.String("corpus-dir", "", "write the corpus here and keep it (default: a temporary directory)")
	outDir := fs.String("out", "", "write the job outputs here, one directory per run, and keep them (default: temporary)")
	thresholds := fs.String("thresholds", "0.8,0.5", "comma-separated thresholds, one job each")
	methods := fs.String("method", p.Method.String(), "comma-separated methods: minhash, simhash")
	fs.Var(&p.Sketch, "sketch", "MinHash signature: dart or classic")
	fs.IntVar(&p.K, "perms", p.K, "MinHash signature values (K)")
	fs.IntVar(&p.Bands, "bands", 0, "LSH bands (b); with --rows, overrides the choice made from the threshold")
	fs.IntVar(&p.Rows, "rows", 0, "rows per band (r)")
	fs.IntVar(&p.Hamming, "hamming", p.Hamming, "SimHash: largest Hamming distance of a pair")
	fs.Var(&p.Tokenizer, "tokenizer", "how text becomes tokens: scripts or words-only (the earlier rule); the truth follows it")
	fs.IntVar(&p.ShingleAfterStrip, "shingle-after-strip", 0, "N: the jobs sketch each document without its lines held by N documents or more (and keep no index); the truth stays the whole texts' Jaccard")
	workers := fs.Int("workers", 2, "in-process workers of each job")
	jsonPath := fs.String("json", "", "also write the report as JSON to this file")
	check := fs.Bool("check", false, "exit 1 unless every MinHash run has precision 1, recall >= 0.99 for J >= t+0.05, >= 0.94 for [t, t+0.05) and 1 for J = 1 (--multilingual: precision 1 and recall >= 0.99 for J >= t+0.05 in every language, and planted-pair recall >= 0.99 at t = 0.8)")
	multilingual := fs.Bool("multilingual", false, "measure a mixed crawl of generated text in eight languages instead of English prose")
	langs := fs.String("languages", "", "with --multilingual: comma-separated language codes (default: all of "+strings.Join(codes(), ",")+")")
	level := fs.String("log-level", "info", "log level of the harness (the jobs log warnings only): debug, info, warn, error")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintln(os.Stderr, "accuracy: --log-level:", err)
		return 2
	}
	ts, err := parseFloats(*thresholds)
	if err != nil {
		fmt.Fprintln(os.Stderr, "accuracy: --thresholds:", err)
		return 2
	}
	english := false // a flag of English corpora only is set
	fs.Visit(func(f *flag.Flag) { english = english || f.Name == "prose" || f.Name == "template-pages" })
	if *multilingual && english || !*multilingual && *langs != "" {
		fmt.Fprintln(os.Stderr, "accuracy: --prose and --template-pages are for English corpora, --languages for --multilingual")
		return 2
	}
	if p.ShingleAfterStrip != 0 {
		p.Index = false // --shingle-after-strip keeps no index
	}
	cfg := corpus.AccuracyConfig(*n, *seed)
	if *pages >= 0 {
		cfg.TemplatePages = *pages
	}
	opts := accuracy.Options{
		Corpus:     cfg,
		ProseDir:   *prose,
		CorpusDir:  *corpusDir,
		OutDir:     *outDir,
		Thresholds: ts,
		Methods:    methodList(*methods),
		Params:     p,
		Workers:    *workers,
		Command:    append([]string{"accuracy"}, args...),
		Log:        slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lv})),
		JobLog:     slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: max(lv, slog.LevelWarn)})),
	}
	if err := opts.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "accuracy:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var rep any
	var pass bool
	var write func(io.Writer) error
	if *multilingual {
		selected := codes()
		if *langs != "" {
			selected = strings.Split(*langs, ",")
		}
		mc := corpus.MultilingualConfig{PerLanguage: *n / len(selected), Seed: *seed, Languages: selected}
		if err := mc.Validate(); err != nil {
			fmt.Fprintln(os.Stderr, "accuracy:", err)
			return 2
		}
		r, err := accuracy.MeasureMultilingual(ctx, opts, mc)
		if err != nil {
			opts.Log.Error("measurement failed", "err", err)
			return 1
		}
		rep, pass, write = r, r.Pass, func(w io.Writer) error { return accuracy.WriteMultilingualMarkdown(w, r) }
	} else {
		r, err := accuracy.Measure(ctx, opts)
		if err != nil {
			opts.Log.Error("measurement failed", "err", err)
			return 1
		}
		rep, pass, write = r, r.Pass, func(w io.Writer) error { return accuracy.WriteMarkdown(w, r) }
	}
	if err := write(os.Stdout); err != nil {
		opts.Log.Error("write report", "err", err)
		return 1
	}
	if *jsonPath != "" {
		if err := accuracy.WriteJSON(*jsonPath, rep); err != nil {
			opts.Log.Error("write report", "err", err)
			return 1
		}
	}
	if *check && !pass {
		return 1
	}
	return 0
}

// codes returns the codes of the languages of --multilingual.
func codes() []string {
	var out []string
	for _, l := range corpus.Languages() {
		out = append(out, l.Code)
	}
	return out
}

// parseFloats parses a comma-separated list of numbers.
func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// methodList is the methods of a comma-separated list, as given: Validate
// checks them.
func methodList(s string) []job.Method {
	var out []job.Method
	for _, m := range strings.Split(s, ",") {
		out = append(out, job.Method(m))
	}
	return out
}
