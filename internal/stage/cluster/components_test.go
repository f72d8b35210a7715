package cluster

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/stage/mapper"
	"github.com/neardup/neardup/internal/stage/verify"
	"github.com/neardup/neardup/internal/stagetest"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/unionfind"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/internal/worktest"
	"github.com/neardup/neardup/pkg/records"
)

// graphShape makes the edges (a < b) of a test graph over docs, which are
// in ordinal order.
type graphShape func(rng *rand.Rand, docs []int64) [][2]int64

func edge(a, b int64) [2]int64 { return [2]int64{min(a, b), max(a, b)} }

// chain links the documents in the order given.
func chain(docs []int64) [][2]int64 {
	var e [][2]int64
	for i := 1; i < len(docs); i++ {
		e = append(e, edge(docs[i-1], docs[i]))
	}
	return e
}

var graphShapes = map[string]graphShape{
	// A path in ordinal order: each large-star halves it.
	"ordered chain": func(_ *rand.Rand, docs []int64) [][2]int64 { return chain(docs) },
	// A path in descending order of its second half, then ascending.
	"zigzag chain": func(_ *rand.Rand, docs []int64) [][2]int64 {
		h := len(docs) / 2
		order := slices.Clone(docs[h:])
		slices.Reverse(order)
		return chain(append(order, docs[:h]...))
	},
	// A path through the documents in random order.
	"random chain": func(rng *rand.Rand, docs []int64) [][2]int64 {
		order := slices.Clone(docs)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		return chain(order)
	},
	// Stars whose centres are their largest, smallest or a middle node.
	"stars": func(rng *rand.Rand, docs []int64) [][2]int64 {
		var e [][2]int64
		for lo := 0; lo < len(docs); {
			hi := min(len(docs), lo+2+rng.IntN(200))
			centre := docs[lo+[]int{0, hi - lo - 1, (hi - lo) / 2}[rng.IntN(3)]]
			for _, d := range docs[lo:hi] {
				if d != centre {
					e = append(e, edge(centre, d))
				}
			}
			lo = hi
		}
		return e
	},
	// Many components of two to four documents.
	"small components": func(rng *rand.Rand, docs []int64) [][2]int64 {
		order := slices.Clone(docs)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var e [][2]int64
		for lo := 0; lo+1 < len(order); {
			hi := min(len(order), lo+2+rng.IntN(3))
			e = append(e, chain(order[lo:hi])...)
			lo = hi
		}
		return e
	},
	// A sparse random graph: some large components, many small ones.
	"random": func(rng *rand.Rand, docs []int64) [][2]int64 {
		var e [][2]int64
		for range len(docs) * 2 / 3 {
			a, b := docs[rng.IntN(len(docs))], docs[rng.IntN(len(docs))]
			if a != b {
				e = append(e, edge(a, b))
			}
		}
		return e
	},
	// Binary trees over random orders, joined by a few cross edges.
	"trees": func(rng *rand.Rand, docs []int64) [][2]int64 {
		order := slices.Clone(docs)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var e [][2]int64
		for i := 1; i < len(order); i++ {
			if i%500 != 0 {
				e = append(e, edge(order[(i-1)/2], order[i]))
			}
		}
		return e
	},
	"none": func(*rand.Rand, []int64) [][2]int64 { return nil },
}

// spreadDocs returns n documents spread over chunks, in ordinal order.
func spreadDocs(rng *rand.Rand, n, chunks int) []int64 {
	return spreadDocsOver(rng, n, chunks, 4*n/chunks+1)
}

// spreadDocsOver is spreadDocs with indexes within a chunk below span.
func spreadDocsOver(rng *rand.Rand, n, chunks, span int) []int64 {
	seen := map[int64]bool{}
	for len(seen) < n {
		seen[job.Ordinal(rng.IntN(chunks), rng.IntN(span))] = true
	}
	docs := slices.Collect(func(yield func(int64) bool) {
		for d := range seen {
			if !yield(d) {
				return
			}
		}
	})
	slices.Sort(docs)
	return docs
}

