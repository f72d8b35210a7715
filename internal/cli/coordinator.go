package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/neardup/neardup/internal/control"
	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/procstat"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/report"
	"github.com/neardup/neardup/pkg/bands"
)

// inputHelp is what the job commands take as arguments.
const inputHelp = "INPUT: files, directories or globs of .warc.wet[.gz], .warc[.gz], .jsonl[.gz|.zst], .parquet, .txt"

// Coordinator returns the coordinator's commands: a job (the default),
// compare, params, query, rows, write-kept, series, index and config.
func Coordinator() []Command {
	job := Command{Usage: "coordinator --out DIR [flags] INPUT...", Summary: "run a dedup job (" + inputHelp + ")", Setup: jobSetup(false)}
	return []Command{
		job,
		{Name: "compare", Usage: "coordinator compare --out DIR [flags] INPUT...", Summary: "run the job with MinHash and with SimHash, side by side", Setup: jobSetup(true)},
		{Name: "params", Usage: "coordinator params [--method M] [--threshold T] [--perms K] [--bands B --rows R] [--svg FILE [--also BxR,...]]",
			Summary: "show the banding plan for a threshold", Setup: paramsSetup},
		{Name: "write-kept", Usage: "coordinator write-kept --job OUT --dir DIR [--data-root DIR]... [--annotate] [--shard-docs N] [--format auto|jsonl|parquet|warc] [INPUT...]",
			Summary: "write a finished job's corpus without its duplicates (or, --annotate, every document annotated)", Setup: writeKeptSetup},
		{Name: "query", Usage: "coordinator query --index OUT [--index OUT2] [--threshold T] [--format auto|jsonl|text] [--batch N] FILE|-",
			Summary: "print each document's near-duplicates in finished jobs' indexes, as JSON lines", Setup: querySetup},
		{Name: "rows", Usage: "coordinator rows [--columns] DATASET OUT",
			Summary: "print the rows of a complete job's pairs, clusters, duplicates, rejects or paragraphs as JSON lines (--columns: its columns)", Setup: rowsSetup},
		{Name: "series", Usage: "coordinator series list [--json] DIR | coordinator series report [--out DIR] DIR",
			Summary: "list the members of a series (--series DIR): state, documents, pairs, and whether the next member is matched against each; or write its report, the trend of its duplicates across the members", Setup: seriesSetup},
		{Name: "index", Usage: "coordinator index compact --out DIR [--job NAME] [--overwrite] OUT...",
			Summary: "write the indexes of a series of finished jobs as one, for --against and query", Setup: indexSetup},
		ConfigCommand("coordinator", job),
	}
}

