package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/redact"
	"github.com/neardup/neardup/internal/report"
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
	// wholeClusterEdges, if set, replaces the bound of the edges of a job
	// whose cluster stage runs as one task (stage.Job.WholeEdges; tests).
	wholeClusterEdges int64
	// stopAfterMarker makes Run return once the job's marker (_SUCCESS
	// or _PARTIAL) is written, before the work area is removed, as a
	// process killed there would stop (tests).
	stopAfterMarker bool
}

// ErrJobBusy is returned when another coordinator is running the job: it
// holds the output's lock or the job's lease.
var ErrJobBusy = queue.ErrJobBusy

// ErrDiskFull is returned when the disk of the output or of the embedded
// store stayed full for Config.DiskFullTimeout.
var ErrDiskFull = errors.New("disk full")

// ErrComplete is returned when the output already holds a complete job
// (Config.Overwrite replaces it).
var ErrComplete = errors.New("output already holds a complete job (pass --overwrite to replace it)")

// DefaultDiskFullTimeout is how long a job waits for a full disk unless
// told otherwise (Config.DiskFullTimeout).
const DefaultDiskFullTimeout = time.Minute

// Run runs a job to completion and returns its manifest. When interrupted
// it returns ctx's error and leaves the job resumable: the same command
// picks it up where it stopped.
func Run(ctx context.Context, cfg Config) (*manifest.Manifest, error) {
	started := time.Now()
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Everything is checked before anything in the output is touched.
	cc, err := checkConfig(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	defer closeEarlier(cc.earlier)
	params, skipped := cc.params, cc.skipped
	for _, sk := range skipped {
		switch {
		case sk.Rejected:
			log.Warn("input file rejected: not read, listed in rejects/", "path", sk.Path, "reason", sk.Reason)
			continue
		case sk.Dir:
			log.Warn("input directory passed over: its files are not read", "path", sk.Path, "reason", sk.Reason)
			continue
		}
		log.Warn("input file skipped", "path", sk.Path, "reason", sk.Reason)
	}
	st, unlock, err := openOutput(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	defer unlock()
	spec, plan, resumed, err := loadOrPlan(ctx, st, cfg.Job, cc)
	if err != nil {
		return nil, err
	}
	q, open, srv, stopNATS, err := connect(ctx, cfg, st, log)
	if err != nil {
		return nil, err
	}
	stop := sync.OnceFunc(stopNATS)
	defer stop()
	life := randomHex(4)
	host, _ := os.Hostname()
	holder := queue.Lease{Holder: fmt.Sprintf("coordinator %s on %s (pid %d)", life, host, os.Getpid()), Out: st.Root()}
	// Losing the lease (another coordinator took the job while this one
	// could not reach the server) stops this run: its cause is ErrJobBusy.
	ctx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	state, lease, err := jobState(ctx, q, spec, holder, cfg.Overwrite, log, stopRun)
	// The watchers stop before the embedded server does: a server shut
	// down at the end of the job is not a store that turned JetStream off.
	watchCtx, cancelWatch := context.WithCancel(ctx)
	var watchers sync.WaitGroup
	stopWatching := func() { cancelWatch(); watchers.Wait() }
	defer stopWatching()
	if err == nil {
		var disks []string
		if st.Local() {
			disks = append(disks, st.Root())
		}
		if srv != nil {
			disks = append(disks, natsStore(cfg, st))
			watchers.Go(func() { watchJetStream(watchCtx, srv, lease.Unrefreshed, cfg.DiskFullTimeout, log, stopRun) })
		} else {
			watchers.Go(func() { watchStore(watchCtx, state, lease, cfg.DiskFullTimeout, log, stopRun) })
		}
		free := cfg.freeSpace
		if free == nil {
			free = freeSpace
		}
		watchers.Go(func() { watchDisks(watchCtx, disks, cfg.DiskFullTimeout, free, stopRun) })
	}
	if err != nil {
		return nil, err
	}
	defer lease.Release()
	jobName := spec.Job
	log.Info("job planned", "job", jobName, "epoch", spec.Epoch, "resumed", resumed, "inputs", len(plan.Inputs),
		"chunks", len(plan.Chunks), "bands", params.Bands, "rows", params.Rows, "partitions", params.Partitions)
	stopWorkers := func() {}
	if cfg.NATSURL == "" && cfg.Workers > 0 {
		if stopWorkers, err = startWorkers(ctx, cfg, open, jobRoots(st, plan, spec), log); err != nil {
			return nil, err
		}
		defer stopWorkers()
	}

	c := &coordinator{cfg: cfg, log: log, st: st, q: q, state: state, reset: state, lease: lease, spec: spec, plan: plan,
		earlier: cc.earlier, fs: mounted(st, cc.earlier),
		prog: newProgress(cfg.Progress, cfg.Live, cfg.progressEvents(log)), life: life,
		idle: idleWatch{after: cfg.NoWorkerWarning, src: q, nats: workerURL(cfg, srv), log: log}}
	man, err := c.execute(ctx, started)
	if err != nil {
		return nil, failure(ctx, err, lease)
	}
	lease.Release()
	if cause := context.Cause(ctx); errors.Is(cause, ErrJobBusy) {
		// The output is complete, but the job's state is another
		// coordinator's now: not ours to delete.
		log.Warn("the coordinator lease was lost at the end of the job; its state is left to the new holder", "err", cause)
		return man, nil
	}
	if man.Status == manifest.StatusPartial && !cfg.AllowPartial {
		// Kept for the rerun that retries the failed chunks.
		log.Warn("the job is partial: its failed map tasks are retried when the same command runs again",
			"failed", len(man.Failures), "out", st.Root())
		return man, nil
	}
	if !cfg.KeepWork {
		if cfg.stopAfterMarker {
			return man, errStoppedAfterMarker
		}
		if err := q.DeleteState(context.WithoutCancel(ctx), jobName); err != nil {
			log.Warn("could not delete the job's state bucket", "err", err)
		}
		stopWorkers()
		stopWatching()
		stop()
		// What goes is listed in the work area (job.WorkDoneFile,
		// written before _SUCCESS): the index of a job without one, the
		// embedded store of an object-store job (in the user's cache),
		// then the work area. A run stopped before the end leaves them
		// to the next command (openOutput).
		if _, err := removeDoneWork(context.WithoutCancel(ctx), st); err != nil {
			log.Warn("could not remove the work area", "err", err)
		}
	}
	return man, nil
}

// errStoppedAfterMarker is what Run returns when Config.stopAfterMarker
// stopped it (tests).
var errStoppedAfterMarker = errors.New("stopped after the job's marker, before removing its work area (test)")

// workerURL is the NATS URL outside workers connect to, without its
// password: --nats, or the embedded server's with --listen; "" when only
// in-process workers can take tasks.
func workerURL(cfg Config, srv *queue.Embedded) string {
	switch {
	case cfg.NATSURL != "":
		return redact.URL(cfg.NATSURL)
	case srv != nil && cfg.Listen != "":
		return reachableURL(redact.URL(srv.URL()), os.Hostname)
	}
	return ""
}

// reachableURL replaces an unspecified listening address (0.0.0.0, ::)
// in the URL u with this machine's host name, which other machines can
// dial; u is kept when it names a host or the name is not known.
func reachableURL(u string, hostname func() (string, error)) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	if ip := net.ParseIP(p.Hostname()); ip == nil || !ip.IsUnspecified() {
		return u
	}
	h, err := hostname()
	if err != nil || h == "" {
		return u
	}
	if port := p.Port(); port != "" {
		p.Host = net.JoinHostPort(h, port)
	} else {
		p.Host = h
	}
	return p.String()
}

// progressEvents is the logger progress events go to, if any.
func (cfg Config) progressEvents(log *slog.Logger) *slog.Logger {
	if !cfg.ProgressEvents {
		return nil
	}
	return log
}

// Check reports the errors of cfg that show without reading the inputs,
// opening the output or reaching a server: a bad parameter, no workers, a
// bad job name. Run checks them first.
func (cfg Config) Check() error {
	if cfg.NATSURL == "" && cfg.Workers < 1 && cfg.Listen == "" {
		return errors.New("no workers: an embedded job needs --workers >= 1, or --listen for outside workers")
	}
	if cfg.Job != "" && !validJob(cfg.Job) {
		return fmt.Errorf("job name %q: use letters, digits, - and _", cfg.Job)
	}
	params := cfg.Params // Resolve fills in the plan: not cfg's business here
	return params.Resolve()
}

// checked is a configuration checked and resolved by checkConfig.
type checked struct {
	params  job.Params
	derived job.Derived // of the earlier jobs
	inputs  []job.Input // absolute paths
	skipped []job.Skipped
	earlier []earlierJob // --against, open: close them
}

// checkConfig resolves the parameters and the inputs (as absolute paths),
// with the files found under them that are skipped, opens the indexes of
// the earlier jobs to match against, and checks the rest of the
// configuration.
func checkConfig(ctx context.Context, cfg Config, log *slog.Logger) (*checked, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	params := cfg.Params
	auto := params.Partitions == 0
	earlier, err := openEarlier(ctx, cfg.Out, cfg.Against, &params, params.Bands != 0 || params.Rows != 0, !auto, log)
	if err != nil {
		return nil, err
	}
	c := &checked{earlier: earlier}
	fail := func(err error) (*checked, error) {
		closeEarlier(earlier)
		return nil, err
	}
	if err := params.Resolve(); err != nil {
		return fail(err)
	}
	c.derived.Against, c.derived.FirstChunk = againstList(earlier)
	inputs, skipped, err := job.ExpandInputs(ctx, cfg.Inputs, job.InputOptions{Format: params.InputKind(), Strict: params.Strict, Exclude: cfg.notInputs()})
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
		params.Gather = job.AutoGather(inputs, storage.IsURL(cfg.Out))
	}
	for i := range inputs {
		inputs[i].Path = storage.AbsLocation(inputs[i].Path)
	}
	for i := range skipped {
		skipped[i].Path = storage.AbsLocation(skipped[i].Path)
	}
	c.params, c.inputs, c.skipped = params, inputs, skipped
	return c, nil
}

