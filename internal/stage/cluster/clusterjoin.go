package cluster

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"

	"github.com/parquet-go/parquet-go"
	"golang.org/x/sync/errgroup"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/records"
)

// Once every document has its label, two steps bring each component's
// documents together, partitioned by label:
//
//   - nodes (by document partition) joins the partition's labels with
//     its chunks' document files, exact groups and verified pairs, and
//     sends each row to the partition of its label;
//   - components (by label partition) takes each component whole: it
//     chooses the kept document, counts the complete pairs, writes its
//     sorted runs of clusters.parquet and duplicates.parquet, and tells
//     each verify chunk what expanding its pairs needs from elsewhere
//     (lookupRow).
//
// Neither holds more than one partition's documents.

// nodesResult is what a task of the nodes step reports.
type nodesResult struct {
	// Routes is the route table of the rows written, by label partition;
	// Runs, what an earlier version reported instead.
	Routes *job.Routes           `json:"routes,omitempty"`
	Runs   map[int]fileinfo.Info `json:"runs,omitempty"`
	Rows   int64                 `json:"rows"`
}

// nodesTask sends the partition's documents (with their ids, urls and
// lengths), group members and verified pairs to the partitions of their
// components' labels.
func nodesTask(ctx context.Context, st storage.FS, s *clusterStep, part int) (*nodesResult, error) {
	var labels []records.Candidate // (document, label), by document
	if part < len(s.Labels) && s.Labels[part] != nil {
		var err error
		if labels, err = workfile.ReadEdges(ctx, st, *s.Labels[part], nil); err != nil {
			return nil, fmt.Errorf("clusters: %w", err)
		}
	}
	rows, err := labelledRows(ctx, st, s, part, labels)
	if err != nil {
		return nil, err
	}
	// Grouped by destination, not sorted: the components step sorts the
	// rows it receives from every task.
	dest := func(r compRow) int { return partOf(r.Label, s.Parts) }
	groupByKey(rows, s.Parts, dest)
	res := &nodesResult{Rows: int64(len(rows))}
	file := job.ClusterTaskFile(s.Name, part, "rows")
	runs, err := workfile.WriteRuns(ctx, st, file, rows, dest, appendCompRow)
	if err != nil {
		return nil, err
	}
	res.Routes, err = routeRuns(ctx, st, s.Name, part, file, runs)
	return res, err
}

