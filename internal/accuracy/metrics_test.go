package accuracy

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/control"
	"github.com/neardup/neardup/internal/corpus"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/pkg/records"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// handPair is one planted pair of the hand-made truth: document A holds 20
// tokens and B the first k of them, so J = k/20.
type handPair struct {
	name           string
	k              int
	wordsA, wordsB int
	template       bool
	listed         bool
	clustered      bool
}

// handPairs cover every bin, both lengths, the template family, and J
// exactly on a bin edge, at the threshold and at 1.
var handPairs = []handPair{
	{"p1", 11, 20, 20, false, true, true},      // 0.55 short
	{"p2", 11, 100, 100, false, false, true},   // 0.55 long
	{"p3", 13, 300, 300, true, true, true},     // 0.65 template
	{"p4", 15, 100, 100, false, false, false},  // 0.75
	{"p5", 17, 20, 30, false, true, false},     // 0.85 short
	{"p6", 17, 20, 300, false, true, true},     // 0.85 long (one short document); listed with a wrong similarity
	{"p7", 19, 300, 300, true, false, true},    // 0.95 template
	{"p8", 20, 10, 10, false, true, true},      // 1 short
	{"p9", 20, 100, 100, false, false, true},   // 1 long
	{"p10", 10, 100, 100, false, true, false},  // 0.5 exactly
	{"p11", 16, 100, 100, false, false, false}, // 0.8 exactly
	{"p12", 9, 100, 100, false, true, false},   // 0.45: listed, below every threshold
}

