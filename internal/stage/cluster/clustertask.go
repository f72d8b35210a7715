package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/neardup/neardup/internal/stage"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/records"
)

// StepPrefix starts the name of every step of the cluster stage: a
// task whose stage has it is run by RunTask.
const StepPrefix = "cluster-"

// The kinds of cluster steps, in the order they run (large-star and
// small-star alternate until the components are stars).
const (
	stepContract   = "contract"
	stepLargeStar  = "ls"
	stepSmallStar  = "ss"
	stepNodes      = "nodes"
	stepComponents = "comps"
	stepOutput     = "out"
)

// A job of few edges has one step instead, of kind stepWhole (see
// wholeTask).

// clusterStep is what the tasks of one step of the cluster stage read:
// the driver writes it to job.ClusterStepFile before running them.
type clusterStep struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Parts int    `json:"parts"` // node partitions (see partOf)
	Tasks int    `json:"tasks"`
	// Verifies are the verify tasks' files, by chunk (contract, nodes,
	// out).
	Verifies []verifyFiles `json:"verifies,omitempty"`
	// DensePairs: the pairs/ files are Dense (see densePairs; whole,
	// out).
	DensePairs bool `json:"dense_pairs,omitempty"`
	// Docs are the chunks' document files (nodes).
	Docs map[int]fileinfo.Info `json:"docs,omitempty"`
	// Dropped are the lists of the documents earlier jobs dropped, by
	// chunk (nodes; see job.DroppedList): those of chunks without one
	// were all published, or their index does not say.
	Dropped map[int]droppedRows `json:"dropped,omitempty"`
	// Routes are the route tables of what each task of the previous step
	// wrote, by destination partition (large-star, small-star,
	// components, out: the lookups): the driver's. They are not in the
	// step's file: each partition's column of them is in its own file
	// (job.ClusterRunsFile), which the driver writes (see
	// writeRunsColumns) and the partition's task reads as Runs, holding
	// its RunTasks entries, not RunTasks × Parts.
	Routes   []*job.Routes           `json:"-"`
	Runs     []map[int]fileinfo.Info `json:"-"`
	RunTasks int                     `json:"run_tasks,omitempty"`
	// Labels are each partition's labels (nodes).
	Labels []*fileinfo.Info `json:"labels,omitempty"`
	// Clusters and Duplicates are the components tasks' sorted runs of
	// clusters.parquet and duplicates.parquet (out).
	Clusters   []*fileinfo.Info `json:"clusters,omitempty"`
	Duplicates []*fileinfo.Info `json:"duplicates,omitempty"`
	// Top are the bounded clusters whose listed pairs the manifest names
	// (out).
	Top []int64 `json:"top,omitempty"`
}

// verifyFiles are the files of one verify task.
type verifyFiles struct {
	Chunk   int            `json:"chunk"`
	Pairs   *fileinfo.Info `json:"pairs,omitempty"`
	Members *fileinfo.Info `json:"members,omitempty"`
	// Spread is set when the chunk holds several blocks of documents
	// (see partOf), which belong to several partitions.
	Spread bool `json:"spread,omitempty"`
}

// share reports whether partition part reads v's files, and if so
// whether it keeps only the rows whose first document is in part: a
// chunk of one block belongs to one partition; a spread chunk's rows are
// shared out by their first document.
func (v verifyFiles) share(part, parts int) (read, filter bool) {
	if v.Spread {
		return true, true
	}
	return v.Chunk%parts == part, false
}

// readVerified streams the verified pairs of verify task v to pair and its
// confirmed group members to member, each if not nil: a pair's ends only
// (no string decoded, see verifiedrun.go), a member whole.
func readVerified(ctx context.Context, st storage.Opener, v verifyFiles, pair func(pairEnds) error, member func(records.ExactMember) error) error {
	if v.Pairs != nil && pair != nil {
		err := workfile.ReadVerifiedEnds(ctx, st, v.Pairs, workfile.VerifiedPairsMagic, func(a, b int64) error {
			return pair(pairEnds{A: a, B: b})
		})
		if err != nil {
			return err
		}
	}
	if v.Members != nil && member != nil {
		return workfile.ReadVerifiedMembers(ctx, st, v.Members, member)
	}
	return nil
}

// pairEnds is what a cluster step reads of a verified pair: its
// documents a and b.
type pairEnds struct{ A, B int64 }

