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
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/report"
)

// Config is what a coordinator run is told.
type Config struct {
	Out       string   // output directory
	Inputs    []string // files, directories or globs
	Params    job.Params
	Job       string // job name; default: derived from the output path
	NATSURL   string // empty: start an embedded server and in-process workers
	Workers   int    // in-process workers when embedded (0: only outside workers, with Listen)
	Listen    string // embedded server's client address (host:port), empty for none
	Overwrite bool
	KeepWork  bool // keep the work area after success
	Queue     queue.Config
	Log       *slog.Logger
	Progress  io.Writer   // progress lines; nil for none
	Live      bool        // Progress is a terminal: redraw one line
	Faults    *faults.Set // faults the in-process workers inject (tests only)
}

// ErrComplete is returned when the output already holds a complete job.
var ErrComplete = errors.New("output already holds a complete job (pass --overwrite to replace it)")

// Run runs a job to completion and returns its manifest. When interrupted
// it returns ctx's error and leaves the job resumable: the same command
// picks it up where it stopped.
func Run(ctx context.Context, cfg Config) (*Manifest, error) {
	started := time.Now()
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Everything is checked before anything in the output is touched.
	params, inputs, err := checkConfig(cfg)
	if err != nil {
		return nil, err
	}
	st, unlock, err := openOutput(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer unlock()
	jobName := cfg.Job
	if jobName == "" {
		jobName = "j" + strconv.FormatUint(xxhash.Sum64String(st.Root()), 16)
	}
	spec, plan, resumed, err := loadOrPlan(ctx, st, jobName, params, inputs)
	if err != nil {
		return nil, err
	}
	nc, dial, stopNATS, err := connect(ctx, cfg, st, log)
	if err != nil {
		return nil, err
	}
	stop := sync.OnceFunc(stopNATS)
	defer stop()
	q, err := queue.Open(ctx, nc, cfg.Queue)
	if err != nil {
		return nil, err
	}
	life := randomHex(4)
	host, _ := os.Hostname()
	holder := lease{Holder: fmt.Sprintf("coordinator %s on %s (pid %d)", life, host, os.Getpid()), Out: st.Root()}
	kv, release, err := jobBucket(ctx, q, spec, holder, log)
	if err != nil {
		return nil, err
	}
	release = sync.OnceFunc(release)
	defer release()
	log.Info("job planned", "job", jobName, "run", spec.Run, "resumed", resumed, "inputs", len(plan.Inputs),
		"chunks", len(plan.Chunks), "bands", params.Bands, "rows", params.Rows, "partitions", params.Partitions)
	stopWorkers := func() {}
	if cfg.NATSURL == "" && cfg.Workers > 0 {
		if stopWorkers, err = startWorkers(ctx, cfg, dial, log); err != nil {
			return nil, err
		}
		defer stopWorkers()
	}

	c := &coordinator{cfg: cfg, log: log, st: st, q: q, nc: nc, kv: kv, spec: spec, plan: plan,
		prog: newProgress(cfg.Progress, cfg.Live), life: life}
	man, err := c.run(ctx, started)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("interrupted; run the same command again to resume: %w", ctx.Err())
		}
		return nil, err
	}
	release()
	if !cfg.KeepWork {
		if err := q.DeleteBucket(context.WithoutCancel(ctx), jobName); err != nil {
			log.Warn("could not delete the job's state bucket", "err", err)
		}
		stopWorkers()
		stop()
		if err := st.Remove(context.WithoutCancel(ctx), job.WorkDir); err != nil {
			log.Warn("could not remove the work area", "err", err)
		}
	}
	return man, nil
}

// checkConfig resolves the parameters and the inputs (as absolute paths)
// and checks the rest of the configuration.
func checkConfig(cfg Config) (job.Params, []job.Input, error) {
	if cfg.NATSURL == "" && cfg.Workers < 1 && cfg.Listen == "" {
		return job.Params{}, nil, errors.New("no workers: an embedded job needs --workers >= 1, or --listen for outside workers")
	}
	if cfg.Job != "" && !validJob(cfg.Job) {
		return job.Params{}, nil, fmt.Errorf("job name %q: use letters, digits, - and _", cfg.Job)
	}
	params := cfg.Params
	if err := params.Resolve(); err != nil {
		return job.Params{}, nil, err
	}
	inputs, err := job.ExpandInputs(cfg.Inputs)
	if err != nil {
		return job.Params{}, nil, err
	}
	for i := range inputs {
		if abs, err := filepath.Abs(inputs[i].Path); err == nil {
			inputs[i].Path = abs
		}
	}
	return params, inputs, nil
}

