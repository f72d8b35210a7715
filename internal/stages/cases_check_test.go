package stages

import (
	"math"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/job"
	refmodel "github.com/neardup/neardup/internal/reference"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/bands"
	"github.com/neardup/neardup/pkg/records"
	"github.com/neardup/neardup/pkg/shingle"
	"github.com/neardup/neardup/pkg/simhash"
)

// reference is what the document model says of a case's documents,
// computed without the stages: shingle sets from shingle.Shingles hashed
// with xxhash (independent of the fast kernel), token counts from
// shingle.Tokens, and SimHash fingerprints of shingle.HashString values.
type reference struct {
	ords   []int64 // the ordinal of each document, in input order
	id     map[int64]string
	index  map[int64]int // ordinal -> input position
	sets   [][]uint64
	tokens []int
	fps    []uint64
}

func newReference(c *stageCase) *reference {
	o := c.params.ShingleOptions()
	ref := &reference{id: map[int64]string{}, index: map[int64]int{}}
	for i, d := range c.docs {
		ord := job.Ordinal(0, i)
		if c.docsPerChunk > 0 {
			ord = job.Ordinal(i/c.docsPerChunk, i%c.docsPerChunk)
		}
		ref.ords = append(ref.ords, ord)
		ref.id[ord] = d.id
		ref.index[ord] = i
		var hashes []uint64
		for _, s := range shingle.Shingles(d.text, o) {
			hashes = append(hashes, shingle.HashString(s, o))
		}
		ref.sets = append(ref.sets, refmodel.Set(d.text, o))
		ref.tokens = append(ref.tokens, len(shingle.Tokens(d.text, o)))
		ref.fps = append(ref.fps, simhash.Fingerprint(shingle.SortUnique(hashes)))
	}
	return ref
}

func (ref *reference) set(doc int64) []uint64 { return ref.sets[ref.index[doc]] }

// jaccard is the reference similarity of two documents: 0 when either has
// no shingle.
func (ref *reference) jaccard(a, b int64) float64 {
	return refmodel.Jaccard(ref.set(a), ref.set(b))
}

func (ref *reference) distance(a, b int64) int {
	return simhash.Distance(ref.fps[ref.index[a]], ref.fps[ref.index[b]])
}

// mustFind reports whether the method is bound to find a pair: SimHash
// finds every pair within the Hamming distance (pigeonhole); MinHash a
// pair the S-curve misses with probability below 1e-6 (and the
// pre-filter rejects with at most that), or any identical pair.
func mustFind(p job.Params, ref *reference, a, b int64) bool {
	j := ref.jaccard(a, b)
	if j == 1 {
		return true
	}
	if p.Method == "simhash" {
		return ref.distance(a, b) <= p.Hamming && (p.Verify == "estimate" || j >= p.Threshold)
	}
	if p.Verify != "exact" || j < p.Threshold {
		return false
	}
	return 1-bands.Probability(j, p.BandParams()) < 1e-6
}

