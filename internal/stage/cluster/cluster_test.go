package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/worktest"
	"github.com/neardup/neardup/pkg/records"
)

// TestChooseKept checks each keep rule's choice of a cluster's kept
// document: ties go to the smallest ordinal, documents without a value to
// the end whatever the direction, numbers and strings ranked apart, and
// only eligible documents are chosen.
func TestChooseKept(t *testing.T) {
	num := func(f float64) rank { return rank{Num: f, HasNum: true} }
	str := func(s string) rank { return rank{Str: s, HasStr: true} }
	docs := []compRow{
		{A: 1, Tokens: 10, more: &rowMore{Rank: num(0.5)}},
		{A: 5, Tokens: 30},
		{A: 9, Tokens: 30, more: &rowMore{Rank: num(0.9)}},
		{A: 12, Tokens: 2, more: &rowMore{Rank: num(0.9)}},
		{A: 14, Tokens: 1, more: &rowMore{Rank: num(-3)}},
	}
	strs := []compRow{{A: 1, more: &rowMore{Rank: str("b")}}, {A: 2, more: &rowMore{Rank: num(100)}}, {A: 3, more: &rowMore{Rank: str("c")}}, {A: 4}}
	none := []compRow{{A: 1}, {A: 2}}
	notFirst := func(d compRow) bool { return d.A != 1 && d.A != 9 }
	tests := []struct {
		keep     job.Keep
		docs     []compRow
		eligible func(compRow) bool
		want     int64
	}{
		{"first", docs, nil, 1},
		{"longest", docs, nil, 5},            // 5 and 9 tie: the first wins
		{"field:quality", docs, nil, 9},      // 9 and 12 tie
		{"field:quality:desc", docs, nil, 9}, // the same
		{"field:quality:asc", docs, nil, 14},
		{"newest", docs, nil, 9},
		{"field:q", strs, nil, 3},     // strings above numbers
		{"field:q:asc", strs, nil, 2}, // and below them ascending; none last
		{"field:q", none, nil, 1},
		{"field:q:asc", none, nil, 1},
		{"first", docs, notFirst, 5},
		{"field:quality", docs, notFirst, 12},
		{"longest", docs, notFirst, 5},
	}
	for _, tt := range tests {
		rule, err := tt.keep.Rule()
		if err != nil {
			t.Fatal(err)
		}
		if got := tt.docs[chooseKept(tt.docs, tt.eligible, rule)].A; got != tt.want {
			t.Errorf("chooseKept(%s) = %d, want %d", tt.keep, got, tt.want)
		}
	}
	if k := chooseKept(docs, func(compRow) bool { return false }, job.KeepRule{}); k != -1 {
		t.Errorf("chooseKept with none eligible = %d, want -1", k)
	}
}