// notInputs are the directories whose files are never inputs, wherever
// an input directory holds them, with why: the job's output (its work
// area in it), the embedded server's store, the earlier jobs' outputs.
// (Any other directory holding a job's output is found by its marker
// files: see job.ExpandInputs.)
func (cfg Config) notInputs() map[string]string {
	ex := map[string]string{cfg.Out: "the job's output directory (--out)"}
	if cfg.NATSStore != "" {
		ex[cfg.NATSStore] = "the embedded NATS server's store (--nats-store)"
	}
	for _, a := range cfg.Against {
		ex[a] = "an earlier job's output (--against)"
	}
	return ex
}

// openOutput opens the output directory, takes its lock (one coordinator
// per output, released by the system if this process dies), refuses a
// complete job (removing the work area a run stopped after finishing it
// left), and clears the outputs under --overwrite.
func openOutput(ctx context.Context, cfg Config, log *slog.Logger) (*storage.Dir, func(), error) {
	st, err := storage.Open(ctx, cfg.Out)
	if err != nil {
		return nil, nil, err
	}
	st.Fsync = cfg.Params.Fsync
	unlock, err := st.Lock(job.LockFile)
	if err != nil {
		if errors.Is(err, storage.ErrLocked) {
			return nil, nil, fmt.Errorf("%w: %s is in use by another coordinator", ErrJobBusy, st.Root())
		}
		return nil, nil, err
	}
	for _, marker := range []string{job.SuccessFile, job.PartialFile} {
		if f, err := st.Open(ctx, marker); err == nil && !cfg.Overwrite {
			f.Close()
			cleanStaleWork(ctx, st, log)
			unlock()
			return nil, nil, fmt.Errorf("%s (%s): %w", st.Root(), marker, ErrComplete)
		}
	}
	if cfg.Overwrite {
		for _, name := range outputNames() {
			if err := st.Remove(ctx, name); err != nil {
				unlock()
				return nil, nil, err
			}
		}
	}
	return st, unlock, nil
}