// handTruth builds the truth of handPairs, the rows of pairs/ a job might
// have written for them, and its clusters.
func handTruth(t *testing.T) (*Truth, []records.Pair, []records.ClusterRecord) {
	t.Helper()
	var docs []Doc
	var rows []records.Pair
	var clusters []records.ClusterRecord
	for g, hp := range handPairs {
		set := make([]uint64, 20)
		for i := range set {
			set[i] = uint64(1000*g + i)
		}
		a, b := hp.name+"a", hp.name+"b"
		docs = append(docs,
			Doc{ID: a, Set: set, Words: hp.wordsA, Template: hp.template},
			Doc{ID: b, Set: set[:hp.k], Words: hp.wordsB, Template: hp.template})
		if hp.listed {
			sim := float64(hp.k) / 20
			if hp.name == "p6" {
				sim = 0.84
			}
			rows = append(rows, records.Pair{A: int64(2 * g), B: int64(2*g + 1), AID: a, BID: b, Similarity: sim, Method: "exact"})
		}
		if hp.clustered {
			clusters = append(clusters, records.ClusterRecord{ID: a, Cluster: int64(g)}, records.ClusterRecord{ID: b, Cluster: int64(g)})
		} else {
			clusters = append(clusters, records.ClusterRecord{ID: a, Cluster: int64(100 + g)})
		}
	}
	docs = append(docs, Doc{ID: "empty"}, Doc{ID: "empty2"})
	rows = append(rows,
		records.Pair{A: 1, B: 0, AID: "p1b", BID: "p1a", Similarity: 0.55, Method: "exact"}, // repeated, a > b
		records.Pair{A: 7, B: 9, AID: "p1a", BID: "nobody", Similarity: 1, Method: "exact"}, // unknown id
	)
	truth, err := NewTruth(docs, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	return truth, rows, clusters
}

func TestEvaluate(t *testing.T) {
	truth, rows, clusters := handTruth(t)
	if got := len(truth.Pairs); got != 11 {
		t.Fatalf("truth has %d pairs with J >= 0.5, want 11 (p1-p11)", got)
	}
	rc := func(tr, listed, clustered int) Recall { return Recall{True: tr, Listed: listed, Clustered: clustered} }
	tests := []struct {
		threshold float64
		// counters of pairs/
		below, mismatches int
		precision         float64
		bins              map[string]Split
		above, near       Split
		failures          int
	}{
		{
			threshold: 0.5, below: 1, mismatches: 1, precision: 6.0 / 7,
			bins: map[string]Split{
				"[0.5, 0.6)": {All: rc(3, 2, 2), Short: rc(1, 1, 1), Long: rc(2, 1, 1), Rest: rc(3, 2, 2)},
				"[0.6, 0.7)": {All: rc(1, 1, 1), Long: rc(1, 1, 1), Template: rc(1, 1, 1)},
				"[0.7, 0.8)": {All: rc(1, 0, 0), Long: rc(1, 0, 0), Rest: rc(1, 0, 0)},
				"[0.8, 0.9)": {All: rc(3, 2, 1), Short: rc(1, 1, 0), Long: rc(2, 1, 1), Rest: rc(3, 2, 1)},
				"[0.9, 1.0)": {All: rc(1, 0, 1), Long: rc(1, 0, 1), Template: rc(1, 0, 1)},
				"J = 1":      {All: rc(2, 1, 2), Short: rc(1, 1, 1), Long: rc(1, 0, 1), Rest: rc(2, 1, 2)},
			},
			above: Split{All: rc(10, 5, 7), Short: rc(3, 3, 2), Long: rc(7, 2, 5), Template: rc(2, 1, 2), Rest: rc(8, 4, 5)},
			near:  Split{All: rc(1, 1, 0), Long: rc(1, 1, 0), Rest: rc(1, 1, 0)},
			// below, mismatch, repeated, unordered, unknown, recall above, J = 1
			failures: 7,
		},
		{
			threshold: 0.8, below: 4, mismatches: 1, precision: 3.0 / 7,
			bins: map[string]Split{
				"[0.8, 0.9)": {All: rc(3, 2, 1), Short: rc(1, 1, 0), Long: rc(2, 1, 1), Rest: rc(3, 2, 1)},
				"[0.9, 1.0)": {All: rc(1, 0, 1), Long: rc(1, 0, 1), Template: rc(1, 0, 1)},
				"J = 1":      {All: rc(2, 1, 2), Short: rc(1, 1, 1), Long: rc(1, 0, 1), Rest: rc(2, 1, 2)},
			},
			above: Split{All: rc(5, 3, 4), Short: rc(2, 2, 1), Long: rc(3, 1, 3), Template: rc(1, 0, 1), Rest: rc(4, 3, 3)},
			near:  Split{All: rc(1, 0, 0), Long: rc(1, 0, 0), Rest: rc(1, 0, 0)},
			// below, mismatch, repeated, unordered, unknown, recall above, recall near, J = 1
			failures: 8,
		},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.threshold), func(t *testing.T) {
			r, err := Evaluate(truth, tt.threshold, rows, clusters)
			if err != nil {
				t.Fatal(err)
			}
			if r.Rows != 9 || r.Distinct != 7 || r.Repeated != 1 || r.Unordered != 1 || r.Unknown != 1 {
				t.Errorf("rows %d distinct %d repeated %d unordered %d unknown %d, want 9 7 1 1 1",
					r.Rows, r.Distinct, r.Repeated, r.Unordered, r.Unknown)
			}
			if r.Below != tt.below || r.Mismatches != tt.mismatches || r.Precision != tt.precision {
				t.Errorf("below %d mismatches %d precision %v, want %d %d %v", r.Below, r.Mismatches, r.Precision, tt.below, tt.mismatches, tt.precision)
			}
			var labels []string
			for _, b := range r.Bins {
				labels = append(labels, b.Label)
				if want := tt.bins[b.Label]; b.Split != want {
					t.Errorf("bin %s: %+v, want %+v", b.Label, b.Split, want)
				}
			}
			if len(labels) != len(tt.bins) {
				t.Errorf("bins %v, want %d of them", labels, len(tt.bins))
			}
			if r.Above.Split != tt.above {
				t.Errorf("%s: %+v, want %+v", r.Above.Label, r.Above.Split, tt.above)
			}
			if r.Near.Split != tt.near {
				t.Errorf("%s: %+v, want %+v", r.Near.Label, r.Near.Split, tt.near)
			}
			if f := r.Check(); len(f) != tt.failures {
				t.Errorf("Check() = %d failures, want %d: %q", len(f), tt.failures, f)
			}
		})
	}
}