// jobSetup registers the flags of a job and returns its Prepare; with
// compare, the job runs once per method.
func jobSetup(compare bool) func(fs *flag.FlagSet) Prepare {
	return func(fs *flag.FlagSet) Prepare {
		p := control.DefaultParams()
		qc := queue.DefaultConfig()
		cfg := control.Config{}
		fs.StringVar(&cfg.Out, "out", "", "output directory (required)")
		conn := queue.DefaultConnConfig()
		conn.RegisterFlags(fs, "NATS server URL, or several separated by commas (servers of one cluster); empty starts an embedded server with in-process workers", noEnv)
		fs.IntVar(&cfg.Workers, "workers", runtime.NumCPU(), "in-process workers (embedded mode; 0 with --listen: outside workers only)")
		fs.StringVar(&cfg.Listen, "listen", "", "embedded mode: also accept worker connections on host:port")
		fs.StringVar(&cfg.NATSStore, "nats-store", "", "embedded mode: the NATS server's store directory (default <out>/_work/nats); put it on another disk than --out if that one may fill up")
		fs.DurationVar(&cfg.DiskFullTimeout, "disk-full-timeout", control.DefaultDiskFullTimeout, "fail the job, naming the disk, when the disk of --out (or of the embedded store) stays full this long, or naming the server when the --nats server answers but does not store the job's state this long (0: wait)")
		fs.DurationVar(&cfg.NoWorkerWarning, "no-worker-warning", control.DefaultNoWorkerWarning, "warn when a stage's tasks wait this long with no worker taking any, naming the NATS URL workers should connect to, and again every as long (0: never)")
		fs.StringVar(&cfg.Job, "job", "", "job name (default: derived from --out)")
		fs.BoolVar(&cfg.Overwrite, "overwrite", false, "replace a complete or different job in --out")
		fs.BoolVar(&cfg.KeepWork, "keep-work", false, "keep the work area (signatures, edges, job state) after success")
		fs.Var((*listFlag)(&cfg.Against), "against", "an earlier job's output to match against (repeatable; give every earlier job of a series): its documents are never dropped, this job's near-duplicates of its published ones are, and its dropped ones are never kept")
		fs.BoolVar(&cfg.AllowPartial, "allow-partial", false, "accept a job whose map tasks failed for good as finished, marked _PARTIAL (without it: no marker, and a rerun retries them)")
		var ser seriesFlags
		var batch batchFlags
		checkStrip := func() error { return nil }
		if !compare {
			ser.register(fs)
			batch.register(fs)
			fs.StringVar(&cfg.WriteKept, "write-kept", "", "also write the corpus without its duplicates into this directory or URL, as the job's last stage "+
				"(with --series: into DIR/NAME, a directory for each member); outside --out, the inputs and the earlier jobs")
			fs.StringVar(&cfg.KeptFormat, "kept-format", kept.FormatAuto, "with --write-kept, "+keptFormatHelp)
			checkStrip = registerStrip(fs, &cfg.KeptStrip)
		}
		p.RegisterFlags(fs)
		qc.RegisterFlags(fs)
		quiet := fs.Bool("quiet", false, "no progress output")
		var proc processFlags
		proc.register(fs)
		return func(args []string, out Streams) (Run, error) {
			if err := ser.apply(&cfg, time.Now()); err != nil {
				return nil, err
			}
			if err := checkStrip(); err != nil {
				return nil, err
			}
			if cfg.Out == "" {
				return nil, errors.New("--out is required (or --series)")
			}
			if len(args) == 0 {
				return nil, errors.New("no INPUT given")
			}
			log, err := proc.logs.logger(out.Stderr)
			if err != nil {
				return nil, err
			}
			if err := errors.Join(conn.Check(), qc.Check(), proc.met.check(), batch.check()); err != nil {
				return nil, err
			}
			if conn.URL == "" && qc.Replicas > 1 {
				return nil, fmt.Errorf("--replicas %d needs --nats naming a JetStream cluster: the embedded server is a single server", qc.Replicas)
			}
			cfg.NATSURL, cfg.Conn = conn.URL, conn
			cfg.Inputs, cfg.Params, cfg.Queue, cfg.Log = args, p, qc, log
			if err := cfg.Check(); err != nil {
				return nil, err
			}
			if cfg.Faults, err = faults.Parse(os.Getenv(faults.EnvVar), log); err != nil {
				return nil, fmt.Errorf("$%s: %w", faults.EnvVar, err)
			}
			switch {
			case *quiet:
			case proc.logs.format == "json": // every stderr line a JSON object
				cfg.ProgressEvents = true
			default:
				cfg.Progress, cfg.Live = out.Stderr, isTerminal(out.Stderr)
			}
			return func(ctx context.Context) (code int) {
				adopt(log, out.Stderr)
				defer proc.logs.catchPanic(log, &code)
				m, stop, code, err := proc.start(log)
				if err != nil {
					log.Error("job not started", "err", err)
					if !compare && code != 2 { // 2: a usage error, said on stderr
						writeSummary(out.Stdout, log, newSummary(cfg.Out, code, nil, err))
					}
					return code
				}
				defer stop()
				if m != nil {
					cfg.Tasks, cfg.Stages = m, m
				}
				if err := ser.resolve(ctx, &cfg, log); err != nil {
					log.Error("job not started", "err", err)
					writeSummary(out.Stdout, log, newSummary(cfg.Out, 1, nil, err))
					return 1
				}
				if compare {
					return runCompare(ctx, cfg, out)
				}
				return runJob(ctx, cfg, out, batch)
			}, nil
		}
	}
}

// runCompare runs the job with each method and prints the comparison.
func runCompare(ctx context.Context, cfg control.Config, out Streams) int {
	cmp, err := control.Compare(ctx, cfg)
	if err != nil {
		cfg.Log.Error("comparison failed", "err", err)
		return 1
	}
	if err := control.WriteComparison(out.Stdout, cmp); err != nil {
		return 1
	}
	return 0
}