// writeVerified writes edges as verify tasks' pair files, by the chunk of
// their first document, with their documents' ids and urls.
func writeVerified(t *testing.T, st storage.FS, edges [][2]int64, id, url func(int64) string, rng *rand.Rand) []job.VerifyResult {
	t.Helper()
	byChunk := map[int][]records.Pair{}
	for _, e := range edges {
		c := job.ChunkOf(e[0])
		byChunk[c] = append(byChunk[c], records.Pair{A: e[0], B: e[1], AID: id(e[0]), BID: id(e[1]), AURL: url(e[0]), BURL: url(e[1]),
			Similarity: float64(80+rng.IntN(21)) / 100, Estimate: float64(rng.IntN(129)) / 128, Method: "exact"})
	}
	var out []job.VerifyResult
	for _, c := range slices.Sorted(func(yield func(int) bool) {
		for c := range byChunk {
			if !yield(c) {
				return
			}
		}
	}) {
		pairs := byChunk[c]
		slices.SortFunc(pairs, func(x, y records.Pair) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) })
		pairs = slices.CompactFunc(pairs, func(x, y records.Pair) bool { return x.A == y.A && x.B == y.B })
		info := worktest.WritePairs(t, st, job.VerifiedFile(c), pairs)
		out = append(out, job.VerifyResult{Chunk: c, Verified: int64(len(pairs)), File: &info})
	}
	return out
}

// TestComponentsMatchUnionFind labels random graphs of documents spread
// over chunks by large-star / small-star tasks, with several partition
// counts, and checks every label against union-find: the same documents,
// each labelled with its component's smallest ordinal. It logs the rounds
// taken and checks they stay logarithmic (a path of n documents in random
// order takes about log2 n).
func TestComponentsMatchUnionFind(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		shape        string
		docs, chunks int
		seed         uint64
	}{
		{"ordered chain", 5000, 7, 1},
		{"zigzag chain", 5000, 7, 2},
		{"random chain", 5000, 7, 3},
		{"random chain", 3, 1, 4},
		{"stars", 4000, 5, 5},
		{"small components", 4000, 9, 6},
		{"random", 4000, 4, 7},
		{"trees", 4000, 6, 8},
		{"none", 100, 3, 9},
	}
	for _, tt := range tests {
		for _, parts := range []int{1, 3, 8} {
			// contracted: the stage's path, each partition's edges first
			// joined by union-find; raw: the rounds alone, from every edge.
			for _, contracted := range []bool{true, false} {
				name := fmt.Sprintf("%s/%d-docs/%d-parts/contracted=%v", tt.shape, tt.docs, parts, contracted)
				t.Run(name, func(t *testing.T) {
					rng := rand.New(rand.NewPCG(tt.seed, 1))
					st := worktest.NewStore(t)
					docs := spreadDocs(rng, tt.docs, tt.chunks)
					edges := graphShapes[tt.shape](rng, docs)
					d := driver{st: st, run: InProcess(st, &job.Spec{Params: job.DefaultParams()})}
					var labelFiles []*fileinfo.Info
					var rounds int
					var err error
					if contracted {
						verifies := writeVerified(t, st, edges, func(d int64) string { return fmt.Sprint(d) }, func(int64) string { return "" }, rng)
						var vf []verifyFiles
						for _, v := range verifies {
							vf = append(vf, verifyFiles{Chunk: v.Chunk, Pairs: v.File})
						}
						labelFiles, rounds, err = d.components(ctx, parts, vf)
					} else {
						var both []records.Candidate
						for _, e := range edges {
							both = append(both, records.Candidate{A: e[0], B: e[1]}, records.Candidate{A: e[1], B: e[0]})
						}
						res := &roundResult{}
						if err := writeRound(ctx, st, &clusterStep{Name: "cluster-test", Parts: parts}, 0, both, res); err != nil {
							t.Fatal(err)
						}
						labelFiles, rounds, err = d.rounds(ctx, parts, []*job.Routes{res.Routes}, int64(2*len(edges)))
					}
					if err != nil {
						t.Fatal(err)
					}
					checkLabels(t, st, parts, labelFiles, edges, rounds)
				})
			}
		}
	}
}

