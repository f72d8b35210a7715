package control

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/storage"
)

// Config is what a coordinator run is told.
type Config struct {
	Out     string   // output directory
	Inputs  []string // files, directories or globs
	Params  job.Params
	Job     string // job name; default: derived from the output path
	NATSURL string // empty: start an embedded server and in-process workers
	Workers int    // in-process workers when embedded (0: only outside workers, with Listen)
	Listen  string // embedded server's client address (host:port), empty for none
	// NATSStore is the embedded server's store directory; empty for
	// <out>/_work/nats.
	NATSStore string
	// DiskFullTimeout bounds how long the job waits while the disk of the
	// output or of the embedded store is full before it fails, naming the
	// disk, and how long it waits while an outside NATS server answers
	// but does not store the job's state, before it fails naming the
	// server and JetStream's error; 0 does not watch.
	DiskFullTimeout time.Duration
	// freeSpace reads a disk's free bytes (tests replace it).
	freeSpace func(string) (uint64, error)
	Overwrite bool
	KeepWork  bool // keep the work area after success
	// Against lists the outputs of earlier jobs to match against: their
	// documents are never dropped, and a document of this job that is a
	// near-duplicate of one of theirs is dropped in favour of it.
	Against []string
	// WriteKept is where the job writes its kept corpus, in its
	// write-kept stage (package kept): its inputs without their
	// duplicates. A local directory or object-store URL outside the
	// output, the inputs and the earlier jobs; "" for none.
	WriteKept string
	// KeptFormat is what the kept corpus's files are (kept.Formats; ""
	// is kept.FormatAuto).
	KeptFormat string
	// KeptStrip strips the repeated units the paragraph pass found from
	// the kept corpus's documents (--strip-paragraphs, with --paragraphs
	// and --write-kept); nil for none.
	KeptStrip *job.Strip
	// AllowPartial accepts a job whose map tasks failed for good as
	// finished: its output is marked _PARTIAL, not _SUCCESS, and is not
	// resumed. Without it such a job stops with its work area kept, and
	// running it again retries the failed chunks.
	AllowPartial bool
	Queue        queue.Config
	Log          *slog.Logger
	Progress     io.Writer // progress lines; nil for none
	Live         bool      // Progress is a terminal: redraw one line
	// NoWorkerWarning is how long a stage's tasks wait with no worker
	// taking any (none finished, delivered or held) before the job warns,
	// naming the URL workers should connect to, and again every as long
	// while it lasts; 0 never warns.
	NoWorkerWarning time.Duration
	// ProgressEvents reports progress as events on Log (msg "progress"
	// and "stage done", see docs/usage.md) instead of lines on Progress.
	ProgressEvents bool
	Faults         *faults.Set // faults the in-process workers inject (tests only)
	// Tasks hears of the tasks the in-process workers run, Stages of the
	// coordinator's stages (metrics); nil for none.
	Tasks  TaskObserver
	Stages StageObserver

	// Conn is how to reach the server at NATSURL: credentials, TLS and
	// the connect timeout. Its URL is ignored.
	Conn queue.ConnConfig

	// sideResultBytes, if set, replaces the in-process workers'
	// sideResultBytes (tests).
	sideResultBytes int
	// wholeClusterBytes, if set, replaces the bound of what the one task
	// of a job whose cluster stage runs as one task holds
	// (stage.Job.WholeBytes; tests).
	wholeClusterBytes int64
	// stopAfterMarker makes Run return once the job's marker (_SUCCESS
	// or _PARTIAL) is written, before the work area is removed, as a
	// process killed there would stop (tests).
	stopAfterMarker bool
}

// progressEvents is the logger progress events go to, if any.
func (cfg Config) progressEvents(log *slog.Logger) *slog.Logger {
	if !cfg.ProgressEvents {
		return nil
	}
	return log
}

