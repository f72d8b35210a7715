package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/unionfind"
	"github.com/neardup/neardup/internal/workfile"
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
func referenceCluster(ctx context.Context, st storage.FS, p job.Params, verifies []job.VerifyResult, mapResults map[int]job.MapResult) (*stage.ClusterStats, error) {
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
		err := workfile.ReadVerifiedMembers(ctx, st, v.MembersFile, func(r records.ExactMember) error {
			groups[r.Group] = append(groups[r.Group], groupMember{doc: r.Doc, id: r.ID, url: r.URL})
			repOf[r.Group] = groupMember{doc: r.Group, id: r.GroupID, url: r.GroupURL}
			uf.Union(r.Group, r.Doc)
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
		err := workfile.ReadVerifiedPairs(ctx, st, v.File, func(rows []records.Pair) error {
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

	stats := &stage.ClusterStats{SizeHist: make([]int64, 31)}
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
			clusters = append(clusters, records.ClusterRecord{Doc: d, ID: m.id, Cluster: id, ClusterSize: size, Keep: d == k, URL: m.url})
			if d != k {
				dups = append(dups, records.Duplicate{Doc: d, ID: m.id, URL: m.url, Cluster: id, KeptDoc: k, KeptID: members[k].id, KeptURL: members[k].url})
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
	if _, err := pqfile.Write(ctx, st, job.ExactFile, exact, pqfile.Sorted("group_doc", "doc")); err != nil {
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
	var ndocs int64
	for _, m := range mapResults {
		ndocs += m.Docs
	}
	listed, keptListed, err := refPairs(ctx, st, p, verifies, comps, members, groups, bounded, densePairs(npairs, ndocs))
	if err != nil {
		return nil, err
	}
	stats.PairsListed = listed
	// The report's examples, chosen from every pair pairs/ lists, read
	// back: the stage chooses them as it writes.
	if stats.Examples, err = examplesOf(ctx, st, p.Threshold, verifies); err != nil {
		return nil, err
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
	stats.Bounded = stats.Bounded[:min(len(stats.Bounded), stage.TopClusters)]
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
	for _, i := range order[:min(len(order), stage.TopClusters)] {
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

// refPairs writes pairs/ (Dense if dense) from its definition, not by
// expanding groups as the cluster stage does: two documents of a cluster
// are a listed pair when they have one representative (an exact-duplicate
// group: similarity 1) or their representatives are a verified pair (that
// pair's row with their ids); in a bounded cluster only the pairs of its
// kept document are listed. A pair goes to the file of the verify task
// that verified its representatives, or that holds its group's members,
// sorted by (a, b). It returns the pairs listed, and by bounded cluster
// those of its kept document.
func refPairs(ctx context.Context, st storage.FS, p job.Params, verifies []job.VerifyResult, comps [][]int64,
	members map[int64]*refMember, groups map[int64][]groupMember, bounded map[int]int64, dense bool) (int64, map[int]int64, error) {
	repOf := map[int64]int64{}
	for rep, g := range groups {
		for _, m := range g {
			repOf[m.doc] = rep
		}
	}
	rep := func(d int64) int64 {
		if r, ok := repOf[d]; ok {
			return r
		}
		return d
	}
	type found struct {
		row   records.Pair
		chunk int
	}
	verified := map[[2]int64]found{} // by representatives, smaller first
	groupChunk := map[int64]int{}    // the verify task holding a group's members
	for _, v := range verifies {
		if v.File != nil {
			err := workfile.ReadVerifiedPairs(ctx, st, v.File, func(rows []records.Pair) error {
				for _, r := range rows {
					verified[[2]int64{min(r.A, r.B), max(r.A, r.B)}] = found{r, v.Chunk}
				}
				return nil
			})
			if err != nil {
				return 0, nil, err
			}
		}
		if v.MembersFile != nil {
			err := workfile.ReadVerifiedMembers(ctx, st, v.MembersFile, func(r records.ExactMember) error {
				groupChunk[r.Group] = v.Chunk
				return nil
			})
			if err != nil {
				return 0, nil, err
			}
		}
	}
	// Identical shingle sets: similarity 1 by exact verification, by the
	// signature estimate (equal signatures) and by SimHash (distance 0),
	// colliding in every band.
	identical := records.Pair{Similarity: 1, Estimate: 1, Method: p.Method.String(), BandsCollided: int32(p.Bands)}
	if p.Verify == job.VerifyExact {
		identical.Method = "exact"
	}
	if p.Method == job.MethodSimHash {
		identical.Hamming = new(int32)
	}
	files := map[int][]records.Pair{}
	keptListed := map[int]int64{}
	var listed int64
	for i, c := range comps {
		docs := slices.Sorted(slices.Values(c))
		k, isBounded := bounded[i]
		for x, a := range docs {
			for _, b := range docs[x+1:] {
				if isBounded && a != k && b != k {
					continue
				}
				ra, rb := rep(a), rep(b)
				var f found
				if ra == rb {
					f = found{identical, groupChunk[ra]}
				} else if v, ok := verified[[2]int64{min(ra, rb), max(ra, rb)}]; ok {
					f = v
				} else {
					continue
				}
				row := f.row
				row.A, row.B, row.AID, row.BID, row.AURL, row.BURL = a, b, members[a].id, members[b].id, members[a].url, members[b].url
				files[f.chunk] = append(files[f.chunk], row)
				listed++
				if isBounded {
					keptListed[i]++
				}
			}
		}
	}
	for _, chunk := range slices.Sorted(maps.Keys(files)) {
		rows := files[chunk]
		slices.SortFunc(rows, func(x, y records.Pair) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) })
		if _, err := pqfile.Write(ctx, st, job.PairFile(chunk), rows, pairOptions(dense)); err != nil {
			return 0, nil, err
		}
	}
	return listed, keptListed, nil
}

// examplesOf chooses the example pairs of the pairs pairs/ lists (a file
// per verify task that found some).
func examplesOf(ctx context.Context, st storage.FS, threshold float64, verifies []job.VerifyResult) ([]manifest.Example, error) {
	c := manifest.NewExampleChooser(threshold)
	for _, v := range verifies {
		name := job.PairFile(v.Chunk)
		if f, err := st.Open(ctx, name); errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, err
		} else {
			f.Close()
		}
		err := pqfile.Stream(ctx, st, name, nil, 4096, func(rows []records.Pair) error {
			for _, r := range rows {
				c.Add(manifest.Example{A: r.A, B: r.B, AID: r.AID, BID: r.BID, Similarity: r.Similarity, Estimate: r.Estimate,
					Method: r.Method, Hamming: r.Hamming, BandsCollided: r.BandsCollided, FirstBand: r.FirstBand})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return c.Examples(), nil
}