// checkLabels checks the labels of the components of edges against
// union-find, and the rounds they took against 2 log2 n + 2.
func checkLabels(t *testing.T, st storage.FS, parts int, labelFiles []*fileinfo.Info, edges [][2]int64, rounds int) {
	t.Helper()
	got := map[int64]int64{}
	for part, info := range labelFiles {
		if info == nil {
			continue
		}
		labels, err := workfile.ReadEdges(context.Background(), st, *info, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range labels {
			if partOf(l.A, parts) != part {
				t.Fatalf("document %d labelled in partition %d, not %d", l.A, part, partOf(l.A, parts))
			}
			if _, dup := got[l.A]; dup {
				t.Fatalf("document %d labelled twice", l.A)
			}
			got[l.A] = l.B
		}
	}
	uf := unionfind.New(0)
	for _, e := range edges {
		uf.Union(e[0], e[1])
	}
	want := map[int64]int64{}
	for _, c := range uf.Components() {
		for _, d := range c {
			want[d] = c[0]
		}
	}
	if !reflect.DeepEqual(got, want) {
		bad := 0
		for d, l := range want {
			if got[d] != l && bad < 5 {
				t.Errorf("document %d: label %d, want %d", d, got[d], l)
				bad++
			}
		}
		t.Fatalf("%d labels, want %d", len(got), len(want))
	}
	n := int64(len(want))
	if limit := 2*bits.Len64(uint64(n)) + 2; rounds > limit {
		t.Errorf("%d rounds for %d documents, more than %d", rounds, n, limit)
	}
	t.Logf("%d edges, %d documents, %d components: %d rounds", len(edges), n, len(uf.Components()), rounds)
}

// clusterInput makes a random input of the cluster stage: documents in
// chunks, exact groups (a representative and later members), and verified
// pairs of representatives (and documents in no group) shaped by shape.
//
// With wide, a chunk's documents are spread over four partition blocks
// (see partOf), as a chunk of a whole compressed file is; such a chunk's
// document count is its largest index plus one, as in a real chunk.
func clusterInput(t *testing.T, st storage.FS, rng *rand.Rand, shape string, docs, chunks int, wide bool) ([]job.VerifyResult, map[int]job.MapResult) {
	t.Helper()
	ctx := context.Background()
	all := spreadDocs(rng, docs, chunks)
	if wide {
		all = spreadDocsOver(rng, docs, chunks, 4<<partBlockBits)
	}
	id := func(d int64) string { return fmt.Sprintf("doc-%d-%d", job.ChunkOf(d), uint32(d)) }
	url := func(d int64) string { return "https://example.com/" + id(d) }
	maps := map[int]job.MapResult{}
	for lo := 0; lo < len(all); {
		c := job.ChunkOf(all[lo])
		var rows []records.DocRecord
		for ; lo < len(all) && job.ChunkOf(all[lo]) == c; lo++ {
			d := all[lo]
			rows = append(rows, records.DocRecord{Doc: d, ID: id(d), URL: url(d), Tokens: int32(rng.IntN(50))})
		}
		info, err := pqfile.Write(ctx, st, job.DocFile(c), rows, pqfile.Sorted("doc"))
		if err != nil {
			t.Fatal(err)
		}
		n := int64(len(rows))
		if wide {
			n = int64(uint32(rows[len(rows)-1].Doc)) + 1
		}
		maps[c] = job.MapResult{Chunk: c, Docs: n, DocFile: info}
	}
	// A tenth of the documents join the group of an earlier one.
	var reps []int64
	members := map[int][]records.ExactMember{}
	group := map[int64]int64{}
	for i, d := range all {
		if i > 0 && rng.IntN(10) == 0 {
			rep := all[rng.IntN(i)]
			if r, ok := group[rep]; ok {
				rep = r
			}
			group[d] = rep
			c := job.ChunkOf(rep)
			members[c] = append(members[c], records.ExactMember{Group: rep, Doc: d, GroupID: id(rep), ID: id(d), GroupURL: url(rep), URL: url(d)})
			continue
		}
		reps = append(reps, d)
	}
	verifies := writeVerified(t, st, graphShapes[shape](rng, reps), id, url, rng)
	// A verify task with neither pairs nor members.
	verifies = append(verifies, job.VerifyResult{Chunk: chunks + 1})
	byChunk := map[int]int{}
	for i, v := range verifies {
		byChunk[v.Chunk] = i
	}
	for c, ms := range members {
		slices.SortFunc(ms, func(x, y records.ExactMember) int {
			return cmp.Or(cmp.Compare(x.Group, y.Group), cmp.Compare(x.Doc, y.Doc))
		})
		info := worktest.WriteMembers(t, st, job.MembersFile(c), ms)
		i, ok := byChunk[c]
		if !ok {
			i = len(verifies)
			verifies = append(verifies, job.VerifyResult{Chunk: c})
		}
		verifies[i].MembersFile, verifies[i].ExactMembers = &info, int64(len(ms))
	}
	slices.SortFunc(verifies, func(x, y job.VerifyResult) int { return cmp.Compare(x.Chunk, y.Chunk) })
	return verifies, maps
}

// clusterBy runs the cluster stage in this process, in one task (whole)
// or as its distributed steps, and checks that it took that path.
func clusterBy(t *testing.T, ctx context.Context, st storage.FS, spec *job.Spec, verifies []job.VerifyResult, mapResults map[int]job.MapResult, whole bool) (*stage.ClusterStats, error) {
	t.Helper()
	bound := int64(-1)
	if whole {
		bound = math.MaxInt64
	}
	run := &countingRunner{run: InProcess(st, spec)}
	s, err := runCluster(ctx, st, spec.Params, verifies, mapResults, run, bound)
	if err != nil {
		return nil, err
	}
	if whole && (run.steps != 1 || s.Rounds != 0) || !whole && (run.steps < 4 || s.Rounds < 1) {
		t.Errorf("whole %v: %d steps, %d rounds", whole, run.steps, s.Rounds)
	}
	return s, nil
}

// sameOutputs checks that got's store holds the same pairs/ files as
// ref's, and the same bytes in them and in clusters.parquet,
// duplicates.parquet and exact.parquet.
func sameOutputs(t *testing.T, what string, ref, got *storage.Dir) {
	t.Helper()
	ctx := context.Background()
	wantPairs, err := ref.List(ctx, job.PairsDir)
	if err != nil {
		t.Fatal(err)
	}
	gotPairs, err := got.List(ctx, job.PairsDir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gotPairs, wantPairs) {
		t.Errorf("%s: pairs/ holds %v, want %v", what, gotPairs, wantPairs)
	}
	for _, name := range append([]string{job.ClustersFile, job.DuplicatesFile, job.ExactFile}, wantPairs...) {
		a, errA := os.ReadFile(ref.Path(name))
		b, errB := os.ReadFile(got.Path(name))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: %s differs (%d and %d bytes; %v, %v)", what, name, len(a), len(b), errA, errB)
		}
	}
}