// Check reports the errors of cfg that show without reading the inputs,
// opening the output or reaching a server: a bad parameter or location,
// no workers, a bad job name. Run checks them first.
func (cfg Config) Check() error {
	_, err := cfg.check()
	return err
}

// locations are a job's locations, parsed once (Config.check): the
// output and the earlier jobs' outputs, local ones made absolute.
type locations struct {
	out     storage.Location
	against []storage.Location
	kept    *storage.Location // WriteKept's, nil for none
}

// check checks cfg (see Check) and returns its locations, parsed.
func (cfg Config) check() (locations, error) {
	var locs locations
	if cfg.NATSURL == "" && cfg.Workers < 1 && cfg.Listen == "" {
		return locs, errors.New("no workers: an embedded job needs --workers >= 1, or --listen for outside workers")
	}
	if cfg.Job != "" && !validJob(cfg.Job) {
		return locs, fmt.Errorf("job name %q: use letters, digits, - and _", cfg.Job)
	}
	if cfg.Out == "" {
		return locs, errors.New("no output location (--out)")
	}
	out, err := storage.ParseLocation(cfg.Out)
	if err != nil {
		return locs, fmt.Errorf("--out: %w", err)
	}
	locs.out = out.Abs()
	for _, a := range cfg.Against {
		l, err := storage.ParseLocation(a)
		if err != nil {
			return locs, fmt.Errorf("--against: %w", err)
		}
		locs.against = append(locs.against, l.Abs())
	}
	switch {
	case cfg.WriteKept != "":
		l, err := storage.ParseLocation(cfg.WriteKept)
		if err != nil {
			return locs, fmt.Errorf("--write-kept: %w", err)
		}
		l = l.Abs()
		locs.kept = &l
		if err := kept.CheckFormat(cfg.KeptFormat, nil); err != nil {
			return locs, fmt.Errorf("--kept-format: %w", err)
		}
	case cfg.KeptFormat != "" && cfg.KeptFormat != kept.FormatAuto:
		return locs, errors.New("--kept-format goes with --write-kept")
	}
	switch {
	case cfg.KeptStrip == nil:
	case cfg.WriteKept == "":
		return locs, errors.New("--strip-paragraphs goes with --write-kept")
	case !cfg.Params.Paragraphs:
		return locs, errors.New("--strip-paragraphs needs --paragraphs: the paragraph pass finds the units to strip")
	default:
		if err := kept.CheckStrip(cfg.KeptStrip, cmp.Or(cfg.KeptFormat, kept.FormatAuto)); err != nil {
			return locs, fmt.Errorf("--kept-format: %w", err)
		}
	}
	for _, in := range cfg.Inputs {
		if storage.IsURL(in) {
			if _, err := storage.ParseLocation(in); err != nil {
				return locs, fmt.Errorf("input: %w", err)
			}
		}
	}
	params := cfg.Params        // Check fills in defaults: not cfg's business here
	return locs, params.Check() // checkConfig resolves them, bands and rows too
}

// checked is a configuration checked and resolved by checkConfig.
type checked struct {
	locations
	params  job.Params
	derived job.Derived // of the earlier jobs
	inputs  []job.Input // absolute paths
	skipped []job.Skipped
	earlier []earlierJob    // --against, open: close them
	kept    *job.KeptOutput // --write-kept, nil for none
}

