package stage

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/unionfind"
	"github.com/neardup/neardup/pkg/records"
)

// refMember is what the cluster stage needs of a document.
type refMember struct {
	id     string
	url    string
	tokens int32
}

// referenceCluster is the cluster stage as it was before it ran as tasks:
// one process holding every edge and document, union-find over them. It
// stays here to check that the tasks write the same bytes.
//
// It finds the connected components of the verified pairs and
// exact-duplicate groups, chooses the document each cluster keeps, writes
// clusters.parquet, duplicates.parquet and exact.parquet, and writes
// pairs/ by expanding every verified pair of representatives to the
// members of their groups and listing the pairs inside each group (see
// writePairs). A cluster's id is its smallest ordinal.
func referenceCluster(ctx context.Context, st storage.FS, p job.Params, verifies []job.VerifyResult, mapResults map[int]job.MapResult) (*ClusterStats, error) {
	var npairs int64
	for _, v := range verifies {
		npairs += v.Verified + v.ExactMembers
	}
	uf := unionfind.New(int(min(npairs, 1<<24)))

	// Exact-duplicate groups: representative -> other members, by ordinal.
	groups := map[int64][]groupMember{}
	repOf := map[int64]groupMember{}
	for _, v := range verifies {
		if v.MembersFile == nil {
			continue
		}
		err := pqfile.Stream(ctx, st, v.MembersFile.Name, v.MembersFile, 4096, func(rows []records.ExactMember) error {
			for _, r := range rows {
				groups[r.Group] = append(groups[r.Group], groupMember{doc: r.Doc, id: r.ID, url: r.URL})
				repOf[r.Group] = groupMember{doc: r.Group, id: r.GroupID, url: r.GroupURL}
				uf.Union(r.Group, r.Doc)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("clusters: %w", err)
		}
	}
	groupSize := func(rep int64) int64 { return int64(len(groups[rep])) + 1 }

	// Verified pairs of representatives, and how many pairs each stands
	// for once its groups are refExpanded.
	type weight struct{ a, n int64 }
	weights := make([]weight, 0, npairs)
	for _, v := range verifies {
		if v.File == nil {
			continue
		}
		err := pqfile.Stream(ctx, st, v.File.Name, v.File, 4096, func(rows []records.Pair) error {
			for _, r := range rows {
				uf.Union(r.A, r.B)
				weights = append(weights, weight{r.A, groupSize(r.A) * groupSize(r.B)})
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("clusters: %w", err)
		}
	}
	comps := uf.Components()
	compOf := make(map[int64]int, uf.Len())
	for i, c := range comps {
		for _, d := range c {
			compOf[d] = i
		}
	}
	pairTotal := make([]int64, len(comps))
	for rep := range groups {
		g := groupSize(rep)
		pairTotal[compOf[rep]] += g * (g - 1) / 2
	}
	for _, w := range weights {
		pairTotal[compOf[w.a]] += w.n
	}

	// Read the members' ids, urls and lengths, one chunk's docs at a time.
	members := make(map[int64]*refMember, uf.Len())
	chunks := map[int]bool{}
	for _, c := range comps {
		for _, d := range c {
			members[d] = &refMember{}
			chunks[job.ChunkOf(d)] = true
		}
	}
	for _, c := range slices.Sorted(maps.Keys(chunks)) {
		mr, ok := mapResults[c]
		if !ok {
			return nil, fmt.Errorf("clusters: chunk %d has no map result", c)
		}
		err := pqfile.Stream(ctx, st, mr.DocFile.Name, &mr.DocFile, 4096, func(rows []records.DocRecord) error {
			for _, r := range rows {
				if m := members[r.Doc]; m != nil {
					m.id, m.url, m.tokens = r.ID, r.URL, r.Tokens
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("clusters: %w", err)
		}
	}

	stats := &ClusterStats{SizeHist: make([]int64, 31)}
	kept := make([]int64, len(comps))
	var clusters []records.ClusterRecord
	var dups []records.Duplicate
	for i, c := range comps {
		k := refChooseKept(c, members, p.Keep)
		kept[i] = k
		id := c[0]
		size := int32(len(c))
		stats.Clusters++
		stats.Clustered += int64(size)
		stats.Largest = max(stats.Largest, int64(size))
		stats.SizeHist[min(int(size)-2, len(stats.SizeHist)-1)]++
		stats.CompletePairs += pairTotal[i]
		for _, d := range c {
			m := members[d]
			clusters = append(clusters, records.ClusterRecord{Doc: d, ID: m.id, Cluster: id, ClusterSize: size, Keep: d == k})
			if d != k {
				dups = append(dups, records.Duplicate{Doc: d, ID: m.id, URL: m.url, Cluster: id, KeptDoc: k, KeptID: members[k].id})
			}
		}
	}
	slices.SortFunc(dups, func(a, b records.Duplicate) int { return cmp.Compare(a.Doc, b.Doc) })
	stats.Top = refSummarize(comps, members, p.Keep)
	stats.Duplicates = int64(len(dups))
	if _, err := pqfile.Write(ctx, st, job.ClustersFile, clusters, pqfile.Sorted("cluster", "doc")); err != nil {
		return nil, err
	}
	if _, err := pqfile.Write(ctx, st, job.DuplicatesFile, dups, pqfile.Sorted("doc")); err != nil {
		return nil, err
	}

	// exact.parquet: every document of an exact-duplicate group.
	var exact []records.ExactRecord
	for _, rep := range slices.Sorted(maps.Keys(groups)) {
		g := groupSize(rep)
		stats.ExactGroups++
		stats.ExactDuplicates += g - 1
		exact = append(exact, records.ExactRecord{Doc: rep, ID: repOf[rep].id, Group: rep, GroupSize: int32(g)})
		for _, m := range groups[rep] {
			exact = append(exact, records.ExactRecord{Doc: m.doc, ID: m.id, Group: rep, GroupSize: int32(g)})
		}
	}
	if _, err := pqfile.Write(ctx, st, job.ExactFile, exact, pqfile.Sorted("group", "doc")); err != nil {
		return nil, err
	}

	// Clusters whose complete pair list is too long list their kept
	// document's pairs only.
	bounded := map[int]int64{} // component -> its kept document
	for i, n := range pairTotal {
		if n > p.MaxClusterPairs {
			bounded[i] = kept[i]
		}
	}
	// pairs/ is written whole by this stage: files of an earlier run whose
	// verify tasks do not exist now (the chunks holding pairs moved when a
	// retried chunk brought new representatives) must not stay.
	if err := st.Remove(ctx, job.PairsDir); err != nil {
		return nil, err
	}
	ex := &refExpander{groups: groups, repOf: repOf, compOf: compOf, bounded: bounded, params: p}
	// One pairs/ file per verify task, written in parallel: the workers
	// are idle now, and each file depends on its task's results only.
	written := make([]refExpanded, len(verifies))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, v := range verifies {
		g.Go(func() error {
			var err error
			written[i], err = ex.write(gctx, st, v)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	keptListed := map[int]int64{}
	for _, w := range written {
		stats.PairsListed += w.listed
		for c, n := range w.keptListed {
			keptListed[c] += n
		}
	}
	for _, i := range slices.Sorted(maps.Keys(bounded)) {
		b := manifest.BoundedCluster{Cluster: comps[i][0], Size: int64(len(comps[i])), KeptID: members[kept[i]].id,
			Pairs: pairTotal[i], Listed: keptListed[i]}
		b.NotListed = b.Pairs - b.Listed
		stats.BoundedClusters++
		stats.PairsNotListed += b.NotListed
		stats.Bounded = append(stats.Bounded, b)
	}
	slices.SortStableFunc(stats.Bounded, func(x, y manifest.BoundedCluster) int { return cmp.Compare(y.Pairs, x.Pairs) })
	stats.Bounded = stats.Bounded[:min(len(stats.Bounded), topClusters)]
	return stats, nil
}

// refChooseKept picks the document a cluster keeps: the smallest ordinal (the
// first in input order), or with keep "longest" the one with the most
// tokens, ties going to the smallest ordinal.
func refChooseKept(members []int64, info map[int64]*refMember, keep job.Keep) int64 {
	kept := members[0]
	if keep != "longest" {
		return kept
	}
	for _, d := range members[1:] {
		if info[d].tokens > info[kept].tokens {
			kept = d
		}
	}
	return kept
}

// refSummarize lists the largest clusters (ties: smallest cluster id first).
func refSummarize(comps [][]int64, members map[int64]*refMember, keep job.Keep) []manifest.ClusterSummary {
	order := make([]int, len(comps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(len(comps[b]), len(comps[a])) })
	top := []manifest.ClusterSummary{}
	for _, i := range order[:min(len(order), topClusters)] {
		c := comps[i]
		kept := members[refChooseKept(c, members, keep)]
		s := manifest.ClusterSummary{Cluster: c[0], Size: len(c), KeptID: kept.id, KeptURL: kept.url}
		for _, d := range c[:min(len(c), 5)] {
			s.Members = append(s.Members, members[d].id)
		}
		top = append(top, s)
	}
	return top
}

// refExpander writes pairs/: for each verify task, the verified pairs of
// representatives refExpanded to every member of the two groups (an
// exact-duplicate document has the same similarity as its
// representative), and the pairs inside each group whose representative
// is in the task's chunk (similarity 1). In a bounded cluster only the
// pairs of the kept document are written. Each pair is written once, in
// the file of the verify task that found it, sorted by (a, b).
//
// An refExpander is read-only once built: write may run concurrently.
type refExpander struct {
	groups  map[int64][]groupMember
	repOf   map[int64]groupMember
	compOf  map[int64]int
	bounded map[int]int64
	params  job.Params
}

// refExpanded is what one pairs/ file holds: its pairs, and those of kept
// documents of bounded clusters, by cluster.
type refExpanded struct {
	listed     int64
	keptListed map[int]int64
}

// identical is the pair row of two documents with the same shingle set:
// similarity 1, as exact verification, the signature estimate (equal
// signatures) and SimHash (distance 0) all say, colliding in every band.
func (x *refExpander) identical() records.Pair {
	pr := records.Pair{Similarity: 1, Estimate: 1, Method: x.params.Method.String(), BandsCollided: int32(x.params.Bands), FirstBand: 0}
	if x.params.Verify == "exact" {
		pr.Method = "exact"
	}
	if x.params.Method == "simhash" {
		pr.Hamming = new(int32)
	}
	return pr
}

// group returns the documents of the group represented by rep, rep first.
func (x *refExpander) group(rep groupMember) []groupMember {
	return append([]groupMember{rep}, x.groups[rep.doc]...)
}

func (x *refExpander) write(ctx context.Context, st storage.FS, v job.VerifyResult) (refExpanded, error) {
	res := refExpanded{keptListed: map[int]int64{}}
	var out []records.Pair
	emit := func(comp int, a, b groupMember, tmpl records.Pair) {
		if k, ok := x.bounded[comp]; ok {
			if a.doc != k && b.doc != k {
				return
			}
			res.keptListed[comp]++
		}
		if a.doc > b.doc {
			a, b = b, a
		}
		tmpl.A, tmpl.B, tmpl.AID, tmpl.BID, tmpl.AURL, tmpl.BURL = a.doc, b.doc, a.id, b.id, a.url, b.url
		out = append(out, tmpl)
	}
	if v.File != nil {
		err := pqfile.Stream(ctx, st, v.File.Name, v.File, 4096, func(rows []records.Pair) error {
			for _, r := range rows {
				comp := x.compOf[r.A]
				ga, gb := x.group(groupMember{r.A, r.AID, r.AURL}), x.group(groupMember{r.B, r.BID, r.BURL})
				if k, ok := x.bounded[comp]; ok {
					// Only the kept document's pairs: skip the product.
					ga, gb = onlyKept(ga, gb, k)
				}
				for _, a := range ga {
					for _, b := range gb {
						emit(comp, a, b, r)
					}
				}
			}
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("pairs: %w", err)
		}
	}
	if v.MembersFile != nil {
		var reps []int64
		err := pqfile.Stream(ctx, st, v.MembersFile.Name, v.MembersFile, 4096, func(rows []records.ExactMember) error {
			for _, r := range rows {
				if len(reps) == 0 || reps[len(reps)-1] != r.Group {
					reps = append(reps, r.Group)
				}
			}
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("pairs: %w", err)
		}

		for _, rep := range reps {
			comp := x.compOf[rep]
			g := x.group(x.repOf[rep])
			tmpl := x.identical()
			if k, ok := x.bounded[comp]; ok {
				// Only the kept document's pairs: skip the square.
				for _, a := range g {
					if a.doc == k {
						for _, b := range g {
							if b.doc != k {
								emit(comp, a, b, tmpl)
							}
						}
					}
				}
				continue
			}
			for i, a := range g {
				for _, b := range g[i+1:] {
					emit(comp, a, b, tmpl)
				}
			}
		}
	}
	if len(out) == 0 {
		return res, nil
	}
	slices.SortFunc(out, func(a, b records.Pair) int {
		if c := cmp.Compare(a.A, b.A); c != 0 {
			return c
		}
		return cmp.Compare(a.B, b.B)
	})
	res.listed = int64(len(out))
	_, err := pqfile.Write(ctx, st, job.PairFile(v.Chunk), out, pqfile.Sorted("a", "b"))
	return res, err
}