// TestCheckPasses checks that a job listing exactly the true pairs, with
// their exact similarities, passes.
func TestCheckPasses(t *testing.T) {
	truth, _, _ := handTruth(t)
	var rows []records.Pair
	var clusters []records.ClusterRecord
	for _, p := range truth.Pairs {
		if p.J >= 0.8 {
			rows = append(rows, records.Pair{A: int64(p.A), B: int64(p.B), AID: truth.Docs[p.A].ID, BID: truth.Docs[p.B].ID, Similarity: p.J, Method: "exact"})
		}
	}
	r, err := Evaluate(truth, 0.8, rows, clusters)
	if err != nil {
		t.Fatal(err)
	}
	if f := r.Check(); len(f) > 0 {
		t.Errorf("Check() = %q, want none", f)
	}
	if _, err := Evaluate(truth, 0.4, rows, clusters); err == nil {
		t.Error("Evaluate below the truth's MinJ succeeded")
	}
}

// TestReportGolden renders a report of the hand-made truth and compares it
// with testdata/report.golden.md (rewrite with -update).
func TestReportGolden(t *testing.T) {
	truth, rows, clusters := handTruth(t)
	rep := &Report{Command: []string{"accuracy", "--n", "26"}, Pass: true}
	cfg := corpus.AccuracyConfig(26, 1)
	rep.Corpus = CorpusSummary{Config: cfg, Files: 1, Docs: len(truth.Docs), MinJ: truth.MinJ,
		Kinds: map[corpus.Kind]int{corpus.KindUnique: 24, corpus.KindEmpty: 2}, Lengths: truth.LengthHistogram(),
		Template: truth.TemplateSpread(), GenerateSeconds: 0.25, TruthSeconds: 0.5}
	for _, d := range truth.Docs {
		if d.Words < ShortWords {
			rep.Corpus.ShortDocs++
		}
	}
	all, _ := Evaluate(truth, truth.MinJ, nil, nil)
	rep.Corpus.TruePairs = all.Bins
	for _, m := range []job.Method{job.MethodMinHash, job.MethodSimHash} {
		for _, th := range []float64{0.8, 0.5} {
			p := control.DefaultParams()
			p.Method, p.Threshold = m, th
			if err := p.Resolve(); err != nil {
				t.Fatal(err)
			}
			r, err := Evaluate(truth, th, rows, clusters)
			if err != nil {
				t.Fatal(err)
			}
			run := Run{Method: m, Params: p, Seconds: 1.5, Counts: manifest.Counts{UniquePairs: 12, Verified: 7, Clusters: 3},
				Result: r, Checked: m == job.MethodMinHash, Failures: r.Check()}
			rep.Pass = rep.Pass && !(run.Checked && len(run.Failures) > 0)
			rep.Runs = append(rep.Runs, run)
		}
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, rep); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "report.golden.md")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("report differs from %s (rerun with -update after checking the change):\n%s", golden, buf.Bytes())
	}
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	if err := WriteJSON(jsonPath, rep); err != nil {
		t.Fatal(err)
	}
}

func TestBins(t *testing.T) {
	tests := []struct {
		minJ, threshold float64
		want            []string
	}{
		{0.5, 0.5, []string{"[0.5, 0.6)", "[0.6, 0.7)", "[0.7, 0.8)", "[0.8, 0.9)", "[0.9, 1.0)", "J = 1"}},
		{0.5, 0.8, []string{"[0.8, 0.9)", "[0.9, 1.0)", "J = 1"}},
		{0.5, 0.85, []string{"[0.8, 0.9)", "[0.9, 1.0)", "J = 1"}},
		{0.3, 0.3, []string{"[0.3, 0.4)", "[0.4, 0.5)", "[0.5, 0.6)", "[0.6, 0.7)", "[0.7, 0.8)", "[0.8, 0.9)", "[0.9, 1.0)", "J = 1"}},
		{0.5, 1, []string{"J = 1"}},
	}
	for _, tt := range tests {
		var got []string
		for _, b := range bins(tt.minJ, tt.threshold) {
			got = append(got, b.Label)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("bins(%v, %v) = %q, want %q", tt.minJ, tt.threshold, got, tt.want)
		}
	}
	if e := roundEdge(0.8 + 0.05); e != 0.85 || 17.0/20 < e {
		t.Errorf("roundEdge(0.8+0.05) = %v; 17/20 = %v must reach it", e, 17.0/20)
	}
}