// checkCase asserts what must hold of every case, whatever its golden
// file says: so that a wrong golden cannot pass silently.
func checkCase(t *testing.T, c *stageCase, ref *reference, r *caseRun) {
	p := c.params

	// pairs/ has a file even without a pair, so that queries of it run.
	if r.pairFile == 0 {
		t.Error("pairs/ holds no file")
	}

	// Documents: input order, ordinal c<<32|i, counted as the model says.
	if len(r.docs) != len(c.docs) {
		t.Fatalf("docs/ holds %d documents, the input %d", len(r.docs), len(c.docs))
	}
	var nonEmpty, shingles int64
	for i, d := range r.docs {
		if d.Doc != ref.ords[i] || d.ID != c.docs[i].id {
			t.Errorf("docs/ row %d: ordinal %#x id %q, want %#x %q", i, d.Doc, d.ID, ref.ords[i], c.docs[i].id)
		}
		if int(d.Tokens) != ref.tokens[i] || int(d.Shingles) != len(ref.sets[i]) {
			t.Errorf("document %s: %d tokens %d shingles, reference %d and %d", d.ID, d.Tokens, d.Shingles, ref.tokens[i], len(ref.sets[i]))
		}
		if len(ref.sets[i]) > 0 {
			nonEmpty++
		}
		shingles += int64(len(ref.sets[i]))
	}
	var mapped job.MapResult
	for _, m := range r.maps {
		mapped.Docs += m.Docs
		mapped.Empty += m.Empty
		mapped.Shingles += m.Shingles
		mapped.BandRecords += m.BandRecords
	}
	if mapped.Docs != int64(len(c.docs)) || mapped.Empty != int64(len(c.docs))-nonEmpty ||
		mapped.Shingles != shingles || mapped.BandRecords != int64(p.Bands)*nonEmpty {
		t.Errorf("map counts docs=%d empty=%d shingles=%d band_records=%d; want %d %d %d %d",
			mapped.Docs, mapped.Empty, mapped.Shingles, mapped.BandRecords,
			len(c.docs), int64(len(c.docs))-nonEmpty, shingles, int64(p.Bands)*nonEmpty)
	}

	// Exact groups: identical non-empty reference sets, and all of them.
	groups := groupsOf(r.exact)
	groupOf := map[int64]int64{} // document -> representative
	byRep := map[int64][]int64{} // representative -> group
	members := func(d int64) []int64 {
		if g, ok := groupOf[d]; ok {
			return byRep[g]
		}
		return []int64{d}
	}
	var claims int64
	for _, g := range groups {
		claims += int64(len(g) - 1)
		byRep[g[0]] = g
		for _, d := range g {
			groupOf[d] = g[0]
			if !slices.Equal(ref.set(d), ref.set(g[0])) || len(ref.set(d)) == 0 {
				t.Errorf("exact group %s: %s has a different or empty shingle set", ref.id[g[0]], ref.id[d])
			}
		}
	}
	for _, e := range r.exact {
		if e.Group != groupOf[e.Doc] || int(e.GroupSize) != len(members(e.Doc)) || e.ID != ref.id[e.Doc] {
			t.Errorf("exact.parquet row %+v is inconsistent", e)
		}
	}
	for i, a := range ref.ords {
		for _, b := range ref.ords[i+1:] {
			if len(ref.set(a)) > 0 && slices.Equal(ref.set(a), ref.set(b)) {
				if ga, ok := groupOf[a]; !ok || ga != groupOf[b] {
					t.Errorf("%s and %s have the same shingle set but are not one exact group", ref.id[a], ref.id[b])
				}
			}
		}
	}
	var reduced job.ReduceResult
	for _, rr := range r.reduces {
		reduced.ExactClaims += rr.ExactClaims
		reduced.PairsNotCompared += rr.PairsNotCompared
	}
	if reduced.ExactClaims != claims || int64(len(r.members)) != claims {
		t.Errorf("%d claims, %d confirmed members; exact.parquet has %d", reduced.ExactClaims, len(r.members), claims)
	}

	// Candidates: representatives only, a < b, sorted and unique within a
	// partition; verify checks each distinct pair once.
	distinct := map[[2]int64]bool{}
	for part, cands := range r.cands {
		if int64(len(cands)) != r.reduces[part].Candidates {
			t.Errorf("partition %d: %d candidates in the file, %d reported", part, len(cands), r.reduces[part].Candidates)
		}
		for i, e := range cands {
			if e.A >= e.B || i > 0 && workfile.CompareEdge(cands[i-1], e) >= 0 {
				t.Errorf("partition %d: candidate %s %s out of order or repeated", part, ref.id[e.A], ref.id[e.B])
			}
			for _, d := range []int64{e.A, e.B} {
				if g, ok := groupOf[d]; ok && g != d {
					t.Errorf("partition %d: candidate %s %s names %s, a member of %s's exact group", part, ref.id[e.A], ref.id[e.B], ref.id[d], ref.id[g])
				}
			}
			distinct[[2]int64{e.A, e.B}] = true
		}
	}
	var checked int64
	for _, v := range r.verifies {
		checked += v.Checked
	}
	if checked != int64(len(distinct)) {
		t.Errorf("verify checked %d pairs, the partitions hold %d distinct candidates", checked, len(distinct))
	}
	for _, pr := range r.verified {
		if !distinct[[2]int64{pr.A, pr.B}] {
			t.Errorf("verified pair %s %s was not a candidate", pr.AID, pr.BID)
		}
	}

	// pairs/: each pair once with a < b, similarities as the method says.
	listed := map[[2]int64]records.Pair{}
	for _, pr := range r.pairs {
		k := [2]int64{pr.A, pr.B}
		if pr.A >= pr.B {
			t.Errorf("pair %s %s: a >= b", pr.AID, pr.BID)
		}
		if _, dup := listed[k]; dup {
			t.Errorf("pair %s %s listed twice", pr.AID, pr.BID)
		}
		listed[k] = pr
		if pr.AID != ref.id[pr.A] || pr.BID != ref.id[pr.B] {
			t.Errorf("pair %d %d: ids %s %s, want %s %s", pr.A, pr.B, pr.AID, pr.BID, ref.id[pr.A], ref.id[pr.B])
		}
		j := ref.jaccard(pr.A, pr.B)
		switch {
		case p.Verify == "exact":
			if pr.Similarity != j || pr.Method != "exact" {
				t.Errorf("pair %s %s: similarity %v (%s), exact Jaccard %v", pr.AID, pr.BID, pr.Similarity, pr.Method, j)
			}
		case p.Method == "minhash":
			// The estimate: 1 for identical sets, else within 6 standard errors.
			if se := math.Sqrt(j * (1 - j) / float64(p.K)); math.Abs(pr.Similarity-j) > 6*se || pr.Similarity != pr.Estimate {
				t.Errorf("pair %s %s: estimate %v, exact Jaccard %v", pr.AID, pr.BID, pr.Similarity, j)
			}
		}
		if (p.Method == "minhash" || p.Verify == "exact") && pr.Similarity < p.Threshold {
			t.Errorf("pair %s %s: similarity %v below the threshold %v", pr.AID, pr.BID, pr.Similarity, p.Threshold)
		}
		if p.Method == "simhash" {
			if d := ref.distance(pr.A, pr.B); pr.Hamming == nil || int(*pr.Hamming) != d || d > p.Hamming {
				t.Errorf("pair %s %s: Hamming %v, reference distance %d, at most %d", pr.AID, pr.BID, pr.Hamming, d, p.Hamming)
			}
		} else if pr.Hamming != nil {
			t.Errorf("pair %s %s: MinHash pair with a Hamming distance", pr.AID, pr.BID)
		}
	}

	checkBands(t, c, ref, r, groupOf, reduced.PairsNotCompared > 0)

	// Clusters: every listed pair and exact group inside one cluster whose
	// id is its smallest document; one kept document, chosen by --keep;
	// duplicates.parquet the others.
	clusterOf := map[int64]int64{}
	keptOf := map[int64]int64{}
	for _, cl := range clustersOf(r.clusters) {
		var kept []int64
		want := cl[0].Doc
		for _, row := range cl {
			clusterOf[row.Doc] = row.Cluster
			want = min(want, row.Doc)
			if row.Keep {
				kept = append(kept, row.Doc)
			}
			if int(row.ClusterSize) != len(cl) || row.ID != ref.id[row.Doc] {
				t.Errorf("clusters.parquet row %+v: size or id wrong", row)
			}
			if len(ref.set(row.Doc)) == 0 {
				t.Errorf("document %s without shingles is clustered", row.ID)
			}
		}
		if cl[0].Cluster != want || len(kept) != 1 {
			t.Errorf("cluster %s: id %s, %d kept documents", ref.id[cl[0].Cluster], ref.id[want], len(kept))
			continue
		}
		keptOf[want] = kept[0]
		best := want
		for _, row := range cl {
			if p.Keep == "longest" && ref.tokens[ref.index[row.Doc]] > ref.tokens[ref.index[best]] {
				best = row.Doc
			}
		}
		if kept[0] != best {
			t.Errorf("cluster %s keeps %s, --keep %s wants %s", ref.id[want], ref.id[kept[0]], p.Keep, ref.id[best])
		}
	}
	if int64(len(keptOf)) != r.stats.Clusters || int64(len(r.dups)) != r.stats.Duplicates || int64(len(r.pairs)) != r.stats.PairsListed {
		t.Errorf("stats %+v disagree with the files: %d clusters, %d duplicates, %d pairs", r.stats, len(keptOf), len(r.dups), len(r.pairs))
	}
	for _, d := range r.dups {
		if k := keptOf[clusterOf[d.Doc]]; d.Cluster != clusterOf[d.Doc] || d.KeptDoc != k || d.Doc == k || d.KeptID != ref.id[k] {
			t.Errorf("duplicate %+v: cluster %s keeps %s", d, ref.id[clusterOf[d.Doc]], ref.id[k])
		}
	}
	if int64(len(r.dups)) != int64(len(r.clusters))-int64(len(keptOf)) {
		t.Errorf("%d duplicates for %d clustered documents in %d clusters", len(r.dups), len(r.clusters), len(keptOf))
	}
	for d, g := range groupOf {
		if clusterOf[d] != clusterOf[g] {
			t.Errorf("%s and %s: one exact group, two clusters", ref.id[d], ref.id[g])
		}
	}
	bounded := map[int64]bool{}
	for _, bc := range r.stats.Bounded {
		bounded[bc.Cluster] = true
		if bc.NotListed != bc.Pairs-bc.Listed || bc.Listed == 0 || bc.KeptID != ref.id[keptOf[bc.Cluster]] {
			t.Errorf("bounded cluster %+v is inconsistent", bc)
		}
	}
	inCluster := map[int64]int64{} // cluster -> its pairs listed
	for k := range listed {
		inCluster[clusterOf[k[0]]]++
	}
	for cl, n := range inCluster {
		if !bounded[cl] && n > p.MaxClusterPairs {
			t.Errorf("cluster %s lists %d pairs, over --max-cluster-pairs %d, and is not reported", ref.id[cl], n, p.MaxClusterPairs)
		}
	}
	for _, bc := range r.stats.Bounded {
		if bc.Pairs <= p.MaxClusterPairs || bc.Listed != inCluster[bc.Cluster] {
			t.Errorf("bounded cluster %s: %d pairs (bound %d), %d listed, pairs/ holds %d", ref.id[bc.Cluster], bc.Pairs, p.MaxClusterPairs, bc.Listed, inCluster[bc.Cluster])
		}
	}
	for k, pr := range listed {
		ca, oka := clusterOf[k[0]]
		cb, okb := clusterOf[k[1]]
		if !oka || !okb || ca != cb {
			t.Errorf("pair %s %s is not inside one cluster", pr.AID, pr.BID)
			continue
		}
		if bounded[ca] && k[0] != keptOf[ca] && k[1] != keptOf[ca] {
			t.Errorf("pair %s %s of bounded cluster %s does not include its kept document", pr.AID, pr.BID, ref.id[ca])
		}
		// Expansion: a document with the same set has the same pairs.
		ga, gb := members(k[0]), members(k[1])
		if slices.Equal(ga, gb) {
			continue // inside a group: below
		}
		for _, x := range ga {
			for _, y := range gb {
				if bounded[ca] && x != keptOf[ca] && y != keptOf[ca] {
					continue
				}
				if q, ok := listed[[2]int64{min(x, y), max(x, y)}]; !ok || q.Similarity != pr.Similarity {
					t.Errorf("pair %s %s listed, but not %s %s (the same sets) at the same similarity", pr.AID, pr.BID, ref.id[x], ref.id[y])
				}
			}
		}
	}
	for _, g := range groups {
		cl := clusterOf[g[0]]
		for i, x := range g {
			for _, y := range g[i+1:] {
				if bounded[cl] && x != keptOf[cl] && y != keptOf[cl] {
					continue
				}
				if q, ok := listed[[2]int64{x, y}]; !ok || q.Similarity != 1 {
					t.Errorf("exact group %s: pair %s %s not listed with similarity 1", ref.id[g[0]], ref.id[x], ref.id[y])
				}
			}
		}
	}

	// Completeness: every pair the method is bound to find is listed,
	// unless a bound is in force.
	if reduced.PairsNotCompared > 0 {
		return
	}
	for i, a := range ref.ords {
		for _, b := range ref.ords[i+1:] {
			if len(ref.set(a)) == 0 || len(ref.set(b)) == 0 || !mustFind(p, ref, a, b) {
				continue
			}
			if cl := clusterOf[a]; bounded[cl] && a != keptOf[cl] && b != keptOf[cl] {
				continue
			}
			if _, ok := listed[[2]int64{a, b}]; !ok {
				t.Errorf("pair %s %s (Jaccard %.4f, SimHash distance %d) is not listed", ref.id[a], ref.id[b], ref.jaccard(a, b), ref.distance(a, b))
			}
		}
	}
}

