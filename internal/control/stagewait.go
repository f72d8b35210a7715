package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
)

// taskQueue is where the coordinator puts a stage's tasks.
type taskQueue interface {
	// Purge removes every queued task of a job's run (its epoch);
	// Publish queues one.
	Purge(ctx context.Context, job, run string) error
	Publish(ctx context.Context, job, run, id string, data []byte) error
	// WatchExhausted calls fn for each task the server stopped delivering.
	WatchExhausted(ctx context.Context, fn func(queue.Exhausted)) (stop func(), err error)
}

// stageState is the job state as the coordinator's stage loop sees it:
// one key per finished or failed task.
type stageState interface {
	// Follow sends the keys under prefix, a Replayed mark, then new puts.
	Follow(ctx context.Context, prefix string) (<-chan queue.Update, error)
	Create(ctx context.Context, key string, value []byte) error
	Delete(ctx context.Context, key string) error
}

// stateReset clears state keys: those of a stage to be done again.
type stateReset interface {
	DeletePrefix(ctx context.Context, prefix string) error
}

// Execute publishes the tasks of one stage that are not done yet and waits
// until every task is done or has failed for good. What a previous life of
// this job already finished stays finished; tasks it saw fail are tried
// again.
func (c *coordinator) Execute(ctx context.Context, s stage.Stage, indices []int) (*stage.Outcome, error) {
	t0 := time.Now()
	name, count := s.Name, s.Count
	// The bucket's values of the tasks done: a result, or a reference to
	// its file, read when the stage's Done reads it.
	done := &storedResults{st: c.st, values: map[int][]byte{}}
	out := &stage.Outcome{Results: done}
	want := map[int]bool{}
	for _, i := range indices {
		want[i] = true
	}
	c.prog.begin(name, len(indices), c.inputBytes(s, indices))
	defer c.prog.end(name)

	prefix := stageKeys(c.spec.Epoch, name)
	fctx, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	updates, err := c.state.Follow(fctx, prefix+".")
	if err != nil {
		return nil, fmt.Errorf("%s stage: %w", name, err)
	}
	next := func() (queue.Update, error) {
		select {
		case <-ctx.Done():
			return queue.Update{}, ctx.Err()
		case u, ok := <-updates:
			if !ok {
				return u, fmt.Errorf("%s stage: following the job's state ended (its bucket was deleted, or the server could not be reached to watch it again)", name)
			}
			return u, nil
		}
	}
	// The replay: the stage's state as a previous life left it.
	for {
		u, err := next()
		if err != nil {
			return nil, err
		}
		if u.Replayed {
			break
		}
		kind, idx, ok := parseKey(prefix, u.Key)
		if !ok || !want[idx] {
			continue
		}
		switch kind {
		case "done":
			done.values[idx] = u.Value
		case "failed":
			if err := c.state.Delete(ctx, u.Key); err != nil {
				return nil, fmt.Errorf("%s stage: clearing %s: %w", name, u.Key, err)
			}
		}
	}
	for _, i := range sortedKeys(done.values) {
		docs, bytes, err := done.count(ctx, count, i)
		if err != nil {
			return nil, fmt.Errorf("%s stage: %w", name, err)
		}
		c.prog.done(docs, bytes, true)
	}

	stopWatch, err := c.q.WatchExhausted(ctx, func(e queue.Exhausted) {
		var t Task
		if json.Unmarshal(e.Data, &t) != nil || t.Epoch != c.spec.Epoch || t.Stage != name {
			return
		}
		data, _ := json.Marshal(manifest.Failure{Stage: t.Stage, Index: t.Index, Attempts: e.Deliveries,
			Error: "delivered the maximum number of times without being finished (its workers died or lost their connection)"})
		if err := c.state.Create(context.WithoutCancel(ctx), failedKey(t.Epoch, t.Stage, t.Index), data); err != nil && !errors.Is(err, queue.ErrExists) {
			c.log.Error("cannot record exhausted task", "err", err)
		}
	})
	if err != nil {
		return nil, err
	}
	defer stopWatch()

	if err := c.q.Purge(ctx, c.spec.Job, c.spec.Epoch); err != nil {
		return nil, err
	}
	for _, i := range indices {
		if _, ok := done.values[i]; ok {
			continue
		}
		out.Published++
		data, _ := json.Marshal(Task{Job: c.spec.Job, Epoch: c.spec.Epoch, Life: c.life, Stage: name, Index: i})
		// The id dedups retried publishes within this coordinator's life
		// only: a restarted coordinator must be able to publish again.
		if err := c.q.Publish(ctx, c.spec.Job, c.spec.Epoch, c.life+"."+Task{Epoch: c.spec.Epoch, Stage: name, Index: i}.id(), data); err != nil {
			return nil, fmt.Errorf("%s stage: publishing task %d: %w", name, i, err)
		}
	}

	failed := map[int]manifest.Failure{}
	var finished atomic.Int64 // in this run: the watch reads it
	replayed := len(done.values)
	idleCtx, stopIdle := context.WithCancel(ctx)
	idleDone := make(chan struct{})
	go func() {
		defer close(idleDone)
		c.idle.watch(idleCtx, name, &finished, func() int { return len(indices) - replayed - int(finished.Load()) })
	}()
	defer func() { stopIdle(); <-idleDone }()
	obs, metric := c.observer(), metricStage(name)
	defer func() { obs.Pending(metric, 0) }()
	for len(done.values)+len(failed) < len(indices) {
		obs.Pending(metric, len(indices)-len(done.values)-len(failed))
		u, err := next()
		if err != nil {
			return nil, err
		}
		kind, idx, ok := parseKey(prefix, u.Key)
		if !ok || !want[idx] {
			continue
		}
		if _, seen := done.values[idx]; seen {
			continue
		}
		if _, seen := failed[idx]; seen {
			continue
		}
		switch kind {
		case "done":
			done.values[idx] = u.Value
			docs, bytes, err := done.count(ctx, count, idx)
			if err != nil {
				return nil, fmt.Errorf("%s stage: %w", name, err)
			}
			c.prog.done(docs, bytes, false)
			finished.Add(1)
		case "failed":
			var f manifest.Failure
			json.Unmarshal(u.Value, &f)
			failed[idx] = f
			c.prog.done(0, 0, false)
			finished.Add(1)
		}
	}
	for _, i := range sortedKeys(failed) {
		out.Failures = append(out.Failures, failed[i])
	}
	out.Done = sortedKeys(done.values)
	out.Timing = manifest.StageTiming{Name: name, Tasks: len(indices), Failed: len(failed), Seconds: time.Since(t0).Seconds()}
	obs.StageDone(metric, time.Since(t0))
	return out, nil
}

