package stages

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
)

// TestResumeOldShapeResults runs a job whose reduce, gather and cluster
// tasks report their ranges in the results, by chunk or partition, as
// versions before route tables did (and no table): what a coordinator
// finds recorded when it resumes a job an earlier version's coordinator
// stopped mid-job, or hears from a worker of that version. The job
// finishes with the same pairs, clusters and task inputs as one whose
// tasks wrote their tables.
func TestResumeOldShapeResults(t *testing.T) {
	want := spreadCase(t).run(t)
	c := spreadCase(t)
	c.executor = func(ex stage.Executor, st storage.FS) stage.Executor { return oldShape{ex: ex, st: st} }
	got := c.run(t)
	if len(want.pairs) == 0 {
		t.Fatal("no pairs: the case checks nothing")
	}
	for _, d := range []struct {
		name      string
		got, want any
	}{
		{"pairs", got.pairs, want.pairs}, {"clusters", got.clusters, want.clusters},
		{"duplicates", got.dups, want.dups}, {"exact", got.exact, want.exact},
	} {
		if fmt.Sprint(d.got) != fmt.Sprint(d.want) {
			t.Errorf("%s: %v\nwant %v", d.name, d.got, d.want)
		}
	}
	// The task inputs and the cluster steps' columns, byte for byte.
	inputs := func(r *caseRun) map[string]string {
		files := map[string]string{}
		root := r.out.Path(job.WorkDir)
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if strings.HasPrefix(rel, "inputs/") || strings.HasPrefix(filepath.Base(rel), "runs-") {
				data, err := os.ReadFile(path)
				files[rel] = string(data)
				return err
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	gotFiles, wantFiles := inputs(got), inputs(want)
	if len(wantFiles) == 0 {
		t.Fatal("no task input files")
	}
	for _, name := range slices.Sorted(maps.Keys(wantFiles)) {
		if gotFiles[name] != wantFiles[name] {
			t.Errorf("%s: %q, want %q", name, gotFiles[name], wantFiles[name])
		}
	}
	if len(gotFiles) != len(wantFiles) {
		t.Errorf("%d task input files, want %d", len(gotFiles), len(wantFiles))
	}
}

// oldShape is an executor whose reduce, gather and cluster tasks report
// their ranges in their results, in the shape of versions before route
// tables, and leave no table.
type oldShape struct {
	ex stage.Executor
	st storage.FS
}

func (o oldShape) Clear(ctx context.Context, s stage.Stage) error { return o.ex.Clear(ctx, s) }

func (o oldShape) Execute(ctx context.Context, s stage.Stage, indices []int) (*stage.Outcome, error) {
	out, err := o.ex.Execute(ctx, s, indices)
	if err != nil {
		return nil, err
	}
	results := stage.ResultMap{}
	for _, i := range out.Done {
		data, err := out.Results.Result(ctx, i)
		if err != nil {
			return nil, err
		}
		if results[i], err = o.old(ctx, s.Name, data); err != nil {
			return nil, fmt.Errorf("%s task %d: %w", s.Name, i, err)
		}
	}
	out.Results = results
	return out, nil
}

// old turns a result of the stage (or step) named name into its old
// shape.
func (o oldShape) old(ctx context.Context, name string, data []byte) ([]byte, error) {
	switch {
	case name == "reduce":
		var r job.ReduceTaskResult
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, err
		}
		slots, err := o.ranges(ctx, r.Routes)
		if err != nil {
			return nil, err
		}
		for k := range r.Parts {
			r.Parts[k].EdgeFiles, r.Parts[k].RequestFiles = slot(slots, 2*k), slot(slots, 2*k+1)
		}
		r.Routes = nil
		return json.Marshal(r)
	case name == "gather":
		var g job.GatherResult
		if err := json.Unmarshal(data, &g); err != nil {
			return nil, err
		}
		slots, err := o.ranges(ctx, g.Routes)
		if err != nil {
			return nil, err
		}
		g.Ranges, g.Routes = slot(slots, 0), nil
		return json.Marshal(g)
	case strings.HasPrefix(name, "cluster-"):
		var r map[string]json.RawMessage
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, err
		}
		raw, ok := r["routes"]
		if !ok {
			return data, nil
		}
		var routes job.Routes
		if err := json.Unmarshal(raw, &routes); err != nil {
			return nil, err
		}
		slots, err := o.ranges(ctx, &routes)
		if err != nil {
			return nil, err
		}
		key := "runs"
		if strings.HasPrefix(name, "cluster-comps") {
			key = "lookups"
		}
		delete(r, "routes")
		if r[key], err = json.Marshal(slot(slots, 0)); err != nil {
			return nil, err
		}
		return json.Marshal(r)
	}
	return data, nil
}

// slot is slots[s], or none.
func slot(slots []map[int]fileinfo.Info, s int) map[int]fileinfo.Info {
	if s < len(slots) {
		return slots[s]
	}
	return map[int]fileinfo.Info{}
}

// ranges reads a route table whole, each slot's ranges by key (none for
// no table), and removes it (an earlier version wrote none).
func (o oldShape) ranges(ctx context.Context, r *job.Routes) ([]map[int]fileinfo.Info, error) {
	if r == nil {
		return nil, nil
	}
	w, err := workfile.LoadRoutes(ctx, o.st, r, 0, r.Keys-1)
	if err != nil {
		return nil, err
	}
	out := make([]map[int]fileinfo.Info, len(r.Slots))
	for s := range out {
		out[s] = map[int]fileinfo.Info{}
	}
	for k := range r.Keys {
		entries, err := w.Entries(k, nil)
		if err != nil {
			return nil, err
		}
		for s, e := range entries {
			if e.Rows > 0 {
				out[s][k] = e
			}
		}
	}
	return out, o.st.Remove(ctx, r.File.Name)
}