// copyStore copies the files of src to a new store.
func copyStore(t *testing.T, src *storage.Dir) *storage.Dir {
	t.Helper()
	dst := worktest.NewStore(t)
	if err := os.CopyFS(dst.Root(), os.DirFS(src.Root())); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestClusterMatchesReference runs the cluster stage as tasks and the
// single-process union-find it replaced (referenceCluster) on the same
// random inputs, and checks that they write byte-identical
// clusters.parquet, duplicates.parquet, exact.parquet and pairs/, and
// the same statistics, whatever the number of partitions.
func TestClusterMatchesReference(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		shape    string
		docs     int
		chunks   int
		keep     job.Keep
		maxPairs int64
		seed     uint64
		wide     bool // chunks spread over several partitions
	}{
		{"random chain", 1500, 6, "first", 1_000_000, 1, false},
		{"random chain", 1500, 6, "longest", 1000, 2, false}, // the chain's cluster is bounded
		{"stars", 1500, 5, "longest", 1_000_000, 3, false},
		{"stars", 1500, 5, "first", 300, 4, false},
		{"small components", 1500, 8, "longest", 3, 5, false},
		{"random", 1500, 4, "first", 1_000_000, 6, false},
		{"random", 1500, 4, "longest", 40, 7, false},
		{"trees", 1500, 3, "first", 1_000_000, 8, false},
		{"none", 500, 3, "first", 1_000_000, 9, false},
		{"random", 400, 1, "longest", 1_000_000, 10, false},
		{"random chain", 1500, 1, "first", 1_000_000, 11, true},
		{"random", 1500, 2, "longest", 40, 12, true},
		{"small components", 1500, 3, "first", 1_000_000, 13, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s/max-%d/seed-%d/wide-%v", tt.shape, tt.keep, tt.maxPairs, tt.seed, tt.wide), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(tt.seed, 2))
			ref := worktest.NewStore(t)
			verifies, maps := clusterInput(t, ref, rng, tt.shape, tt.docs, tt.chunks, tt.wide)
			p := job.DefaultParams()
			p.Keep, p.MaxClusterPairs = tt.keep, tt.maxPairs
			// 1 and 4 partitions, and 0: in one task.
			stores := map[int]*storage.Dir{}
			for _, parts := range []int{0, 1, 4} {
				stores[parts] = copyStore(t, ref)
			}
			want, err := referenceCluster(ctx, ref, p, verifies, maps)
			if err != nil {
				t.Fatal(err)
			}
			if tt.maxPairs < 1_000_000 && want.BoundedClusters == 0 {
				t.Fatalf("no cluster bounded by %d pairs: the case tests nothing", tt.maxPairs)
			}
			for parts, st := range stores {
				p.Partitions = max(parts, 1)
				got, err := clusterBy(t, ctx, st, &job.Spec{Params: p}, verifies, maps, parts == 0)
				if err != nil {
					t.Fatalf("%d partitions: %v", parts, err)
				}
				got.Rounds = 0
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%d partitions: stats\n%+v\nwant\n%+v", parts, got, want)
				}
				sameOutputs(t, fmt.Sprintf("%d partitions", parts), ref, st)
			}
			t.Logf("%d clusters, %d duplicates, %d exact groups, %d pairs listed, %d bounded", want.Clusters, want.Duplicates, want.ExactGroups, want.PairsListed, want.BoundedClusters)
		})
	}
}