// checkBands checks each verified and listed pair's bands_collided and
// first_band against a brute-force count over the documents' band records
// (bands/), and first_band against the candidates: the lowest band of the
// candidate rows of the pair's representatives (at most that when a
// bounded bucket left pairs not compared), or band 0 of all b bands for
// two documents of one exact group, which were never candidates.
func checkBands(t *testing.T, c *stageCase, ref *reference, r *caseRun, groupOf map[int64]int64, bounded bool) {
	t.Helper()
	p := c.params
	keys := map[int64][]uint64{} // document -> band keys, by band
	for _, rec := range r.bands {
		if keys[rec.Doc] == nil {
			keys[rec.Doc] = make([]uint64, p.Bands)
		}
		keys[rec.Doc][rec.Band] = uint64(rec.Key)
	}
	lowest := map[[2]int64]int32{} // candidate pair -> its lowest band over the partitions
	for _, cands := range r.cands {
		for _, e := range cands {
			k := [2]int64{e.A, e.B}
			if b, ok := lowest[k]; !ok || e.Band < b {
				lowest[k] = e.Band
			}
		}
	}
	rep := func(d int64) int64 {
		if g, ok := groupOf[d]; ok {
			return g
		}
		return d
	}
	for _, pr := range append(slices.Clone(r.verified), r.pairs...) {
		var n, first int32 = 0, -1
		ka, kb := keys[pr.A], keys[pr.B]
		for band := range p.Bands {
			if ka != nil && kb != nil && ka[band] == kb[band] {
				if n == 0 {
					first = int32(band)
				}
				n++
			}
		}
		if pr.BandsCollided != n || pr.FirstBand != first || n < 1 {
			t.Errorf("pair %s %s: bands_collided %d first_band %d, the band records say %d and %d", pr.AID, pr.BID, pr.BandsCollided, pr.FirstBand, n, first)
		}
		ra, rb := rep(pr.A), rep(pr.B)
		if ra == rb {
			if n != int32(p.Bands) || first != 0 {
				t.Errorf("pair %s %s of one exact group collides in %d bands from band %d, want all %d from 0", pr.AID, pr.BID, n, first, p.Bands)
			}
			continue
		}
		low, ok := lowest[[2]int64{min(ra, rb), max(ra, rb)}]
		if !ok || pr.FirstBand > low || !bounded && pr.FirstBand != low {
			t.Errorf("pair %s %s: first_band %d, its representatives' candidate rows %d (found %v)", ref.id[pr.A], ref.id[pr.B], pr.FirstBand, low, ok)
		}
	}
}
