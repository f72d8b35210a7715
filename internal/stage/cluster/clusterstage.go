package cluster

import (
	"context"
	"time"

	"github.com/neardup/neardup/internal/stage"

	"github.com/neardup/neardup/internal/manifest"
)

// Stage returns the cluster stage, which finds the clusters and writes
// the outputs: steps of tasks (see Run) that the coordinator drives, every step planned from
// the last.
func Stage() stage.Stage {
	return stage.Stage{
		Name: "cluster",
		Steps: func(ctx context.Context, j *stage.Job, run stage.TaskRunner) error {
			t0 := time.Now()
			steps := &countingRunner{run: run}
			whole := j.WholeBytes
			if whole == 0 {
				whole = WholeBytes
			}
			stats, err := runCluster(ctx, j.FS, j.Spec.Params, j.Verified, j.Mapped.All, steps, whole)
			if err != nil {
				return err
			}
			foldClusters(j.Manifest, stats, steps.tasks, time.Since(t0))
			j.Log.Info("clusters found", "clusters", stats.Clusters, "rounds", stats.Rounds, "steps", steps.steps, "tasks", steps.tasks,
				"seconds", time.Since(t0).Seconds())
			j.Clusters = stats
			return nil
		},
		Run: func(ctx context.Context, e *stage.Env, t stage.Task) (any, error) {
			return RunTask(ctx, e.FS, e.Spec, t.Stage, t.Index)
		},
	}
}

// countingRunner counts the steps and tasks it runs.
type countingRunner struct {
	run          stage.TaskRunner
	steps, tasks int
}

// RunTasks runs a step's tasks through r.run.
func (r *countingRunner) RunTasks(ctx context.Context, step string, n int) ([][]byte, error) {
	out, err := r.run.RunTasks(ctx, step, n)
	r.steps++
	r.tasks += n
	return out, err
}

// foldClusters adds what the cluster stage found to the manifest.
func foldClusters(m *manifest.Manifest, s *stage.ClusterStats, tasks int, d time.Duration) {
	m.Counts.Clusters = s.Clusters
	m.Counts.ClusteredDocs = s.Clustered
	m.Counts.Duplicates = s.Duplicates
	m.Counts.ExactGroups = s.ExactGroups
	m.Counts.ExactDups = s.ExactDuplicates
	m.Counts.NearDups = s.Duplicates - s.ExactDuplicates
	m.Counts.Pairs = s.PairsListed
	m.Counts.PairsAgainst = s.PairsAgainst
	m.Counts.BoundedClust = s.BoundedClusters
	m.Counts.NotListed = s.PairsNotListed
	m.BoundedClusters = append(m.BoundedClusters, s.Bounded...)
	m.Counts.LargestCluster = s.Largest
	m.ClusterSizeHist = s.SizeHist
	m.LargestClusters = s.Top
	m.ExamplePairs = append(m.ExamplePairs[:0], s.Examples...)
	m.Stages = append(m.Stages, manifest.StageTiming{Name: "cluster", Tasks: tasks, Seconds: d.Seconds()})
}