// TestClusterSampleMatchesReference runs the stages on the bundled sample
// (testdata/sample, as the README's first command does, and again cut
// into small chunks so that the cluster steps have several partitions),
// then the cluster stage as tasks and the single-process union-find it
// replaced, and checks byte-identical outputs and equal statistics.
func TestClusterSampleMatchesReference(t *testing.T) {
	if testing.Short() {
		t.Skip("maps the whole sample")
	}
	ctx := context.Background()
	for _, tt := range []struct {
		name       string
		chunkBytes int64
		partitions int
	}{
		{"defaults", 0, 0},
		{"small chunks", 256 << 10, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := job.DefaultParams()
			if tt.chunkBytes > 0 {
				p.ChunkBytes, p.Partitions = tt.chunkBytes, tt.partitions
			}
			if err := p.Resolve(); err != nil {
				t.Fatal(err)
			}
			ref := worktest.NewStore(t)
			inputs, _, err := job.ExpandInputs(ctx, []string{"../../../testdata/sample"}, job.InputOptions{})
			if err != nil {
				t.Fatal(err)
			}
			plan, err := job.MakePlan(ctx, inputs, p.ChunkBytes)
			if err != nil {
				t.Fatal(err)
			}
			p.Gather = "on"
			spec := &job.Spec{Job: "sample", Epoch: "test", Out: ref.Root(), Params: p}
			byChunk := map[int]job.MapResult{}
			var mapList []job.MapResult
			for _, ch := range plan.Chunks {
				mr, err := mapper.Map(ctx, ref, spec, ch)
				if err != nil {
					t.Fatalf("map chunk %d: %v", ch.Index, err)
				}
				byChunk[ch.Index] = *mr
				mapList = append(mapList, *mr)
			}
			reduces, err := stagetest.ReduceMaps(ctx, ref, &job.Spec{Params: p}, mapList)
			if err != nil {
				t.Fatal(err)
			}
			chunks := map[int]bool{}
			for _, rr := range reduces {
				for c := range rr.EdgeFiles {
					chunks[c] = true
				}
			}
			gathers, err := stagetest.RunGathers(ctx, ref, reduces, byChunk)
			if err != nil {
				t.Fatal(err)
			}
			var verifies []job.VerifyResult
			for _, c := range slices.Sorted(maps.Keys(chunks)) {
				vr, err := verify.Verify(ctx, ref, spec, c, reduces, verify.SigSource{Gathers: gathers})
				if err != nil {
					t.Fatal(err)
				}
				verifies = append(verifies, *vr)
			}
			wholeStore, steps := copyStore(t, ref), copyStore(t, ref)
			want, err := referenceCluster(ctx, ref, p, verifies, byChunk)
			if err != nil {
				t.Fatal(err)
			}
			if want.Clusters < 100 || len(verifies) != len(chunks) {
				t.Fatalf("%d clusters: the sample is not what this test expects", want.Clusters)
			}
			for _, whole := range []bool{true, false} {
				tasks := steps
				if whole {
					tasks = wholeStore
				}
				got, err := clusterBy(t, ctx, tasks, &job.Spec{Params: p}, verifies, byChunk, whole)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("whole %v: %d chunks, %d partitions: %d clusters, %d pairs listed, %d rounds", whole, len(plan.Chunks), min(p.Partitions, len(byChunk)), got.Clusters, got.PairsListed, got.Rounds)
				got.Rounds = 0
				if !reflect.DeepEqual(got, want) {
					t.Errorf("whole %v: stats\n%+v\nwant\n%+v", whole, got, want)
				}
				sameOutputs(t, fmt.Sprintf("whole %v", whole), ref, tasks)
			}
		})
	}
}

