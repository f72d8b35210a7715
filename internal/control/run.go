package control

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/neardup/neardup/internal/dataroot"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/redact"
	"github.com/neardup/neardup/internal/report"
	"github.com/neardup/neardup/internal/storage"
)

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
	var docs []string
	for _, sk := range skipped {
		switch {
		case sk.Doc:
			docs = append(docs, sk.Path)
			continue
		case sk.Rejected:
			log.Warn("input file rejected: not read, listed in rejects/", "path", sk.Path, "reason", sk.Reason)
			continue
		case sk.Dir:
			log.Warn("input directory passed over: its files are not read", "path", sk.Path, "reason", sk.Reason)
			continue
		}
		log.Warn("input file skipped", "path", sk.Path, "reason", sk.Reason)
	}
	if len(docs) > 0 {
		// A dataset's README.md or LICENSE is no input that was missed.
		log.Info("documentation beside the inputs not read", "files", len(docs), "first", docs[0])
	}
	st, unlock, err := openOutput(ctx, cfg, cc.out, log)
	if err != nil {
		return nil, err
	}
	defer unlock()
	spec, plan, resumed, err := loadOrPlan(ctx, st, cfg.Job, cc)
	if err != nil {
		return nil, err
	}
	keptDir, err := claimKept(ctx, spec, st, cfg.Overwrite)
	if err != nil {
		return nil, err
	}
	if keptDir != nil {
		defer keptDir.Close()
	}
	q, open, srv, stopNATS, err := connect(ctx, cfg, st, log)
	if err != nil {
		return nil, err
	}
	stop := sync.OnceFunc(stopNATS)
	defer stop()
	life := randomHex(4)
	host, _ := os.Hostname()
	holder := queue.Lease{Holder: fmt.Sprintf("coordinator %s on %s (pid %d)", life, host, os.Getpid()), Out: st.Root(), Unlocked: !st.Local()}
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

	c := &coordinator{cfg: cfg, log: log, st: st, kept: keptDir, q: q, state: state, reset: state, lease: lease, spec: spec, plan: plan,
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
		if srv != nil {
			srv.DropConsumer(context.WithoutCancel(ctx)) // the job is over: no 50 ms for its workers' last fetches
		}
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

// claimKept opens the directory of the job's kept corpus, if it writes
// one (kept.Claim): empty, the corpus of this epoch of the job (a resumed
// job), or with overwrite one write-kept wrote; nil when it writes none.
func claimKept(ctx context.Context, spec *job.Spec, st *storage.Dir, overwrite bool) (*storage.Dir, error) {
	if spec.Kept == nil {
		return nil, nil
	}
	dir, err := kept.Claim(ctx, spec.Kept.Dir, kept.Marker{Job: st.Root(), Epoch: spec.Epoch}, overwrite)
	if err != nil {
		return nil, fmt.Errorf("--write-kept: %w", err)
	}
	dir.Fsync = spec.Params.Fsync
	return dir, nil
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

// openOutput opens the output directory, takes its lock (one coordinator
// per output, released by the system if this process dies), refuses a
// complete job (removing the work area a run stopped after finishing it
// left), and clears the outputs under --overwrite.
func openOutput(ctx context.Context, cfg Config, out storage.Location, log *slog.Logger) (*storage.Dir, func(), error) {
	st, err := storage.OpenLocation(ctx, out)
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
	dr, err := dataroot.ForJob(roots)
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
// output directory, its input files (those still there: a missing one
// fails its map task anyway) and its kept corpus's directory.
func jobRoots(st *storage.Dir, plan *job.Plan, spec *job.Spec) []string {
	roots := []string{st.Root()}
	for _, a := range spec.Against {
		roots = append(roots, a.Out)
	}
	for _, in := range plan.Inputs {
		roots = append(roots, in.Path)
	}
	if spec.Kept != nil {
		roots = append(roots, spec.Kept.Dir)
	}
	return roots
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
