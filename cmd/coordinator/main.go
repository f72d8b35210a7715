// Command coordinator runs a neardup dedup job: it plans the input into
// chunks, puts the tasks on NATS JetStream, and clusters the verified pairs.
// Without --nats it starts an embedded NATS server and in-process workers.
//
//	coordinator --out DIR [flags] INPUT...   run a job
//	coordinator compare --out DIR [flags] INPUT...   MinHash and SimHash side by side
//	coordinator params [flags]               show the banding (or SimHash) plan for a threshold
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/procstat"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/pkg/bands"
	"github.com/neardup/neardup/pkg/pipeline"
	"github.com/neardup/neardup/pkg/report"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "params":
			os.Exit(runParams(os.Args[2:]))
		case "compare":
			os.Exit(runJob(os.Args[2:], true))
		}
	}
	os.Exit(runJob(os.Args[1:], false))
}

// paramFlags registers the job parameters on fs.
func paramFlags(fs *flag.FlagSet, p *pipeline.Params) {
	fs.IntVar(&p.K, "perms", p.K, "MinHash signature values (K)")
	fs.IntVar(&p.Bands, "bands", 0, "LSH bands (b); with --rows, overrides the choice made from --threshold")
	fs.IntVar(&p.Rows, "rows", 0, "rows per band (r)")
	fs.Float64Var(&p.Threshold, "threshold", p.Threshold, "Jaccard similarity at which a pair is a near-duplicate")
	fs.Float64Var(&p.FPWeight, "fp-weight", p.FPWeight, "weight of the false-positive area when choosing bands and rows")
	fs.Float64Var(&p.FNWeight, "fn-weight", p.FNWeight, "weight of the false-negative area when choosing bands and rows")
	fs.StringVar(&p.Method, "method", p.Method, "minhash (Jaccard, banded signatures) or simhash (64-bit fingerprints, Hamming distance)")
	fs.IntVar(&p.Hamming, "hamming", p.Hamming, "SimHash: largest Hamming distance of a near-duplicate pair")
}