// TestGroupByKey groups rows by key, for numbers of keys and rows with
// keys missing, one key, or all keys: the keys ascend and the rows are
// the same rows.
func TestGroupByKey(t *testing.T) {
	for _, tt := range []struct{ rows, keys, used int }{
		{0, 1, 1}, {1, 1, 1}, {100, 1, 1}, {100, 4, 4}, {1000, 8, 3}, {1000, 64, 64}, {5, 16, 16},
	} {
		rng := rand.New(rand.NewPCG(uint64(tt.rows), uint64(tt.keys)))
		rows := make([][2]int, tt.rows) // (key, id)
		for i := range rows {
			rows[i] = [2]int{rng.IntN(tt.used) * (tt.keys / tt.used), i}
		}
		want := slices.Clone(rows)
		groupByKey(rows, tt.keys, func(r [2]int) int { return r[0] })
		if !slices.IsSortedFunc(rows, func(x, y [2]int) int { return cmp.Compare(x[0], y[0]) }) {
			t.Errorf("%d rows, %d keys: keys do not ascend", tt.rows, tt.keys)
		}
		byID := func(x, y [2]int) int { return cmp.Compare(x[1], y[1]) }
		got := slices.SortedFunc(slices.Values(rows), byID)
		if !slices.Equal(got, want) {
			t.Errorf("%d rows, %d keys: not the same rows", tt.rows, tt.keys)
		}
	}
}
