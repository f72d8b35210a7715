package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/records"
)

// outputResult is what a task of the output step reports.
type outputResult struct {
	// Listed counts the pairs written to pairs/, KeptListed those of kept
	// documents of bounded clusters, Top those of each bounded cluster
	// the step named.
	Listed     int64           `json:"listed,omitempty"`
	Against    int64           `json:"against,omitempty"` // of Listed, pairs with an earlier job's document
	KeptListed int64           `json:"kept_listed,omitempty"`
	Top        map[int64]int64 `json:"top,omitempty"`
	// Examples are the pairs the task's manifest.ExampleChooser kept of
	// those it listed.
	Examples []manifest.Example `json:"examples,omitempty"`
	// Rows counts the rows of clusters.parquet, duplicates.parquet or
	// exact.parquet, and ExactGroups and ExactDuplicates the latter's
	// groups and their documents beyond one per group.
	Rows            int64 `json:"rows,omitempty"`
	ExactGroups     int64 `json:"exact_groups,omitempty"`
	ExactDuplicates int64 `json:"exact_duplicates,omitempty"`
}

// outputTask writes the stage's outputs: task i below the number of
// verify tasks writes the pairs/ file of the i-th, the next three
// clusters.parquet, duplicates.parquet and exact.parquet.
func outputTask(ctx context.Context, st storage.FS, spec *job.Spec, s *clusterStep, i int) (*outputResult, error) {
	n := len(s.Verifies)
	switch i - n {
	case 0:
		rows, err := mergeRuns(ctx, st, s.Clusters, job.ClustersFile, outputFile("cluster", "doc"), func(x, y records.ClusterRecord) int {
			return cmp.Or(cmp.Compare(x.Cluster, y.Cluster), cmp.Compare(x.Doc, y.Doc))
		})
		return &outputResult{Rows: rows}, err
	case 1:
		rows, err := mergeRuns(ctx, st, s.Duplicates, job.DuplicatesFile, outputFile("doc"), func(x, y records.Duplicate) int {
			return cmp.Compare(x.Doc, y.Doc)
		})
		return &outputResult{Rows: rows}, err
	case 2:
		return writeExact(ctx, st, spec, s.Verifies)
	}
	return expandTask(ctx, st, spec, s, s.Verifies[i])
}

// expandTask writes the pairs/ file of one verify task (see expander),
// with what the components step sent it.
func expandTask(ctx context.Context, st storage.FS, spec *job.Spec, s *clusterStep, v verifyFiles) (*outputResult, error) {
	lookups, err := readParts(ctx, st, s.Runs, v.Chunk%s.Parts, decodeLookupRow, nil)
	if err != nil {
		return nil, fmt.Errorf("pairs: %w", err)
	}
	return expandChunk(ctx, st, spec, v, lookups, s.Top, s.DensePairs)
}

