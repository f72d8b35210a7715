package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/report"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
)

type coordinator struct {
	cfg   Config
	log   *slog.Logger
	st    *storage.Dir
	q     taskQueue
	state stageState
	reset stateReset
	lease confirmer
	// mapRan is set when the map stage put tasks on the queue in this run.
	mapRan bool
	spec   *job.Spec
	plan   *job.Plan
	// earlier are the jobs this one is matched against (--against), and
	// fs reads this job's files and, through their mounts, theirs.
	earlier []earlierJob
	fs      storage.FS
	prog    *progress
	life    string // random, new for every start of the coordinator
}

// confirmer confirms that this coordinator still holds the job's lease.
type confirmer interface {
	Confirm(ctx context.Context) error
}

// stageOutcome is what one stage produced.
type stageOutcome struct {
	results   map[int][]byte
	failures  []Failure
	timing    StageTiming
	published int // tasks this run put on the queue (the others were done)
}

// execute runs the job's stages in order, then writes the manifest, the
// report and _SUCCESS.
func (c *coordinator) execute(ctx context.Context, started time.Time) (*Manifest, error) {
	p := c.spec.Params
	man := newManifest(c.spec, c.plan, started)

	// Map: one task per chunk.
	mapList, err := runStage(ctx, c, StageMap, chunkSeq(c.plan), "", man.addMaps,
		func(m job.MapResult) (int64, int64) { return m.Docs, m.InputBytes })
	if err != nil {
		return nil, err
	}
	if len(mapList) == 0 && len(c.plan.Chunks) > 0 {
		return nil, fmt.Errorf("every map task failed; the first: %s", man.Failures[0].Error)
	}
	if c.mapRan {
		// Map tasks ran in this run (a fresh start, or chunks retried
		// after a partial run): what earlier runs reduced and verified
		// does not hold their documents, so those stages start over.
		for _, stage := range []string{StageReduce, StageGather, StageVerify} {
			if err := c.reset.DeletePrefix(ctx, stageKeys(c.spec.Epoch, stage)+"."); err != nil {
				return nil, fmt.Errorf("clearing the %s stage: %w", stage, err)
			}
		}
	}

	// A dataset no map task wrote a file of still holds its schema.
	if err := stage.CompleteMapOutputs(ctx, c.st, mapList); err != nil {
		return nil, err
	}

	// What later tasks read of the map results: the reduce tasks their
	// band files, the others the rest.
	// The earlier jobs' chunks (--against) are read through their mounts:
	// their documents and signatures here, their band files by the reduce
	// tasks from their indexes.
	if err := writeTaskInputs(ctx, c.st, job.InputsReduce, reduceInputs(mapList, p.Partitions)); err != nil {
		return nil, err
	}
	mapList = slimMaps(mapList) // the band files (chunks × partitions) are written: let them go
	allMaps := append(earlierMaps(c.earlier), mapList...)
	if err := writeJSON(ctx, c.st, job.MapStageFile, allMaps); err != nil {
		return nil, err
	}

	// Reduce: one task per partition.
	reduceList, err := runStage(ctx, c, StageReduce, seq(p.Partitions), "", man.addReduces, nil)
	if err != nil {
		return nil, err
	}
	if err := writeTaskInputs(ctx, c.st, job.InputsEdges, edgeInputs(reduceList)); err != nil {
		return nil, err
	}
	// The ranges (partitions × chunks) are written: keep only which chunks
	// the gather and verify tasks are for.
	gatherChunks, verifyChunks := map[int]bool{}, map[int]bool{}
	for i := range reduceList {
		for ch := range reduceList[i].RequestFiles {
			gatherChunks[ch] = true
		}
		for ch := range reduceList[i].EdgeFiles {
			verifyChunks[ch] = true
		}
		reduceList[i].EdgeFiles, reduceList[i].RequestFiles = nil, nil
	}

	// Gather (when on): one task per chunk whose signatures a verify task
	// needs.
	if p.Gather == job.GatherOn {
		gatherList, err := runStage(ctx, c, StageGather, slices.Sorted(maps.Keys(gatherChunks)), "", man.addGathers, nil)
		if err != nil {
			return nil, err
		}
		if err := writeTaskInputs(ctx, c.st, job.InputsGathered, gatheredInputs(gatherList)); err != nil {
			return nil, err
		}
	}

	// Verify: one task per chunk that has candidate edges.
	verifyList, err := runStage(ctx, c, StageVerify, slices.Sorted(maps.Keys(verifyChunks)), "", man.addVerifies, nil)
	if err != nil {
		return nil, err
	}

	// Clusters: steps of tasks that this coordinator only drives. Like
	// the rest of the job after map, they run whole on every run of it:
	// what an earlier run did of them is cleared.
	t0 := time.Now()
	if err := c.reset.DeletePrefix(ctx, stageKeys(c.spec.Epoch, stage.ClusterStepPrefix)); err != nil {
		return nil, fmt.Errorf("clearing the cluster stage: %w", err)
	}
	mapsByChunk := make(map[int]job.MapResult, len(allMaps))
	for _, m := range allMaps {
		mapsByChunk[m.Chunk] = m
	}
	steps := &clusterSteps{c: c}
	stats, err := stage.RunCluster(ctx, c.fs, p, verifyList, mapsByChunk, steps)
	if err != nil {
		return nil, err
	}
	man.addClusters(stats, steps.tasks, time.Since(t0))
	c.log.Info("clusters found", "clusters", stats.Clusters, "rounds", stats.Rounds, "steps", steps.steps, "tasks", steps.tasks,
		"seconds", time.Since(t0).Seconds())
	if w := giantClusterWarning(stats, man.Counts.Docs); w != "" {
		c.log.Warn(w)
		man.Warnings = append(man.Warnings, w)
	}
	for _, w := range boundWarnings(man, stats, p) {
		c.log.Warn(w)
		man.Warnings = append(man.Warnings, w)
	}
	for _, w := range scriptWarnings(man, p) {
		c.log.Warn(w)
		man.Warnings = append(man.Warnings, w)
	}
	if w := simhashRecallWarning(p); w != "" {
		c.log.Warn(w)
		man.Warnings = append(man.Warnings, w)
	}
	for _, w := range lossWarnings(man.Counts, man.ChangedInputs) {
		c.log.Warn(w)
		man.Warnings = append(man.Warnings, w)
	}
	man.Status = StatusComplete
	if n := len(man.Failures); n > 0 {
		man.Status = StatusPartial
		if c.cfg.AllowPartial {
			man.Warnings = append(man.Warnings, fmt.Sprintf("%d map tasks failed; their chunks are missing and the result is partial, accepted with --allow-partial (_PARTIAL, not _SUCCESS)", n))
		} else {
			man.Warnings = append(man.Warnings, fmt.Sprintf("%d map tasks failed; their chunks are missing: run the same command again to retry them (no _SUCCESS until then)", n))
		}
	}
	// A coordinator that lost its job to another while it was frozen or
	// cut off must not conclude it.
	if err := c.lease.Confirm(ctx); err != nil {
		return nil, err
	}
	// Every task is finished: the temporary files of writers that were
	// killed (a worker dying mid-write) can go.
	if n, err := c.st.RemoveTemporaries(ctx, ".", job.NATSDir); err != nil { // not the live server's store
		return nil, err
	} else if n > 0 {
		c.log.Info("removed temporary files left by interrupted writers", "files", n)
	}

	// The index is complete once its description is written: before the
	// manifest, so that a finished job always has it (unless --index=false).
	if p.Index {
		if err := index.Write(ctx, c.st, index.New(c.spec, mapList)); err != nil {
			return nil, err
		}
	}

	// The report's example pairs: one more read of pairs/.
	t1 := time.Now()
	examples, err := chooseExamples(ctx, c.st, p.Threshold)
	if err != nil {
		return nil, err
	}
	man.ExamplePairs = append(man.ExamplePairs, examples...)
	chose := time.Since(t1)
	man.Finished = time.Now().UTC()
	man.Seconds = time.Since(started).Seconds()
	if err := writeJSON(ctx, c.st, job.ManifestFile, man); err != nil {
		return nil, err
	}
	if err := writeReport(ctx, c.st); err != nil {
		return nil, err
	}
	t1 = time.Now()
	if err := writePairsPage(ctx, c.fs, p, c.plan, man.ExamplePairs, c.log); err != nil {
		return nil, err
	}
	c.log.Info("example pairs written", "file", report.PairsFile, "pairs", len(man.ExamplePairs),
		"choose_seconds", chose.Seconds(), "page_seconds", time.Since(t1).Seconds())
	switch {
	case man.Status == StatusComplete:
		if err := storage.WriteFile(ctx, c.st, job.SuccessFile, nil); err != nil {
			return nil, err
		}
	case c.cfg.AllowPartial:
		if err := storage.WriteFile(ctx, c.st, job.PartialFile, nil); err != nil {
			return nil, err
		}
	default:
		// Kept for the rerun: it retries the failed chunks and, since map
		// tasks then run, redoes the stages after map.
	}
	return man, nil
}

// clusterSteps runs the steps of the cluster stage as tasks on the queue,
// and counts them.
type clusterSteps struct {
	c            *coordinator
	steps, tasks int
}

// RunTasks runs one step's tasks and returns their results in order; a
// task that failed for good fails the job.
func (s *clusterSteps) RunTasks(ctx context.Context, step string, n int) ([][]byte, error) {
	out, err := s.c.stage(ctx, step, seq(n), nil)
	if err != nil {
		return nil, err
	}
	s.steps++
	s.tasks += n
	if err := s.c.checkFailures(out); err != nil {
		return nil, err
	}
	s.c.log.Debug("cluster step done", "step", step, "tasks", n, "seconds", out.timing.Seconds)
	results := make([][]byte, n)
	for i := range results {
		results[i] = out.results[i]
	}
	return results, nil
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

// chunkSeq numbers the plan's chunks: its map tasks.
func chunkSeq(plan *job.Plan) []int {
	s := seq(len(plan.Chunks))
	for i := range s {
		s[i] += plan.FirstChunk
	}
	return s
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
	if name == StageMap && out.published > 0 {
		c.mapRan = true
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
