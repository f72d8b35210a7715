package stage

import (
	"context"
	"time"

	"github.com/neardup/neardup/internal/manifest"
)

// clusterStage finds the clusters and writes the outputs: steps of tasks
// (see RunCluster) that the coordinator drives, every step planned from
// the last.
func clusterStage() Stage {
	return Stage{
		Name: "cluster",
		Steps: func(ctx context.Context, j *Job, run TaskRunner) error {
			t0 := time.Now()
			steps := &countingRunner{run: run}
			whole := j.WholeEdges
			if whole == 0 {
				whole = WholeClusterEdges
			}
			stats, err := runCluster(ctx, j.FS, j.Spec.Params, j.verifies, j.allMaps, steps, whole)
			if err != nil {
				return err
			}
			foldClusters(j.Manifest, stats, steps.tasks, time.Since(t0))
			j.Log.Info("clusters found", "clusters", stats.Clusters, "rounds", stats.Rounds, "steps", steps.steps, "tasks", steps.tasks,
				"seconds", time.Since(t0).Seconds())
			j.Clusters = stats
			return nil
		},
		Run: func(ctx context.Context, e *Env, t Task) (any, error) {
			return ClusterTask(ctx, e.FS, e.Spec, t.Stage, t.Index)
		},
	}
}

// countingRunner counts the steps and tasks it runs.
type countingRunner struct {
	run          TaskRunner
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
func foldClusters(m *manifest.Manifest, s *ClusterStats, tasks int, d time.Duration) {
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