// RunTask runs task index of the cluster step named step (see
// Run), reading the step's description from st, and returns its
// result for the driver.
func RunTask(ctx context.Context, st storage.FS, spec *job.Spec, step string, index int) (any, error) {
	if !strings.HasPrefix(step, StepPrefix) {
		return nil, fmt.Errorf("%w: %q is not a cluster step", ErrNoTask, step)
	}
	data, err := storage.ReadFile(ctx, st, job.ClusterStepFile(step))
	if err != nil {
		return nil, err
	}
	var s clusterStep
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", job.ClusterStepFile(step), err)
	}
	if s.Name != step || index < 0 || index >= s.Tasks || s.Parts < 1 {
		return nil, fmt.Errorf("%w: task %d of step %s (%d tasks, %d partitions)", ErrNoTask, index, s.Name, s.Tasks, s.Parts)
	}
	if part, ok := s.runsPart(index); ok && s.RunTasks > 0 {
		if s.Runs, err = readRunsColumn(ctx, st, &s, part); err != nil {
			return nil, err
		}
	}
	var res any
	switch s.Kind {
	case stepContract:
		res, err = contractTask(ctx, st, &s, index)
	case stepLargeStar:
		res, err = largeStarTask(ctx, st, &s, index)
	case stepSmallStar:
		res, err = smallStarTask(ctx, st, &s, index)
	case stepNodes:
		res, err = nodesTask(ctx, st, &s, index)
	case stepComponents:
		res, err = componentsTask(ctx, st, spec, &s, index)
	case stepOutput:
		res, err = outputTask(ctx, st, spec, &s, index)
	case stepWhole:
		res, err = wholeTask(ctx, st, spec, &s)
	default:
		return nil, fmt.Errorf("%w: step %s has unknown kind %q", ErrNoTask, s.Name, s.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("%s task %d: %w", step, index, err)
	}
	return res, nil
}

// ErrNoTask marks a cluster task that its step does not have: retrying it
// cannot help.
var ErrNoTask = fmt.Errorf("%w: no such cluster task", stage.ErrRefused)

// runsPart is the partition whose runs task index of the step reads: its
// own, or for a pairs/ task of the out step, its verify chunk's.
func (s *clusterStep) runsPart(index int) (int, bool) {
	if s.Kind != stepOutput {
		return index, true
	}
	if index < len(s.Verifies) {
		return s.Verifies[index].Chunk % s.Parts, true
	}
	return 0, false
}

// writeRunsColumns writes each partition's column of the step's runs to
// its file, from the route tables of the tasks of the step before, read
// a window of partitions at a time (stage.Transpose).
func writeRunsColumns(ctx context.Context, st storage.FS, s *clusterStep) error {
	return stage.Transpose(ctx, st, s.Routes, s.Parts, func(part int, entries [][]fileinfo.Info) error {
		col := make([]*fileinfo.Info, len(entries))
		for i, e := range entries {
			if len(e) == 1 && e[0].Rows > 0 {
				col[i] = &e[0]
			}
		}
		data, err := json.Marshal(col)
		if err != nil {
			return err
		}
		return storage.WriteFile(ctx, st, job.ClusterRunsFile(s.Name, part), data)
	})
}

// routeRuns writes a task's runs, of its file by partition, to its route
// table (one slot: file), so that its result holds the table and not the
// runs (partitions of them: tasks × partitions in all).
func routeRuns(ctx context.Context, st storage.Creator, step string, task int, file string, runs map[int]fileinfo.Info) (*job.Routes, error) {
	return workfile.WriteRoutes(ctx, st, job.ClusterTaskFile(step, task, "routes"), []string{file}, []map[int]fileinfo.Info{runs})
}

// stepRoutes are the route tables of the results of a step's tasks, r's
// of each; a result of an earlier version has runs instead (legacy,
// its runs by partition), of which the driver writes the table.
func stepRoutes[T any](ctx context.Context, st storage.Creator, step string, results []T, r func(T) (*job.Routes, map[int]fileinfo.Info)) ([]*job.Routes, error) {
	out := make([]*job.Routes, len(results))
	for i, res := range results {
		routes, legacy := r(res)
		if routes == nil && len(legacy) > 0 {
			var file string
			for _, info := range legacy {
				file = info.Name
			}
			var err error
			if routes, err = routeRuns(ctx, st, step, i, file, legacy); err != nil {
				return nil, fmt.Errorf("%s task %d: %w", step, i, err)
			}
		}
		out[i] = routes
	}
	return out, nil
}

// readRunsColumn reads a partition's column of the step's runs, as Runs
// holding that partition's entries only.
func readRunsColumn(ctx context.Context, st storage.Opener, s *clusterStep, part int) ([]map[int]fileinfo.Info, error) {
	name := job.ClusterRunsFile(s.Name, part)
	data, err := storage.ReadFile(ctx, st, name)
	if err != nil {
		return nil, err
	}
	var col []*fileinfo.Info
	if err := json.Unmarshal(data, &col); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(col) != s.RunTasks {
		return nil, fmt.Errorf("%s: %d entries, want %d: %w", name, len(col), s.RunTasks, workfile.ErrCorrupt)
	}
	runs := make([]map[int]fileinfo.Info, len(col))
	for i, info := range col {
		runs[i] = map[int]fileinfo.Info{}
		if info != nil {
			runs[i][part] = *info
		}
	}
	return runs, nil
}

// droppedRows is where a chunk's list of the documents its job dropped is:
// Count rows from row First of the file (job.DroppedList); every row of
// it when Count is 0, as in the task inputs of an earlier build, whose
// lists were files of their own (the JSON of a fileinfo.Info then).
type droppedRows struct {
	fileinfo.Info
	First int64 `json:"first_row,omitempty"`
	Count int64 `json:"count,omitempty"`
}