// runJob runs the job, logs its outcome, reports it to Prometheus if
// asked to (batch) and writes its summary on stdout.
func runJob(ctx context.Context, cfg control.Config, out Streams, batch batchFlags) int {
	log := cfg.Log
	man, err := control.Run(ctx, cfg)
	// Reported also after a signal stopped the job (within its own bound).
	reportCtx := context.WithoutCancel(ctx)
	if err != nil {
		log.Error("job failed", "err", err)
		code := 1
		switch {
		case errors.Is(err, control.ErrComplete), errors.Is(err, kept.ErrNotEmpty):
			code = 3
		case errors.Is(err, control.ErrJobBusy):
			code = 5
		default:
			// Exits 3 and 5 ran no job: nothing to report.
			batch.report(reportCtx, log, nil, time.Now())
		}
		writeSummary(out.Stdout, log, newSummary(cfg.Out, code, nil, err))
		return code
	}
	batch.report(reportCtx, log, man, man.Finished)
	c := man.Counts
	attrs := []any{"out", cfg.Out, "docs", c.Docs, "rejected", c.Rejected, "empty", c.Empty,
		"candidate_pairs_checked", c.UniquePairs, "pairs", c.Pairs, "exact_groups", c.ExactGroups, "clusters", c.Clusters,
		"duplicates", c.Duplicates, "exact_duplicates", c.ExactDups,
		"seconds", fmt.Sprintf("%.2f", man.Seconds),
		"MB/s", fmt.Sprintf("%.1f", float64(c.InputBytes)/1e6/max(man.Seconds, 1e-9)),
		"peak_rss_mib", fmt.Sprintf("%.0f", procstat.PeakRSSMiB())}
	code := 0
	switch {
	case man.Status != manifest.StatusPartial:
		log.Info("job complete", attrs...)
	case cfg.AllowPartial:
		code = 4
		log.Warn("job partial, accepted with --allow-partial: the chunks of failed map tasks are missing (_PARTIAL, not _SUCCESS)",
			append(attrs, "failed", len(man.Failures))...)
	default:
		code = 4
		log.Warn("job partial: the chunks of failed map tasks are missing and there is no _SUCCESS; run the same command again to retry them",
			append(attrs, "failed", len(man.Failures))...)
	}
	writeSummary(out.Stdout, log, newSummary(cfg.Out, code, man, nil))
	return code
}

// paramsSetup registers the flags of `coordinator params` and returns its
// run function, which prints the banding plan (and draws the S-curve).
func paramsSetup(fs *flag.FlagSet) Prepare {
	p := control.DefaultParams()
	p.RegisterPlanFlags(fs)
	svg := fs.String("svg", "", "also draw the S-curve into this SVG file (MinHash)")
	also := fs.String("also", "", "more (b, r) curves to draw for comparison, e.g. 20x5,14x8")
	return func(args []string, out Streams) (Run, error) {
		if len(args) > 0 {
			return nil, fmt.Errorf("no arguments, not %q", args)
		}
		if err := p.Resolve(); err != nil {
			return nil, err
		}
		if *svg != "" && p.Method != job.MethodMinHash {
			return nil, fmt.Errorf("--svg draws the MinHash S-curve; it does not go with --method %s", p.Method)
		}
		curves := []bands.Params{p.BandParams()}
		if *svg != "" {
			for _, br := range strings.FieldsFunc(*also, func(r rune) bool { return r == ',' }) {
				var b, r int
				if _, err := fmt.Sscanf(br, "%dx%d", &b, &r); err != nil || b < 1 || r < 1 {
					return nil, fmt.Errorf("--also %q: want BxR, e.g. 20x5", br)
				}
				curves = append(curves, bands.Params{Bands: b, Rows: r})
			}
		}
		return func(context.Context) int {
			if err := control.WritePlanReport(out.Stdout, p); err != nil {
				fmt.Fprintln(out.Stderr, "coordinator params:", err)
				return 1
			}
			if *svg == "" {
				return 0
			}
			title := fmt.Sprintf("P(candidate) at threshold %.2f, K=%d", p.Threshold, p.K)
			if err := os.WriteFile(*svg, report.SCurveSVG(curves, p.Threshold, title), 0o644); err != nil {
				fmt.Fprintln(out.Stderr, "coordinator params:", err)
				return 1
			}
			return 0
		}, nil
	}
}

// listFlag is a flag that may be given several times; its environment
// variable holds its values separated by commas.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

// Set adds a value (or, from the environment, several).
func (l *listFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}