// expandChunk writes the pairs/ file of verify task v (see expander), given
// lookup rows that include those of its chunk, and counts the pairs listed
// of each bounded cluster of top; dense: the file is Dense (see
// densePairs).
func expandChunk(ctx context.Context, st storage.FS, spec *job.Spec, v verifyFiles, lookups []lookupRow, top []int64, dense bool) (*outputResult, error) {
	x := newExpander(spec)
	x.dense = dense
	for _, r := range lookups {
		switch {
		case int(r.Chunk) != v.Chunk:
		case r.Kind == lookupKept:
			x.bounded[r.Node] = keptDoc{cluster: r.Cluster, doc: r.Doc}
		case r.Kind == lookupUnpublished:
			x.unpublished[r.Node] = true
		default:
			x.groups[r.Node] = append(x.groups[r.Node], groupMember{doc: r.Doc, id: r.ID, url: r.URL})
		}
	}
	err := readVerified(ctx, st, v, nil, func(r records.ExactMember) error {
		if len(x.reps) == 0 || x.reps[len(x.reps)-1] != r.Group {
			x.reps = append(x.reps, r.Group)
			x.repOf[r.Group] = groupMember{doc: r.Group, id: r.GroupID, url: r.GroupURL}
		}
		x.groups[r.Group] = append(x.groups[r.Group], groupMember{doc: r.Doc, id: r.ID, url: r.URL})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pairs: %w", err)
	}
	w, err := x.write(ctx, st, v)
	if err != nil {
		return nil, err
	}
	res := &outputResult{Listed: w.listed, Against: w.against, Top: map[int64]int64{}, Examples: w.examples.Kept()}
	for _, n := range w.keptListed {
		res.KeptListed += n
	}
	for _, c := range top {
		if n := w.keptListed[c]; n > 0 {
			res.Top[c] = n
		}
	}
	return res, nil
}

// writeExact writes exact.parquet: every document of an exact-duplicate
// group, by (group, doc), from the verify tasks' members in chunk order
// (a group's members are all in its representative's chunk's file).
//
// A group of earlier jobs' documents only (--against) is theirs, not
// written.
func writeExact(ctx context.Context, st storage.FS, spec *job.Spec, verifies []verifyFiles) (*outputResult, error) {
	w, err := pqfile.NewWriter[records.ExactRecord](ctx, st, job.ExactFile, outputFile("group_doc", "doc"))
	if err != nil {
		return nil, err
	}
	res := &outputResult{}
	var group []records.ExactMember // the members of one group
	rows := make([]records.ExactRecord, 0, 64)
	flush := func() error {
		if len(group) == 0 {
			return nil
		}
		g := group[0]
		if spec.Earlier(group[len(group)-1].Doc) {
			group = group[:0]
			return nil
		}
		size := int32(len(group) + 1)
		rows = append(rows[:0], records.ExactRecord{Doc: g.Group, ID: g.GroupID, Group: g.Group, GroupSize: size})
		for _, m := range group {
			rows = append(rows, records.ExactRecord{Doc: m.Doc, ID: m.ID, Group: m.Group, GroupSize: size})
		}
		res.ExactGroups++
		res.ExactDuplicates += int64(len(group))
		res.Rows += int64(len(rows))
		group = group[:0]
		return w.Write(rows)
	}
	for _, v := range verifies {
		err := readVerified(ctx, st, v, nil, func(m records.ExactMember) error {
			if len(group) > 0 && group[0].Group != m.Group {
				if m.Group < group[0].Group {
					return fmt.Errorf("%s: group %d after group %d", v.Members.Name, m.Group, group[0].Group)
				}
				if err := flush(); err != nil {
					return err
				}
			}
			group = append(group, m)
			return nil
		})
		if err != nil {
			w.Abort()
			return nil, fmt.Errorf("exact groups: %w", err)
		}
	}
	if err := flush(); err != nil {
		w.Abort()
		return nil, err
	}
	if _, err := w.Close(); err != nil {
		return nil, err
	}
	return res, nil
}

// outputGroupRows bounds the rows of a row group of clusters.parquet,
// duplicates.parquet and exact.parquet, which their writers hold in memory
// while they merge.
const outputGroupRows = 1 << 16

// outputFile describes a job output sorted by cols.
func outputFile(cols ...string) pqfile.Options {
	return pqfile.Options{SortedBy: cols, RowGroupRows: outputGroupRows}
}

// mergeFanIn bounds the runs a merge reads at once: each holds a batch
// of rows and a Parquet reader's buffers, so more runs are merged in
// passes of mergeFanIn runs into intermediate runs.
const mergeFanIn = 8

// mergeRuns writes the rows of sorted runs to name in the order compare
// gives (see mergeInto), and returns the rows written.
func mergeRuns[T any](ctx context.Context, st storage.FS, runs []*fileinfo.Info, name string, o pqfile.Options, compare func(x, y T) int) (int64, error) {
	w, err := pqfile.NewWriter[T](ctx, st, name, o)
	if err != nil {
		return 0, err
	}
	if _, err := mergeInto(ctx, st, runs, name, o.RowGroupRows, compare, w.Write); err != nil {
		w.Abort()
		return 0, err
	}
	info, err := w.Close()
	return info.Rows, err
}

// mergeInto calls emit with the rows of sorted runs in the order compare
// gives, a batch at a time, holding a batch of at most mergeFanIn runs
// at a time, and returns the rows emitted. With more runs, it merges
// them in passes through intermediate runs in the work area (named after
// name, the file the rows are for, of row groups of groupRows), removed
// after.
func mergeInto[T any](ctx context.Context, st storage.FS, runs []*fileinfo.Info, name string, groupRows int, compare func(x, y T) int, emit func([]T) error) (int64, error) {
	runs = slices.DeleteFunc(slices.Clone(runs), func(r *fileinfo.Info) bool { return r == nil })
	var temps []string
	defer func() {
		for _, t := range temps {
			st.Remove(ctx, t)
		}
	}()
	for pass := 0; len(runs) > mergeFanIn; pass++ {
		var next []*fileinfo.Info
		for i := 0; i < len(runs); i += mergeFanIn {
			tmp := job.ClusterTaskFile("merge", pass, fmt.Sprintf("%s-%05d.parquet", strings.ReplaceAll(name, "/", "-"), i/mergeFanIn))
			temps = append(temps, tmp)
			info, err := mergeTo(ctx, st, runs[i:min(i+mergeFanIn, len(runs))], tmp, pqfile.Options{Raw: true, RowGroupRows: groupRows}, compare)
			if err != nil {
				return 0, err
			}
			next = append(next, &info)
		}
		runs = next
	}
	rows, err := merge(ctx, st, runs, compare, emit)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return rows, nil
}

// mergeTo merges runs, at most mergeFanIn, into the file name.
func mergeTo[T any](ctx context.Context, st storage.FS, runs []*fileinfo.Info, name string, o pqfile.Options, compare func(x, y T) int) (fileinfo.Info, error) {
	w, err := pqfile.NewWriter[T](ctx, st, name, o)
	if err != nil {
		return fileinfo.Info{}, err
	}
	if _, err := merge(ctx, st, runs, compare, w.Write); err != nil {
		w.Abort()
		return fileinfo.Info{}, fmt.Errorf("%s: %w", name, err)
	}
	return w.Close()
}

// merge calls emit with the rows of sorted runs in the order compare gives,
// a batch at a time.
func merge[T any](ctx context.Context, st storage.Opener, runs []*fileinfo.Info, compare func(x, y T) int, emit func([]T) error) (int64, error) {
	var srcs []workfile.Source[T]
	var readers []*pqfile.Reader[T]
	defer func() {
		for _, r := range readers {
			r.Close()
		}
	}()
	for _, info := range runs {
		if info == nil {
			continue
		}
		r, err := pqfile.Open[T](ctx, st, info.Name, info)
		if err != nil {
			return 0, err
		}
		readers = append(readers, r)
		srcs = append(srcs, &runSource[T]{r: r, buf: make([]T, 1024)})
	}
	m, err := workfile.NewMerge(compare, srcs...)
	if err != nil {
		return 0, err
	}
	out := make([]T, 0, 4096)
	var rows int64
	for {
		row, ok, err := m.Next()
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		out = append(out, row)
		rows++
		if len(out) == cap(out) {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			if err := emit(out); err != nil {
				return 0, err
			}
			out = out[:0]
		}
	}
	if len(out) > 0 {
		if err := emit(out); err != nil {
			return 0, err
		}
	}
	return rows, nil
}

// runSource is one run of a merge: its current batch, and the position
// of its next row in it.
type runSource[T any] struct {
	r    *pqfile.Reader[T]
	buf  []T
	i, n int
}

// Next returns the run's next row, reading its next batch when the
// current one is used up.
func (c *runSource[T]) Next() (T, bool, error) {
	for c.i == c.n {
		n, err := c.r.Read(c.buf)
		c.i, c.n = 0, n
		if n > 0 {
			break
		}
		if errors.Is(err, io.EOF) {
			var zero T
			return zero, false, nil
		}
		if err != nil {
			var zero T
			return zero, false, err
		}
	}
	c.i++
	return c.buf[c.i-1], true, nil
}