// startWorkers runs cfg.Workers in-process worker slots on their own
// connection to the embedded server. stop cancels them (their running
// tasks are handed back) and waits for them; an interrupt of ctx does the
// same at once.
func startWorkers(ctx context.Context, cfg Config, open func(string) (*queue.Queue, error), roots []string, log *slog.Logger) (stop func(), err error) {
	dr, err := jobDataRoots(roots)
	if err != nil {
		return nil, err
	}
	wq, err := open("neardup-worker")
	if err != nil {
		return nil, err
	}
	w := NewWorker(wq, cfg.Workers, log.With("role", "worker"))
	if cfg.sideResultBytes > 0 {
		w.sideResultBytes = cfg.sideResultBytes
	}
	w.InjectFaults(cfg.Faults)
	w.Observe(cfg.Tasks)
	w.RestrictTo(dr)
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.Run(wctx) }()
	go func() {
		select {
		case <-ctx.Done():
			cancel()
		case <-wctx.Done():
		}
	}()
	return sync.OnceFunc(func() { cancel(); wg.Wait(); wq.Close() }), nil
}

// jobRoots are the paths an in-process worker of the job may touch: its
// output directory and its input files (those still there: a missing one
// fails its map task anyway).
func jobRoots(st *storage.Dir, plan *job.Plan, spec *job.Spec) []string {
	roots := []string{st.Root()}
	for _, a := range spec.Against {
		roots = append(roots, a.Out)
	}
	for _, in := range plan.Inputs {
		roots = append(roots, in.Path)
	}
	return roots
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

// loadOrPlan resumes the job found in the work area when it has the same
// parameters and inputs, and plans a new one otherwise. jobName is the
// name asked for, "" for the one derived from the output's location when
// the job was planned (kept, so that a moved output resumes). The spec on
// disk holds the output as "." (the directory it is in); the spec returned
// holds its absolute path, the one workers are told.
func loadOrPlan(ctx context.Context, st *storage.Dir, jobName string, cc *checked) (*job.Spec, *job.Plan, bool, error) {
	params, inputs := cc.params, cc.inputs
	var old job.Spec
	err := readJSON(ctx, st, job.SpecFile, &old)
	if err == nil {
		var oldPlan job.Plan
		if err := readJSON(ctx, st, job.PlanFile, &oldPlan); err != nil {
			return nil, nil, false, fmt.Errorf("%s holds an unfinished job whose plan cannot be read (pass --overwrite to start again): %w", st.Root(), err)
		}
		if diff := specDiff(old, oldPlan, jobName, params, cc.derived, inputs); diff != "" {
			return nil, nil, false, fmt.Errorf("%s holds an unfinished job with %s: "+
				"rerun it with the same ones to resume, or pass --overwrite to start again", st.Root(), diff)
		}
		old.Out = st.Root()
		return &old, &oldPlan, true, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, false, err
	}
	plan, err := job.MakePlan(ctx, inputs, params.ChunkBytes)
	if err != nil {
		return nil, nil, false, err
	}
	plan.Skipped = cc.skipped
	plan.FirstChunk = cc.derived.FirstChunk
	for i := range plan.Chunks {
		plan.Chunks[i].Index += plan.FirstChunk
	}
	if jobName == "" {
		jobName = "j" + strconv.FormatUint(xxhash.Sum64String(st.Root()), 16)
	}
	spec := &job.Spec{Job: jobName, Epoch: randomHex(8), Out: ".", Params: params, Derived: cc.derived, Format: job.SpecFormat}
	if err := writeJSON(ctx, st, job.PlanFile, plan); err != nil {
		return nil, nil, false, err
	}
	if err := writeJSON(ctx, st, job.SpecFile, spec); err != nil {
		return nil, nil, false, err
	}
	spec.Out = st.Root()
	return spec, &plan, false, nil
}

// specDiff names what differs between an unfinished job and the one asked
// for, "" when they are the same job.
func specDiff(old job.Spec, oldPlan job.Plan, jobName string, params job.Params, derived job.Derived, inputs []job.Input) string {
	if jobName != "" && old.Job != jobName {
		return fmt.Sprintf("another job name (%q, not %q)", old.Job, jobName)
	}
	if !reflect.DeepEqual(old.Params, params) {
		return "other parameters: " + strings.Join(fieldDiff(reflect.ValueOf(old.Params), reflect.ValueOf(params)), ", ")
	}
	if !reflect.DeepEqual(old.Derived, derived) {
		return "other earlier jobs (--against): " + strings.Join(fieldDiff(reflect.ValueOf(old.Derived), reflect.ValueOf(derived)), ", ")
	}
	if !reflect.DeepEqual(oldPlan.Inputs, inputs) {
		for i := range max(len(oldPlan.Inputs), len(inputs)) {
			switch {
			case i >= len(inputs):
				return fmt.Sprintf("other inputs: %s is no longer given", oldPlan.Inputs[i].Path)
			case i >= len(oldPlan.Inputs):
				return fmt.Sprintf("other inputs: %s was not an input", inputs[i].Path)
			case oldPlan.Inputs[i] != inputs[i]:
				return fmt.Sprintf("other inputs: %+v, now %+v", oldPlan.Inputs[i], inputs[i])
			}
		}
	}
	return ""
}

// fieldDiff names the fields of the structs a and b (of one type) that
// differ, as "Name OLD (now NEW)", looking into embedded structs (the
// groups of job.Params) for the fields that differ in them.
func fieldDiff(a, b reflect.Value) []string {
	var fields []string
	for i := range a.NumField() {
		fa, fb := a.Field(i), b.Field(i)
		switch f := a.Type().Field(i); {
		case reflect.DeepEqual(fa.Interface(), fb.Interface()):
		case f.Anonymous && f.Type.Kind() == reflect.Struct:
			fields = append(fields, fieldDiff(fa, fb)...)
		default:
			fields = append(fields, fmt.Sprintf("%s %v (now %v)", f.Name, fa.Interface(), fb.Interface()))
		}
	}
	return fields
}

// connect reaches the NATS server, starting an embedded one when no URL is
// given, and opens the coordinator's queue. open opens more queues on the
// embedded server (for in-process workers); stop releases everything.
func connect(ctx context.Context, cfg Config, st *storage.Dir, log *slog.Logger) (q *queue.Queue, open func(string) (*queue.Queue, error), srv *queue.Embedded, stop func(), err error) {
	if cfg.NATSURL != "" {
		cc := cfg.Conn
		cc.URL = cfg.NATSURL
		q, err := queue.Connect(ctx, cc, "neardup-coordinator", cfg.Queue, log)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		return q, nil, nil, q.Close, nil
	}
	srv, err = queue.StartEmbedded(natsStore(cfg, st), cfg.Listen)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if cfg.Listen != "" {
		log.Info("embedded NATS server listening", "url", redact.URL(srv.URL()))
	}
	open = func(name string) (*queue.Queue, error) { return srv.Open(ctx, name, cfg.Queue) }
	if q, err = open("neardup-coordinator"); err != nil {
		srv.Shutdown()
		return nil, nil, nil, nil, err
	}
	return q, open, srv, func() { q.Close(); srv.Shutdown() }, nil
}

// natsStore is the embedded server's store directory: --nats-store, or
// the job's work area when the output is local. An output in object
// storage cannot hold a JetStream store: the store then lives in the
// user's cache directory, named after the output, so that the same
// command run again on this machine resumes.
func natsStore(cfg Config, st *storage.Dir) string {
	if cfg.NATSStore != "" {
		return cfg.NATSStore
	}
	if st.Local() {
		return st.Path(job.NATSDir)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "neardup", "nats", strconv.FormatUint(xxhash.Sum64String(st.Root()), 16))
}

// jobState opens the job's state and takes the coordinator lease in it,
// then clears the state when it belongs to another run. The lease comes
// first: a running job's state is never cleared.
// failure is the reason to give for a run that failed with err. Tasks
// fail when another coordinator took the job (they belong to an epoch
// that is over), and the run's context is cancelled, with its cause, when
// the lease is lost, a disk stays full or the NATS server's store does
// not write: those causes are the reason,
// whichever was seen first. The lease goroutine may find the lease lost
// while the lease is being confirmed here, cancelling the confirmation,
// so the cause is read after it.
func failure(ctx context.Context, err error, lease confirmer) error {
	if ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		cerr := lease.Confirm(cctx)
		cancel()
		if errors.Is(cerr, ErrJobBusy) {
			return cerr
		}
	}
	if cause := context.Cause(ctx); errors.Is(cause, ErrJobBusy) || errors.Is(cause, ErrDiskFull) || errors.Is(cause, queue.ErrStoreFailed) {
		return cause
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted; run the same command again to resume: %w", ctx.Err())
	}
	return err
}