// openOutput opens the output directory, takes its lock (one coordinator
// per output, released by the system if this process dies), refuses a
// complete job, and clears the outputs under --overwrite.
func openOutput(ctx context.Context, cfg Config) (*storage.Dir, func(), error) {
	st, err := storage.NewDir(cfg.Out)
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
	if _, err := st.Open(ctx, job.SuccessFile); err == nil && !cfg.Overwrite {
		unlock()
		return nil, nil, fmt.Errorf("%s: %w", st.Root(), ErrComplete)
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
func startWorkers(ctx context.Context, cfg Config, dial func(string) (*nats.Conn, error), log *slog.Logger) (stop func(), err error) {
	wnc, err := dial("neardup-worker")
	if err != nil {
		return nil, err
	}
	wq, err := queue.Open(ctx, wnc, cfg.Queue)
	if err != nil {
		wnc.Close()
		return nil, err
	}
	w := NewWorker(wq, cfg.Workers, log.With("role", "worker"))
	w.InjectFaults(cfg.Faults)
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
	return sync.OnceFunc(func() { cancel(); wg.Wait(); wnc.Close() }), nil
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
// parameters and inputs, and plans a new one otherwise.
func loadOrPlan(ctx context.Context, st *storage.Dir, jobName string, params job.Params, inputs []job.Input) (*job.Spec, *job.Plan, bool, error) {
	var old job.Spec
	err := readJSON(ctx, st, job.SpecFile, &old)
	if err == nil {
		var oldPlan job.Plan
		if perr := readJSON(ctx, st, job.PlanFile, &oldPlan); perr == nil &&
			reflect.DeepEqual(old.Params, params) && reflect.DeepEqual(oldPlan.Inputs, inputs) && old.Job == jobName {
			return &old, &oldPlan, true, nil
		}
		return nil, nil, false, fmt.Errorf("%s holds an unfinished job with other parameters or inputs: "+
			"rerun it with the same ones to resume, or pass --overwrite to start again", st.Root())
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, false, err
	}
	plan, err := job.MakePlan(inputs, params.ChunkBytes)
	if err != nil {
		return nil, nil, false, err
	}
	spec := &job.Spec{Job: jobName, Run: randomHex(8), Out: st.Root(), Params: params}
	if err := writeJSON(ctx, st, job.PlanFile, plan); err != nil {
		return nil, nil, false, err
	}
	if err := writeJSON(ctx, st, job.SpecFile, spec); err != nil {
		return nil, nil, false, err
	}
	return spec, &plan, false, nil
}

// connect reaches the NATS server, starting an embedded one when no URL is
// given. dial opens more connections to the embedded server; stop releases
// everything.
func connect(ctx context.Context, cfg Config, st *storage.Dir, log *slog.Logger) (nc *nats.Conn, dial func(string) (*nats.Conn, error), stop func(), err error) {
	if cfg.NATSURL != "" {
		nc, err := queue.Dial(cfg.NATSURL, "neardup-coordinator")
		if err != nil {
			return nil, nil, nil, err
		}
		return nc, nil, nc.Close, nil
	}
	srv, err := queue.StartEmbedded(st.Path(job.NATSDir), cfg.Listen)
	if err != nil {
		return nil, nil, nil, err
	}
	if cfg.Listen != "" {
		log.Info("embedded NATS server listening", "url", srv.URL())
	}
	nc, err = srv.Connect("neardup-coordinator")
	if err != nil {
		srv.Shutdown()
		return nil, nil, nil, err
	}
	return nc, srv.Connect, func() { nc.Close(); srv.Shutdown() }, nil
}

// jobBucket opens the job's state bucket and takes the coordinator lease
// in it, then clears the bucket when it holds the state of another run.
// The lease comes first: a running job's state is never cleared.
func jobBucket(ctx context.Context, q *queue.Queue, spec *job.Spec, holder lease, log *slog.Logger) (jetstream.KeyValue, func(), error) {
	kv, err := q.Bucket(ctx, spec.Job)
	if err != nil {
		return nil, nil, err
	}
	release, err := takeLease(ctx, kv, holder, log)
	if err != nil {
		return nil, nil, err
	}
	if e, err := kv.Get(ctx, specKey); err == nil {
		var old job.Spec
		if json.Unmarshal(e.Value(), &old) == nil && old.Run == spec.Run {
			return kv, release, nil
		}
		release()
		if err := q.DeleteBucket(ctx, spec.Job); err != nil {
			return nil, nil, err
		}
		if kv, err = q.Bucket(ctx, spec.Job); err != nil {
			return nil, nil, err
		}
		if release, err = takeLease(ctx, kv, holder, log); err != nil {
			return nil, nil, err
		}
	} else if !errNotFound(err) {
		release()
		return nil, nil, fmt.Errorf("job %s: %w", spec.Job, err)
	}
	data, err := json.Marshal(spec)
	if err != nil {
		release()
		return nil, nil, err
	}
	if _, err := kv.Put(ctx, specKey, data); err != nil {
		release()
		return nil, nil, fmt.Errorf("job %s: storing spec: %w", spec.Job, err)
	}
	return kv, release, nil
}

type coordinator struct {
	cfg  Config
	log  *slog.Logger
	st   *storage.Dir
	q    *queue.Queue
	nc   *nats.Conn
	kv   jetstream.KeyValue
	spec *job.Spec
	plan *job.Plan
	prog *progress
	life string // random, new for every start of the coordinator
}

// stageOutcome is what one stage produced.
type stageOutcome struct {
	results  map[int][]byte
	failures []Failure
	timing   StageTiming
}

func (c *coordinator) run(ctx context.Context, started time.Time) (*Manifest, error) {
	p := c.spec.Params
	man := newManifest(c.spec, c.plan, started)

	// Map: one task per chunk.
	mapList, err := runStage(ctx, c, StageMap, seq(len(c.plan.Chunks)), job.MapStageFile, man.addMaps,
		func(m job.MapResult) (int64, int64) { return m.Docs, m.InputBytes })
	if err != nil {
		return nil, err
	}
	if len(mapList) == 0 && len(c.plan.Chunks) > 0 {
		return nil, fmt.Errorf("every map task failed; the first: %s", man.Failures[0].Error)
	}

	// Reduce: one task per partition.
	reduceList, err := runStage(ctx, c, StageReduce, seq(p.Partitions), job.ReduceStageFile, man.addReduces, nil)
	if err != nil {
		return nil, err
	}

	// Verify: one task per chunk that has candidate edges.
	chunks := map[int]bool{}
	for _, r := range reduceList {
		for ch := range r.EdgeFiles {
			chunks[ch] = true
		}
	}
	verifyList, err := runStage(ctx, c, StageVerify, slices.Sorted(maps.Keys(chunks)), "", man.addVerifies, nil)
	if err != nil {
		return nil, err
	}

	// Clusters, here in the coordinator.
	t0 := time.Now()
	c.prog.begin("cluster", 1)
	mapsByChunk := make(map[int]job.MapResult, len(mapList))
	for _, m := range mapList {
		mapsByChunk[m.Chunk] = m
	}
	stats, err := stage.Cluster(ctx, c.st, p, verifyList, mapsByChunk)
	if err != nil {
		return nil, err
	}
	c.prog.done(0, 0)
	c.prog.end()
	man.addClusters(stats, time.Since(t0))
	if w := giantClusterWarning(stats, man.Counts.Docs); w != "" {
		c.log.Warn(w)
		man.Warnings = append(man.Warnings, w)
	}
	for _, w := range boundWarnings(man, stats, p) {
		c.log.Warn(w)
		man.Warnings = append(man.Warnings, w)
	}
	if w := simhashRecallWarning(p); w != "" {
		c.log.Warn(w)
		man.Warnings = append(man.Warnings, w)
	}
	if n := len(man.Failures); n > 0 {
		man.Warnings = append(man.Warnings, fmt.Sprintf("%d tasks failed; the job completed without them (see failures)", n))
	}

	man.Finished = time.Now().UTC()
	man.Seconds = time.Since(started).Seconds()
	if err := writeJSON(ctx, c.st, job.ManifestFile, man); err != nil {
		return nil, err
	}
	if err := writeReport(ctx, c.st); err != nil {
		return nil, err
	}
	if err := storage.WriteFile(ctx, c.st, job.SuccessFile, nil); err != nil {
		return nil, err
	}
	return man, nil
}

// checkFailures fails the job on failed tasks under --strict, and in any
// case for tasks other than map tasks, whose loss would silently lose pairs.
func (c *coordinator) checkFailures(out *stageOutcome) error {
	if len(out.failures) == 0 {
		return nil
	}
	var msgs []string
	for _, f := range out.failures {
		msgs = append(msgs, fmt.Sprintf("%s task %d failed after %d attempts: %s", f.Stage, f.Index, f.Attempts, f.Error))
		c.log.Error("task failed", "stage", f.Stage, "index", f.Index, "attempts", f.Attempts, "err", f.Error)
	}
	if c.spec.Params.Strict || out.failures[0].Stage != StageMap {
		return errors.New(strings.Join(msgs, "; "))
	}
	return nil
}

// stage publishes the tasks of one stage that are not done yet and waits
// until every task is done or has failed for good.
func (c *coordinator) stage(ctx context.Context, name string, indices []int, count func([]byte) (int64, int64)) (*stageOutcome, error) {
	t0 := time.Now()
	out := &stageOutcome{results: map[int][]byte{}}
	want := map[int]bool{}
	for _, i := range indices {
		want[i] = true
	}
	c.prog.begin(name, len(indices))
	defer c.prog.end()

	failed := map[int]Failure{}
	// The watch first replays the stage's current state, then follows it.
	// What a previous life of this job already finished stays finished;
	// failed tasks are tried again.
	watch, err := c.watch(ctx, name)
	if err != nil {
		return nil, err
	}
	defer func() { watch.Stop() }()
	for replayed := false; !replayed; {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case e, ok := <-watch.Updates():
			if !ok {
				watch.Stop()
				if watch, err = c.watch(ctx, name); err != nil {
					return nil, err
				}
				continue
			}
			if e == nil {
				replayed = true
				continue
			}
			kind, idx, ok := parseKey(stageKeys(c.spec.Run, name), e.Key())
			if !ok || !want[idx] || e.Operation() != jetstream.KeyValuePut {
				continue
			}
			switch kind {
			case "done":
				out.results[idx] = e.Value()
			case "failed":
				key := e.Key()
				if err := queue.Retry(ctx, func(ctx context.Context) error { return c.kv.Delete(ctx, key) }); err != nil {
					return nil, fmt.Errorf("%s stage: clearing %s: %w", name, key, err)
				}
			}
		}
	}
	for _, r := range out.results {
		var docs, bytes int64
		if count != nil {
			docs, bytes = count(r)
		}
		c.prog.done(docs, bytes)
	}

	stopWatch, err := c.q.WatchExhausted(ctx, c.nc, func(e queue.Exhausted) {
		var t Task
		if json.Unmarshal(e.Data, &t) != nil || t.Run != c.spec.Run || t.Stage != name {
			return
		}
		data, _ := json.Marshal(Failure{Stage: t.Stage, Index: t.Index, Attempts: e.Deliveries,
			Error: "delivered the maximum number of times without being finished (its workers died or lost their connection)"})
		if _, err := c.kv.Create(context.WithoutCancel(ctx), failedKey(t.Run, t.Stage, t.Index), data); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
			c.log.Error("cannot record exhausted task", "err", err)
		}
	})
	if err != nil {
		return nil, err
	}
	defer stopWatch()

	if err := c.q.Purge(ctx, c.spec.Job); err != nil {
		return nil, err
	}
	for _, i := range indices {
		if _, ok := out.results[i]; ok {
			continue
		}
		data, _ := json.Marshal(Task{Job: c.spec.Job, Run: c.spec.Run, Stage: name, Index: i})
		// The id dedups retried publishes within this coordinator's life
		// only: a restarted coordinator must be able to publish again.
		if err := c.q.Publish(ctx, c.spec.Job, c.life+"."+Task{Run: c.spec.Run, Stage: name, Index: i}.id(), data); err != nil {
			return nil, fmt.Errorf("%s stage: publishing task %d: %w", name, i, err)
		}
	}
	// The watch sees every result from here on; a periodic pass over the
	// keys guards against a watch that lost updates across a reconnect.
	pending := func() int { return len(indices) - len(out.results) - len(failed) }
	recheck := time.NewTicker(10 * time.Second)
	defer recheck.Stop()
	absorb := func(k string, v []byte) {
		kind, idx, ok := parseKey(stageKeys(c.spec.Run, name), k)
		if !ok || !want[idx] {
			return
		}
		if _, seen := out.results[idx]; seen {
			return
		}
		if _, seen := failed[idx]; seen {
			return
		}
		switch kind {
		case "done":
			out.results[idx] = v
			var docs, bytes int64
			if count != nil {
				docs, bytes = count(v)
			}
			c.prog.done(docs, bytes)
		case "failed":
			var f Failure
			json.Unmarshal(v, &f)
			failed[idx] = f
			c.prog.done(0, 0)
		}
	}
	for pending() > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case e, ok := <-watch.Updates():
			if !ok {
				// The watch ended (a lost connection): start a new one,
				// whose replay brings back anything missed.
				watch.Stop()
				if watch, err = c.watch(ctx, name); err != nil {
					return nil, err
				}
				continue
			}
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue
			}
			absorb(e.Key(), e.Value())
		case <-recheck.C:
			keys, err := c.kv.ListKeysFiltered(ctx, stageKeys(c.spec.Run, name)+".>")
			if err != nil {
				c.log.Warn("listing job state", "err", err)
				continue
			}
			for k := range keys.Keys() {
				if e, err := c.kv.Get(ctx, k); err == nil {
					absorb(k, e.Value())
				}
			}
		}
	}
	for _, i := range sortedKeys(failed) {
		out.failures = append(out.failures, failed[i])
	}
	out.timing = StageTiming{Name: name, Tasks: len(indices), Failed: len(failed), Seconds: time.Since(t0).Seconds()}
	return out, nil
}