// TestClusterStats runs the cluster stage on hand-made verify results: a
// star of 34 documents, a pair, and a pair whose first document has an
// exact duplicate. It checks the counts, the size histogram (its last bin
// holds every cluster of 32 documents or more), the largest clusters
// listed, the kept documents and the pairs written.
func TestClusterStats(t *testing.T) {
	ctx := context.Background()
	var docs []records.DocRecord
	for i := range 40 {
		docs = append(docs, records.DocRecord{Doc: int64(i), ID: fmt.Sprintf("d%02d", i), URL: fmt.Sprintf("u%d", i), Tokens: int32(i)})
	}
	var pairs []records.Pair
	pair := func(a, b int64) {
		pairs = append(pairs, records.Pair{A: a, B: b, AID: docs[a].ID, BID: docs[b].ID, Similarity: 0.9, Estimate: 0.9, Method: "exact"})
	}
	for i := int64(1); i <= 33; i++ {
		pair(0, i)
	}
	pair(34, 35)
	pair(36, 37)
	members := []records.ExactMember{{Group: 36, Doc: 38, GroupID: "d36", ID: "d38"}}

	for _, keep := range []job.Keep{job.KeepFirst, job.KeepLongest} {
		t.Run(keep.String(), func(t *testing.T) {
			st := worktest.NewStore(t)
			docInfo, err := pqfile.Write(ctx, st, job.DocFile(0), docs, pqfile.Sorted("doc"))
			if err != nil {
				t.Fatal(err)
			}
			pairInfo := worktest.WritePairs(t, st, job.VerifiedFile(0), pairs)
			memberInfo := worktest.WriteMembers(t, st, job.MembersFile(0), members)
			p := job.DefaultParams()
			p.Keep = keep
			verifies := []job.VerifyResult{{Chunk: 0, Verified: int64(len(pairs)), ExactMembers: 1, File: &pairInfo, MembersFile: &memberInfo}}
			s, err := RunLocal(ctx, st, &job.Spec{Params: p}, verifies, map[int]job.MapResult{0: {Chunk: 0, DocFile: docInfo}})
			if err != nil {
				t.Fatal(err)
			}
			if s.Clusters != 3 || s.Clustered != 34+2+3 || s.Duplicates != 33+1+2 || s.Largest != 34 ||
				s.ExactGroups != 1 || s.ExactDuplicates != 1 || s.CompletePairs != 33+1+3 || s.PairsListed != 37 || s.BoundedClusters != 0 {
				t.Errorf("stats %+v", s)
			}
			hist := make([]int64, 31)
			hist[0], hist[1], hist[30] = 1, 1, 1
			if !slices.Equal(s.SizeHist, hist) {
				t.Errorf("size histogram %v, want %v", s.SizeHist, hist)
			}
			// The kept documents of the clusters 0, 36 and 34.
			kept := map[job.Keep][3]int64{"first": {0, 36, 34}, "longest": {33, 38, 35}}[keep]
			want := []manifest.ClusterSummary{
				{Cluster: 0, Size: 34, KeptID: docs[kept[0]].ID, KeptURL: docs[kept[0]].URL, Members: []string{"d00", "d01", "d02", "d03", "d04"}},
				{Cluster: 36, Size: 3, KeptID: docs[kept[1]].ID, KeptURL: docs[kept[1]].URL, Members: []string{"d36", "d37", "d38"}},
				{Cluster: 34, Size: 2, KeptID: docs[kept[2]].ID, KeptURL: docs[kept[2]].URL, Members: []string{"d34", "d35"}},
			}
			if !reflect.DeepEqual(s.Top, want) {
				t.Errorf("top clusters\n%+v\nwant\n%+v", s.Top, want)
			}
			dups, err := pqfile.Read[records.Duplicate](ctx, st, job.DuplicatesFile, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range dups {
				if k := map[int64]int64{0: kept[0], 36: kept[1], 34: kept[2]}[d.Cluster]; d.Doc == k || d.KeptDoc != k || d.KeptID != docs[k].ID {
					t.Errorf("duplicate %+v", d)
				}
			}
			written, err := pqfile.Read[records.Pair](ctx, st, job.PairFile(0), nil)
			if err != nil || len(written) != 37 {
				t.Fatalf("%d pairs written (%v)", len(written), err)
			}
			// The expanded pair d37 d38 has the similarity of d36 d37.
			if i := slices.IndexFunc(written, func(p records.Pair) bool { return p.A == 37 && p.B == 38 }); i < 0 || written[i].Similarity != 0.9 {
				t.Errorf("pair d37 d38 missing or with another similarity")
			}
		})
	}
}

// TestClusterSizeEdges checks that every cluster size falls in the bin
// whose edges, as the manifest gives them, hold it.
func TestClusterSizeEdges(t *testing.T) {
	edges := stage.ClusterSizeEdges()
	if len(edges) != stage.SizeBins+1 || edges[stage.SizeBins] != nil {
		t.Fatalf("%d edges, the last %v: want %d, the last nil", len(edges), edges[len(edges)-1], stage.SizeBins+1)
	}
	for size := int64(2); size <= 1000; size++ {
		i := stage.SizeBin(size)
		lo, hi := edges[i], edges[i+1]
		if lo == nil || *lo > size || hi != nil && size >= *hi {
			t.Errorf("cluster of %d documents in bin %d, whose edges are %v and %v", size, i, lo, hi)
		}
	}
}

// TestCompRowSize bounds a compRow, which the components step sorts by the
// million (a pair of the templated 20k job at 0.5 is one): the keep rule's
// rank and an earlier job's dropped document stay behind a pointer. At 168
// bytes, sorting and reading them cost that job's components step 0.75 s
// of CPU, at 72 bytes 0.41-0.46 s.
func TestCompRowSize(t *testing.T) {
	if n := unsafe.Sizeof(compRow{}); n > 72 {
		t.Errorf("a compRow is %d bytes, want at most 72", n)
	}
}

// TestWholeHeld checks the bound of what the one task of a job's cluster
// stage would hold, which decides whether it runs as one task: 80 bytes
// an edge, and 300 a document, two an edge and no more than the job's,
// so that a job of few documents in many pairs (template pages at a low
// threshold) runs as one task.
func TestWholeHeld(t *testing.T) {
	chunks := func(docs ...int64) map[int]job.MapResult {
		m := map[int]job.MapResult{}
		for c, d := range docs {
			m[c] = job.MapResult{Docs: d}
		}
		return m
	}
	cases := []struct {
		name  string
		edges int64
		maps  map[int]job.MapResult
		want  int64
		whole bool
	}{
		{"no edges", 0, chunks(10, 10), 0, true},
		{"the 100k corpus", 50_000, chunks(50_000, 50_000), 50_000*80 + 100_000*300, true},
		{"the templated corpus at 0.5", 1_369_786, chunks(10_000, 10_000), 1_369_786*80 + 20_000*300, true},
		{"the 1M corpus", 500_000, chunks(500_000, 500_000), 500_000*80 + 1_000_000*300, false},
		{"documents bounded by the edges", 1000, chunks(1_000_000), 1000*80 + 2000*300, true},
		{"too many edges among few documents", WholeBytes/80 + 1, chunks(10), (WholeBytes/80+1)*80 + 10*300, false},
	}
	for _, c := range cases {
		got := wholeHeld(c.edges, c.maps)
		if got != c.want || (got <= WholeBytes) != c.whole {
			t.Errorf("%s: wholeHeld(%d edges) = %d (one task %v), want %d (one task %v)", c.name, c.edges, got, got <= WholeBytes, c.want, c.whole)
		}
	}
}

// TestSortCompRows checks that sortCompRows orders rows as one sort by
// compareCompRows does, on one processor and several, for rows of many
// labels, of one label, of a few labels one of which holds most rows, and
// too few rows to cut.
func TestSortCompRows(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 1))
	rows := func(n int, label func() int64) []compRow {
		out := make([]compRow, n)
		for i := range out {
			// No two rows equal, as in a job: a row's (kind, a, b) is its own.
			out[i] = compRow{Label: label(), Kind: int32(r.IntN(3)), A: int64(i), B: r.Int64N(1000), ID: fmt.Sprint(i)}
		}
		r.Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
		return out
	}
	cases := []struct {
		name string
		rows []compRow
	}{
		{"many labels", rows(200_000, func() int64 { return r.Int64N(50_000) })},
		{"one label", rows(100_000, func() int64 { return 7 })},
		{"one label of most rows", rows(150_000, func() int64 {
			if r.IntN(10) < 8 {
				return 1 << 40
			}
			return r.Int64N(300)
		})},
		{"few rows", rows(1000, func() int64 { return r.Int64N(20) })},
		{"no rows", nil},
	}
	for _, c := range cases {
		want := slices.Clone(c.rows)
		slices.SortFunc(want, compareCompRows)
		for _, procs := range []int{1, 2, 8} {
			got := slices.Clone(c.rows)
			old := runtime.GOMAXPROCS(procs)
			sortCompRows(got)
			runtime.GOMAXPROCS(old)
			if !slices.EqualFunc(got, want, func(x, y compRow) bool { return compareCompRows(x, y) == 0 && x.ID == y.ID }) {
				t.Errorf("%s, %d processors: rows not in order", c.name, procs)
			}
		}
	}
}