func jobState(ctx context.Context, q *queue.Queue, spec *job.Spec, holder queue.Lease, overwrite bool, log *slog.Logger, lost func(error)) (*queue.State, *queue.Held, error) {
	state, err := q.State(ctx, spec.Job)
	if err != nil {
		return nil, nil, err
	}
	if !overwrite {
		if err := othersJob(ctx, state, spec); err != nil {
			return nil, nil, err
		}
	}
	lease, err := state.TakeLease(ctx, holder, log, lost)
	if err != nil {
		return nil, nil, err
	}
	if v, err := state.Get(ctx, specKey); err == nil {
		var old job.Spec
		if json.Unmarshal(v, &old) == nil && old.Epoch == spec.Epoch {
			// The same epoch, resumed: keep its state, but tell workers
			// where the output is now (it may have moved).
			return state, lease, putSpec(ctx, state, spec, lease)
		}
		lease.Release()
		if err := q.DeleteState(ctx, spec.Job); err != nil {
			return nil, nil, err
		}
		if state, err = q.State(ctx, spec.Job); err != nil {
			return nil, nil, err
		}
		if lease, err = state.TakeLease(ctx, holder, log, lost); err != nil {
			return nil, nil, err
		}
	} else if !errors.Is(err, queue.ErrNotFound) {
		lease.Release()
		return nil, nil, fmt.Errorf("job %s: %w", spec.Job, err)
	}
	return state, lease, putSpec(ctx, state, spec, lease)
}