// labelledRows returns the rows of partition part: its documents, whose
// labels are labels ((document, label), by document), with their ids,
// urls, lengths and keep rule values from the chunks' document files
// (s.Docs) and, for an earlier job's documents that job dropped, what
// it kept in their place (its index's dropped lists, s.Dropped), and the
// group members and verified pairs of the verify files it reads, each
// with its component's label. The rows are in no particular order.
func labelledRows(ctx context.Context, st storage.Opener, s *clusterStep, part int, labels []records.Candidate) ([]compRow, error) {
	find := func(doc int64) (int, bool) {
		return slices.BinarySearchFunc(labels, doc, func(e records.Candidate, d int64) int { return cmp.Compare(e.A, d) })
	}
	// The pairs come by first document: each one's label is looked up
	// once, not once a pair.
	at := 0 // the last label found
	label := func(doc int64) (int64, error) {
		if at < len(labels) && labels[at].A == doc {
			return labels[at].B, nil
		}
		i, ok := find(doc)
		if !ok {
			return 0, fmt.Errorf("clusters: document %d of a verified pair or group has no label", doc)
		}
		at = i
		return labels[i].B, nil
	}

	rows := make([]compRow, len(labels), len(labels)+verifiedRows(s, part))
	chunks := map[int]bool{}
	for i, l := range labels {
		rows[i] = compRow{Label: l.B, Kind: rowDoc, A: l.A}
		chunks[job.ChunkOf(l.A)] = true
	}
	// Each chunk's documents fill their own rows: the chunks at once.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, c := range slices.Sorted(maps.Keys(chunks)) {
		g.Go(func() error { return fillDocRows(gctx, st, s, c, rows, find) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}

	for _, v := range s.Verifies {
		read, filter := v.share(part, s.Parts)
		if !read {
			continue
		}
		err := readVerified(ctx, st, v, func(p pairEnds) error {
			if filter && partOf(p.A, s.Parts) != part {
				return nil
			}
			l, err := label(p.A)
			rows = append(rows, compRow{Label: l, Kind: rowPair, A: p.A, B: p.B})
			return err
		}, func(m records.ExactMember) error {
			if filter && partOf(m.Group, s.Parts) != part {
				return nil
			}
			l, err := label(m.Group)
			rows = append(rows, compRow{Label: l, Kind: rowMember, A: m.Group, B: m.Doc, ID: m.ID, URL: m.URL})
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("clusters: %w", err)
		}
	}
	return rows, nil
}

// fillDocRows fills the rows of chunk c's documents among rows (those
// find finds) with their ids, urls, tokens and ranks, and marks those an
// earlier job dropped.
func fillDocRows(ctx context.Context, st storage.Opener, s *clusterStep, c int, rows []compRow, find func(doc int64) (int, bool)) error {
	info, ok := s.Docs[c]
	if !ok {
		return fmt.Errorf("clusters: chunk %d has no map result", c)
	}
	fill := func(i int, d docInfo) {
		rows[i].ID, rows[i].URL, rows[i].Tokens = d.ID, d.URL, d.Tokens
		if rk := rankOf(d); rk.HasNum || rk.HasStr {
			rows[i].setMore().Rank = rk
		}
	}
	// The rows of the clustered documents only, by their columns (a
	// fraction of the chunk's); a file without those columns, of an
	// earlier build, row by row.
	read, err := pqfile.Select(ctx, st, info.Name, &info, "doc", func(doc int64) bool { _, ok := find(doc); return ok }, docInfoColumns(),
		func(doc int64, v []parquet.Value) error {
			i, _ := find(doc)
			fill(i, docInfoOf(doc, v))
			return nil
		})
	if err == nil && !read {
		err = pqfile.Stream(ctx, st, info.Name, &info, 4096, func(docs []docInfo) error {
			for _, d := range docs {
				if i, ok := find(d.Doc); ok {
					fill(i, d)
				}
			}
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("clusters: %w", err)
	}
	// An earlier job's documents it dropped: never published.
	l, ok := s.Dropped[c]
	if !ok {
		return nil
	}
	err = index.StreamDropped(ctx, st, l.Info, l.First, l.Count, func(docs []droppedInfo) error {
		for _, d := range docs {
			if i, ok := find(d.Doc); ok {
				m := rows[i].setMore()
				m.Dropped, m.Rep = true, keptRep{Doc: d.KeptDoc, ID: d.KeptID, URL: d.KeptURL}
				if d.KeptJob != nil {
					m.Rep.Job = *d.KeptJob
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clusters: %w", err)
	}
	return nil
}

// verifiedRows counts the pairs and group members of the verify files
// partition part reads, those of other partitions in spread chunks too.
func verifiedRows(s *clusterStep, part int) int {
	var n int64
	for _, v := range s.Verifies {
		if read, _ := v.share(part, s.Parts); read {
			for _, f := range []*fileinfo.Info{v.Pairs, v.Members} {
				if f != nil {
					n += f.Rows
				}
			}
		}
	}
	return int(n)
}

// groupByKey reorders rows in place so that their keys, each below keys,
// ascend (in no given order inside a key): one pass to count and one to
// move each row to its key's place, where sorting would compare.
func groupByKey[T any](rows []T, keys int, key func(T) int) {
	next := make([]int, keys) // where the next row of each key goes
	end := make([]int, keys)
	for _, r := range rows {
		end[key(r)]++
	}
	for k, sum := 0, 0; k < keys; k++ {
		next[k] = sum
		sum += end[k]
		end[k] = sum
	}
	for k := range keys {
		for next[k] < end[k] {
			// Swap the row at k's place into its own key's place, until
			// a row of key k comes there.
			r := rows[next[k]]
			if rk := key(r); rk != k {
				rows[next[k]], rows[next[rk]] = rows[next[rk]], r
				next[rk]++
				continue
			}
			next[k]++
		}
	}
}

// workFile describes a file that one step passes to the next, sorted by
// cols: read soon and once, it is not worth compressing.
func workFile(cols ...string) pqfile.Options { return pqfile.Options{SortedBy: cols, Raw: true} }

// readParts appends what every task of the previous step wrote for part
// to dst.
func readParts[T any](ctx context.Context, st storage.Opener, runs []map[int]fileinfo.Info, part int, dec func([]byte) (T, int), dst []T) ([]T, error) {
	var rows int64
	for _, r := range runs {
		rows += r[part].Rows
	}
	dst = slices.Grow(dst, int(rows))
	for _, r := range runs {
		info, ok := r[part]
		if !ok {
			continue
		}
		var err error
		if dst, err = workfile.ReadRun(ctx, st, info, dec, dst); err != nil {
			return nil, fmt.Errorf("clusters: %w", err)
		}
	}
	return dst, nil
}

// componentsResult is what a task of the components step reports: its
// share of the stage's statistics (Bounded without the pairs listed,
// which the output step counts) and its files.
type componentsResult struct {
	Stats stage.ClusterStats `json:"stats"`
	// BoundedPairs is the complete pairs of the bounded clusters.
	BoundedPairs int64          `json:"bounded_pairs"`
	Clusters     *fileinfo.Info `json:"clusters,omitempty"`
	Duplicates   *fileinfo.Info `json:"duplicates,omitempty"`
	// Routes is the route table of the lookup rows written, by verify
	// chunk partition; Lookups, what an earlier version reported instead.
	Routes  *job.Routes           `json:"routes,omitempty"`
	Lookups map[int]fileinfo.Info `json:"lookups,omitempty"`
}

// component is one component's rows, in compRow order.
type component struct {
	label   int64
	docs    []compRow // by document
	members []compRow // by representative, then member
	pairs   []compRow // by (a, b)
}

// groups returns the component's exact groups, by representative: the
// range of its members in c.members.
func (c *component) groups() map[int64][2]int {
	groups := map[int64][2]int{}
	for lo := 0; lo < len(c.members); {
		hi := lo
		for hi < len(c.members) && c.members[hi].A == c.members[lo].A {
			hi++
		}
		groups[c.members[lo].A] = [2]int{lo, hi}
		lo = hi
	}
	return groups
}

// completePairs counts the pairs of the component once its groups are
// expanded: those inside each group, and each verified pair of
// representatives times the sizes of their groups.
func (c *component) completePairs(groups map[int64][2]int) int64 {
	size := func(rep int64) int64 {
		g := groups[rep]
		return int64(g[1]-g[0]) + 1
	}
	var total int64
	for rep := range groups {
		g := size(rep)
		total += g * (g - 1) / 2
	}
	for _, pr := range c.pairs {
		total += size(pr.A) * size(pr.B)
	}
	return total
}

// lookups appends to dst what the verify chunks of the component's pairs
// and groups need to expand them: in a bounded cluster, its kept document
// for each pair's first document and each representative; and the members
// of the group of a pair's second document that is in another chunk.
func (c *component) lookups(dst []lookupRow, groups map[int64][2]int, bounded bool, kept int64) []lookupRow {
	keptRow := func(doc int64) lookupRow {
		return lookupRow{Chunk: int32(job.ChunkOf(doc)), Kind: lookupKept, Node: doc, Cluster: c.label, Doc: kept}
	}
	for _, pr := range c.pairs {
		if bounded {
			dst = append(dst, keptRow(pr.A))
		}
		// The group of b is in the file of a's chunk only when b is.
		if g, ok := groups[pr.B]; ok && job.ChunkOf(pr.B) != job.ChunkOf(pr.A) {
			for _, m := range c.members[g[0]:g[1]] {
				dst = append(dst, lookupRow{Chunk: int32(job.ChunkOf(pr.A)), Kind: lookupMember, Node: pr.B, Doc: m.B, ID: m.ID, URL: m.URL})
			}
		}
	}
	if bounded {
		for rep := range groups {
			dst = append(dst, keptRow(rep))
		}
	}
	return dst
}

// unpublished appends to dst, for the verify chunk of each pair whose
// first document is an earlier job's (of the component's docs[:earlier]),
// the documents of that side of the pair (the document and its exact
// group) that their job dropped: pairs/ marks the pairs against them.
func (c *component) unpublished(dst []lookupRow, groups map[int64][2]int, earlier int) []lookupRow {
	dropped := map[int64]bool{}
	for _, d := range c.docs[:earlier] {
		if d.dropped() {
			dropped[d.A] = true
		}
	}
	if len(dropped) == 0 {
		return dst
	}
	for _, pr := range c.pairs {
		if !dropped[pr.A] && len(groups) == 0 {
			continue
		}
		note := func(doc int64) {
			if dropped[doc] {
				dst = append(dst, lookupRow{Chunk: int32(job.ChunkOf(pr.A)), Kind: lookupUnpublished, Node: doc})
			}
		}
		note(pr.A)
		if g, ok := groups[pr.A]; ok {
			for _, m := range c.members[g[0]:g[1]] {
				note(m.B)
			}
		}
	}
	return dst
}

// componentsTask takes the components whose labels are in the partition
// whole (see the comment above compRow).
func componentsTask(ctx context.Context, st storage.FS, spec *job.Spec, s *clusterStep, part int) (*componentsResult, error) {
	rows, err := readParts(ctx, st, s.Runs, part, decodeCompRow, nil)
	if err != nil {
		return nil, err
	}
	sortCompRows(rows)
	t, err := takeComponents(ctx, spec, rows, s.Parts)
	if err != nil {
		return nil, err
	}
	res := t.res
	if len(t.clusters) > 0 {
		info, err := pqfile.Write(ctx, st, job.ClusterTaskFile(s.Name, part, "cluster-rows.parquet"), t.clusters, workFile("cluster", "doc"))
		if err != nil {
			return nil, err
		}
		res.Clusters = &info
	}
	if len(t.dups) > 0 {
		info, err := pqfile.Write(ctx, st, job.ClusterTaskFile(s.Name, part, "duplicate-rows.parquet"), t.dups, workFile("doc"))
		if err != nil {
			return nil, err
		}
		res.Duplicates = &info
	}
	file := job.ClusterTaskFile(s.Name, part, "lookups")
	runs, err := workfile.WriteRuns(ctx, st, file, t.lookups, lookupDest(s.Parts), appendLookupRow)
	if err != nil {
		return nil, err
	}
	res.Routes, err = routeRuns(ctx, st, s.Name, part, file, runs)
	return res, err
}

// lookupDest is the partition of the output step whose runs a lookup row
// goes to: its verify chunk's.
func lookupDest(parts int) func(lookupRow) int {
	return func(r lookupRow) int { return int(r.Chunk) % parts }
}