// watch follows the state keys of a stage, retrying while the server is
// unreachable.
func (c *coordinator) watch(ctx context.Context, name string) (jetstream.KeyWatcher, error) {
	var w jetstream.KeyWatcher
	err := queue.Retry(ctx, func(ctx context.Context) error {
		var err error
		w, err = c.kv.Watch(context.WithoutCancel(ctx), stageKeys(c.spec.Run, name)+".>")
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s stage: watching state: %w", name, err)
	}
	return w, nil
}

// parseKey splits "<prefix>.kind.000012".
func parseKey(prefix, key string) (kind string, idx int, ok bool) {
	rest, found := strings.CutPrefix(key, prefix+".")
	if !found {
		return "", 0, false
	}
	kind, num, found := strings.Cut(rest, ".")
	if !found {
		return "", 0, false
	}
	idx, err := strconv.Atoi(num)
	if err != nil {
		return "", 0, false
	}
	return kind, idx, true
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func sortedKeys[V any](m map[int]V) []int {
	return slices.Sorted(maps.Keys(m))
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// runStage runs one stage's tasks and returns their results in task order.
// It records them in the manifest (add), writes them to stageFile for the
// next stage's workers (unless empty), and fails on failed tasks as
// checkFailures says. count, if given, tells progress the documents and
// bytes of a result.
func runStage[T any](ctx context.Context, c *coordinator, name string, indices []int, stageFile string,
	add func([]T, *stageOutcome), count func(T) (int64, int64)) ([]T, error) {
	var counter func([]byte) (int64, int64)
	if count != nil {
		counter = func(b []byte) (int64, int64) {
			var r T
			if json.Unmarshal(b, &r) != nil {
				return 0, 0
			}
			return count(r)
		}
	}
	out, err := c.stage(ctx, name, indices, counter)
	if err != nil {
		return nil, err
	}
	list, err := decodeResults[T](out)
	if err != nil {
		return nil, err
	}
	add(list, out)
	if stageFile != "" {
		if err := writeJSON(ctx, c.st, stageFile, list); err != nil {
			return nil, err
		}
	}
	if err := c.checkFailures(out); err != nil {
		return nil, err
	}
	return list, nil
}

// decodeResults decodes a stage's task results in task order.
func decodeResults[T any](out *stageOutcome) ([]T, error) {
	list := make([]T, 0, len(out.results))
	for _, i := range sortedKeys(out.results) {
		var r T
		if err := json.Unmarshal(out.results[i], &r); err != nil {
			return nil, fmt.Errorf("result of task %d: %w", i, err)
		}
		list = append(list, r)
	}
	return list, nil
}

// Giant-cluster rule: a cluster of at least giantClusterSize documents, or
// of more than giantClusterFraction of the corpus (and more than 10), is
// most likely templated pages chained together rather than copies.
const (
	giantClusterSize     = 1000
	giantClusterFraction = 0.01
)

// boundWarnings name the buckets and clusters whose pairs were bounded.
func boundWarnings(man *Manifest, s *stage.ClusterStats, p job.Params) []string {
	var out []string
	if man.Counts.BoundedBuckets > 0 {
		b := man.BoundedBuckets[0]
		out = append(out, fmt.Sprintf("%d band buckets held more than --max-bucket %d documents; %d of their pairs were not compared "+
			"(the largest: band %d, key %d, %d documents, the first document %d; each was compared with the bucket's %d first documents)",
			man.Counts.BoundedBuckets, p.MaxBucket, man.Counts.NotCompared, b.Band, b.Key, b.Docs, b.FirstDoc, b.Hubs))
	}
	for _, b := range s.Bounded {
		out = append(out, fmt.Sprintf("cluster %d (%d documents, kept: %s) has %d pairs, more than --max-cluster-pairs %d: "+
			"pairs/ lists only the %d pairs of its kept document, %d are not listed",
			b.Cluster, b.Size, b.KeptID, b.Pairs, p.MaxClusterPairs, b.Listed, b.NotListed))
	}
	if n := s.BoundedClusters - int64(len(s.Bounded)); n > 0 {
		out = append(out, fmt.Sprintf("%d more clusters were bounded the same way (see counts.pairs_not_listed)", n))
	}
	return out
}

func giantClusterWarning(s *stage.ClusterStats, docs int64) string {
	if len(s.Top) == 0 {
		return ""
	}
	big := s.Top[0]
	if big.Size < giantClusterSize && (big.Size <= 10 || float64(big.Size) <= giantClusterFraction*float64(docs)) {
		return ""
	}
	return fmt.Sprintf("cluster %d holds %d documents (%.1f%% of the corpus, kept: %s): near-duplicates may be chained through templated pages; check it before dropping documents",
		big.Cluster, big.Size, 100*float64(big.Size)/float64(max(docs, 1)), big.KeptID)
}

// writeReport writes report.html and its charts beside manifest.json.
func writeReport(ctx context.Context, st *storage.Dir) error {
	data, err := storage.ReadFile(ctx, st, job.ManifestFile)
	if err != nil {
		return err
	}
	files, err := report.Build(data)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := storage.WriteFile(ctx, st, name, files[name]); err != nil {
			return err
		}
	}
	return nil
}

// outputNames are what --overwrite removes.
func outputNames() []string {
	return []string{job.SuccessFile, job.ManifestFile, job.ClustersFile, job.DuplicatesFile, job.ExactFile,
		report.HTMLFile, report.SCurveFile, report.SimilarityFile, report.ClustersFile, report.StagesFile,
		job.BandsDir, job.CandidatesDir, job.PairsDir, job.DocsDir, job.RejectsDir, job.WorkDir}
}