// othersJob returns an error wrapping ErrJobBusy, naming the holder, when
// the job's state holds an unfinished run of the job that writes another
// output: starting afresh would throw it away, which only --overwrite
// does. (A run of the same output is this output's own earlier run, which
// its lock shows to be over.)
func othersJob(ctx context.Context, state *queue.State, spec *job.Spec) error {
	v, err := state.Get(ctx, specKey)
	if errors.Is(err, queue.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("job %s: %w", spec.Job, err)
	}
	var old job.Spec
	if json.Unmarshal(v, &old) != nil || old.Epoch == spec.Epoch || old.Out == spec.Out {
		return nil
	}
	who := "no coordinator holds it now"
	if l, age, err := state.Lease(ctx); err == nil {
		state := "live"
		if !queue.Live(age) {
			state = "expired"
		}
		who = fmt.Sprintf("its lease is held by %s writing %s (%s: refreshed %s ago)", l.Holder, l.Out, state, age.Round(time.Second))
	}
	return fmt.Errorf("%w: job %s has an unfinished run writing %s (epoch %s); %s. "+
		"Run that command again to resume it, or pass --overwrite to discard it and start this one",
		ErrJobBusy, spec.Job, old.Out, old.Epoch, who)
}

// putSpec stores the spec workers read; on failure it releases the lease.
func putSpec(ctx context.Context, state *queue.State, spec *job.Spec, lease *queue.Held) error {
	data, err := json.Marshal(spec)
	if err == nil {
		err = state.Put(ctx, specKey, data)
	}
	if err != nil {
		lease.Release()
		return fmt.Errorf("job %s: storing spec: %w", spec.Job, err)
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// outputNames are what --overwrite removes.
func outputNames() []string {
	return []string{job.SuccessFile, job.PartialFile, job.ManifestFile, job.ClustersFile, job.DuplicatesFile, job.ExactFile,
		report.HTMLFile, report.PairsFile, report.SCurveFile, report.SimilarityFile, report.ClustersFile, report.StagesFile,
		job.BandsDir, job.CandidatesDir, job.PairsDir, job.DocsDir, job.RejectsDir, job.IndexDir, job.WorkDir}
}