// checkConfig resolves the parameters and the inputs (as absolute paths),
// with the files found under them that are skipped, opens the indexes of
// the earlier jobs to match against, and checks the rest of the
// configuration.
func checkConfig(ctx context.Context, cfg Config, log *slog.Logger) (*checked, error) {
	locs, err := cfg.check()
	if err != nil {
		return nil, err
	}
	params := cfg.Params
	auto := params.Partitions == 0
	earlier, err := openEarlier(ctx, locs.out, locs.against, &params, params.Bands != 0 || params.Rows != 0, !auto, log)
	if err != nil {
		return nil, err
	}
	warnPublished(earlier, params.Keep, log)
	c := &checked{locations: locs, earlier: earlier}
	fail := func(err error) (*checked, error) {
		closeEarlier(earlier)
		return nil, err
	}
	if err := params.Resolve(); err != nil {
		return fail(err)
	}
	c.derived.Against, c.derived.FirstChunk = againstList(earlier)
	inputs, skipped, err := job.ExpandInputs(ctx, cfg.Inputs, job.InputOptions{Format: params.InputKind(), Strict: params.Strict, Exclude: cfg.notInputs(locs)})
	if err != nil {
		return fail(err)
	}
	if auto && len(earlier) == 0 {
		params.Partitions = job.AutoPartitions(inputs)
	}
	if params.ChunkBytes == 0 {
		params.ChunkBytes = job.AutoChunkBytes(inputs)
	}
	if params.Gather == job.GatherAuto {
		params.Gather = job.AutoGather(inputs, !locs.out.Local(), len(earlier) > 0)
	}
	for i := range inputs {
		inputs[i].Path = storage.AbsLocation(inputs[i].Path)
	}
	for i := range skipped {
		skipped[i].Path = storage.AbsLocation(skipped[i].Path)
	}
	c.params, c.inputs, c.skipped = params, inputs, skipped
	if locs.kept != nil {
		if c.kept, err = cfg.keptOutput(locs, inputs); err != nil {
			return fail(err)
		}
	}
	return c, nil
}

// keptOutput is the job's kept corpus, once it is checked: its format
// writes every input (kept.CheckFormat) and its directory is, holds or
// lies under none of the output, the inputs (the files and the INPUTs as
// named), the earlier jobs and the embedded server's store.
func (cfg Config) keptOutput(locs locations, inputs []job.Input) (*job.KeptOutput, error) {
	format := cmp.Or(cfg.KeptFormat, kept.FormatAuto)
	if err := kept.CheckFormat(format, inputs); err != nil {
		return nil, fmt.Errorf("--kept-format %s: %w", format, err)
	}
	var named []string
	for _, in := range cfg.Inputs {
		if !storage.IsURL(in) {
			in = patternDir(in)
		}
		named = append(named, storage.AbsLocation(in))
	}
	places := kept.JobPlaces(locs.out.String(), inputs, named)
	for _, a := range locs.against {
		places = append(places, kept.Place{What: "an earlier job (--against)", Loc: a.String()})
	}
	if cfg.NATSStore != "" {
		places = append(places, kept.Place{What: "the embedded NATS server's store (--nats-store)", Loc: cfg.NATSStore})
	}
	dir := locs.kept.String()
	if err := kept.CheckPlacement(dir, places); err != nil {
		return nil, fmt.Errorf("--write-kept: %w", err)
	}
	return &job.KeptOutput{Dir: dir, Format: format, Strip: cfg.KeptStrip}, nil
}

// notInputs are the directories whose files are never inputs, wherever
// an input directory holds them, with why: the job's output (its work
// area in it), the embedded server's store, the earlier jobs' outputs.
// (Any other directory holding a job's output is found by its marker
// files: see job.ExpandInputs.)
func (cfg Config) notInputs(locs locations) map[string]string {
	ex := map[string]string{locs.out.String(): "the job's output directory (--out)"}
	if cfg.NATSStore != "" {
		ex[cfg.NATSStore] = "the embedded NATS server's store (--nats-store)"
	}
	for _, a := range locs.against {
		ex[a.String()] = "an earlier job's output (--against)"
	}
	return ex
}

func validJob(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// patternDir is the directory that holds whatever a glob pattern
// matches: the pattern up to the element before its first meta
// character; the path itself when it has none.
func patternDir(p string) string {
	i := strings.IndexAny(p, "*?[")
	if i < 0 {
		return p
	}
	return filepath.Dir(p[:i] + "x")
}