// storedResults are the results of a stage's tasks as the job's bucket
// holds them: each a result, or a reference to the file holding it
// (sideResult), read only when asked for. A stage's results are read
// one at a time: the coordinator does not hold them all (a reduce stage
// of earlier versions had hundreds of KB a task, each a file).
type storedResults struct {
	st     storage.Opener
	values map[int][]byte
}

// Result returns task i's result, read from its file if the bucket holds
// a reference.
func (r *storedResults) Result(ctx context.Context, i int) ([]byte, error) {
	v, ok := r.values[i]
	if !ok {
		return nil, errors.New("none recorded")
	}
	return loadResult(ctx, r.st, v)
}

// count tells progress what task i's result stands for (Stage.Count), if
// its stage counts.
func (r *storedResults) count(ctx context.Context, count func([]byte) (int64, int64), i int) (docs, bytes int64, err error) {
	if count == nil {
		return 0, 0, nil
	}
	data, err := r.Result(ctx, i)
	if err != nil {
		return 0, 0, fmt.Errorf("result of task %d: %w", i, err)
	}
	docs, bytes = count(data)
	return docs, bytes, nil
}

// inputBytes are the input bytes of the chunks the tasks of s read, for
// progress: of a stage whose tasks count what they read (map, one task
// per chunk), else 0.
func (c *coordinator) inputBytes(s stage.Stage, indices []int) int64 {
	if s.Count == nil || c.plan == nil {
		return 0
	}
	var n int64
	for _, i := range indices {
		if k := i - c.plan.FirstChunk; k >= 0 && k < len(c.plan.Chunks) {
			n += c.plan.Chunks[k].Bytes
		}
	}
	return n
}

// Clear forgets what earlier runs of the job recorded of s's tasks: of a
// stage of steps, of every step.
func (c *coordinator) Clear(ctx context.Context, s stage.Stage) error {
	prefix := stageKeys(c.spec.Epoch, s.Name) + "."
	if s.Steps != nil {
		prefix = stageKeys(c.spec.Epoch, s.Name+"-")
	}
	return c.reset.DeletePrefix(ctx, prefix)
}

// observer is what hears of the stages: Config.Stages, if any.
func (c *coordinator) observer() StageObserver {
	if c.cfg.Stages == nil {
		return noObserver{}
	}
	return c.cfg.Stages
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

func sortedKeys[V any](m map[int]V) []int {
	return slices.Sorted(maps.Keys(m))
}