// runJob runs a job, or with compare the same job with both methods.
func runJob(args []string, compare bool) int {
	p := pipeline.DefaultParams()
	qc := queue.DefaultConfig()
	cfg := pipeline.Config{}
	fs := flag.NewFlagSet("coordinator", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: coordinator --out DIR [flags] INPUT...\n       coordinator compare --out DIR [flags] INPUT...\n       coordinator params [flags]\n\n"+
			"INPUT: files, directories or globs of .warc.wet[.gz], .warc[.gz], .jsonl[.gz|.zst], .parquet, .txt\n\nflags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.Out, "out", "", "output directory (required)")
	fs.StringVar(&cfg.NATSURL, "nats", "", "NATS server URL; empty starts an embedded server with in-process workers")
	fs.IntVar(&cfg.Workers, "workers", runtime.NumCPU(), "in-process workers (embedded mode; 0 with --listen: outside workers only)")
	fs.StringVar(&cfg.Listen, "listen", "", "embedded mode: also accept worker connections on host:port")
	fs.StringVar(&cfg.Job, "job", "", "job name (default: derived from --out)")
	fs.BoolVar(&cfg.Overwrite, "overwrite", false, "replace a complete or different job in --out")
	fs.BoolVar(&cfg.KeepWork, "keep-work", false, "keep the work area (signatures, edges, job state) after success")
	paramFlags(fs, &p)
	fs.StringVar(&p.Sketch, "sketch", p.Sketch, "MinHash signature: oph (one-permutation hashing) or classic (K multiply-shift permutations)")
	fs.StringVar(&p.SimHashWeights, "simhash-weights", p.SimHashWeights, "SimHash shingle weights: none or tf (term frequency)")
	fs.IntVar(&p.Words, "words", p.Words, "words per shingle (k)")
	fs.IntVar(&p.CharGrams, "char-grams", 0, "use character n-grams of this length instead of word shingles (languages without spaces)")
	fs.BoolVar(&p.DigitsToZero, "digits-to-zero", false, "map every digit to 0 before shingling")
	fs.BoolVar(&p.StripDiacritics, "strip-diacritics", false, "remove diacritics before shingling")
	fs.Uint64Var(&p.Seed, "seed", p.Seed, "hash seed")
	fs.IntVar(&p.Partitions, "partitions", p.Partitions, "band partitions (reduce tasks)")
	fs.StringVar(&p.Verify, "verify", p.Verify, "verification: exact (Jaccard of the shingle sets) or estimate (from signatures)")
	fs.StringVar(&p.Keep, "keep", p.Keep, "which document of a cluster to keep: first (input order) or longest")
	fs.IntVar(&p.MaxBucket, "max-bucket", p.MaxBucket, "a band bucket of more documents compares each with its first few only, reported (bounds candidate pairs)")
	fs.Int64Var(&p.MaxClusterPairs, "max-cluster-pairs", p.MaxClusterPairs, "a cluster with more pairs lists only its kept document's pairs in pairs/, reported")
	fs.StringVar(&p.IDField, "id-field", p.IDField, "JSONL/Parquet id field")
	fs.StringVar(&p.TextField, "text-field", p.TextField, "JSONL/Parquet text field")
	fs.IntVar(&p.MaxDocBytes, "max-doc-bytes", p.MaxDocBytes, "reject documents with more text bytes (0: no limit)")
	fs.Int64Var(&p.ChunkBytes, "chunk-bytes", p.ChunkBytes, "text bytes per map task (a compressed input byte counts as 4)")
	fs.BoolVar(&p.Strict, "strict", false, "fail the job on any rejected record or failed task")
	fs.BoolVar(&p.Fsync, "fsync", false, "flush every file to disk before renaming it (durability across power loss)")
	fs.DurationVar(&qc.AckWait, "ack-wait", qc.AckWait, "redeliver a task whose worker sent no heartbeat for this long")
	fs.IntVar(&qc.MaxDeliver, "max-deliver", qc.MaxDeliver, "deliveries of a task before it fails")
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	quiet := fs.Bool("quiet", false, "no progress output")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of this process to the file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if cfg.Out == "" || fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	log, err := newLogger(*level)
	if err != nil {
		fmt.Fprintln(os.Stderr, "coordinator:", err)
		return 2
	}
	cfg.Inputs, cfg.Params, cfg.Queue, cfg.Log = fs.Args(), p, qc, log
	if cfg.Faults, err = faults.Parse(os.Getenv(faults.EnvVar), log); err != nil {
		log.Error("bad "+faults.EnvVar, "err", err)
		return 2
	}
	if !*quiet {
		cfg.Progress, cfg.Live = os.Stderr, term.IsTerminal(int(os.Stderr.Fd()))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Error("cpu profile", "err", err)
			return 2
		}
		defer f.Close()
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if compare {
		cmp, err := pipeline.Compare(ctx, cfg)
		if err != nil {
			log.Error("comparison failed", "err", err)
			return 1
		}
		if err := pipeline.WriteComparison(os.Stdout, cmp); err != nil {
			return 1
		}
		return 0
	}
	man, err := pipeline.Run(ctx, cfg)
	if err != nil {
		log.Error("job failed", "err", err)
		if errors.Is(err, pipeline.ErrComplete) {
			return 3
		}
		if errors.Is(err, pipeline.ErrJobBusy) {
			return 5
		}
		return 1
	}
	c := man.Counts
	log.Info("job complete", "out", cfg.Out, "docs", c.Docs, "rejected", c.Rejected, "empty", c.Empty,
		"candidates", c.UniquePairs, "pairs", c.Pairs, "exact_groups", c.ExactGroups, "clusters", c.Clusters,
		"duplicates", c.Duplicates, "exact_duplicates", c.ExactDups,
		"seconds", fmt.Sprintf("%.2f", man.Seconds),
		"MB/s", fmt.Sprintf("%.1f", float64(c.InputBytes)/1e6/max(man.Seconds, 1e-9)),
		"peak_rss_mib", fmt.Sprintf("%.0f", procstat.PeakRSSMiB()))
	if len(man.Failures) > 0 {
		log.Warn("the job completed without the chunks of its failed tasks", "failed", len(man.Failures))
		return 4
	}
	return 0
}

func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

// runParams prints the banding plan for a threshold, or with --method
// simhash the SimHash plan.
func runParams(args []string) int {
	p := pipeline.DefaultParams()
	fs := flag.NewFlagSet("coordinator params", flag.ContinueOnError)
	paramFlags(fs, &p)
	svg := fs.String("svg", "", "also draw the S-curve into this SVG file")
	also := fs.String("also", "", "more (b, r) curves to draw for comparison, e.g. 20x5,14x8")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := p.Resolve(); err != nil {
		fmt.Fprintln(os.Stderr, "coordinator params:", err)
		return 2
	}
	if *svg != "" && p.Method == "simhash" {
		fmt.Fprintln(os.Stderr, "coordinator params: --svg draws the MinHash S-curve, not with --method simhash")
		return 2
	}
	if err := pipeline.WritePlanReport(os.Stdout, p); err != nil {
		fmt.Fprintln(os.Stderr, "coordinator params:", err)
		return 1
	}
	if *svg == "" {
		return 0
	}
	curves := []bands.Params{p.BandParams()}
	for _, br := range strings.FieldsFunc(*also, func(r rune) bool { return r == ',' }) {
		var b, r int
		if _, err := fmt.Sscanf(br, "%dx%d", &b, &r); err != nil || b < 1 || r < 1 {
			fmt.Fprintf(os.Stderr, "coordinator params: --also %q: want BxR, e.g. 20x5\n", br)
			return 2
		}
		curves = append(curves, bands.Params{Bands: b, Rows: r})
	}
	title := fmt.Sprintf("P(candidate) at threshold %.2f, K=%d", p.Threshold, p.K)
	if err := os.WriteFile(*svg, report.SCurveSVG(curves, p.Threshold, title), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "coordinator params:", err)
		return 1
	}
	return 0
}
