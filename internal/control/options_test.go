package control

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/records"
)

// TestModes runs small jobs under non-default options and checks what each
// option promises.
func TestModes(t *testing.T) {
	in, _ := genCorpus(t, 300, 5, 1)
	broken := filepath.Join(t.TempDir(), "broken.jsonl")
	os.WriteFile(broken, []byte("{\"id\":\"ok\",\"text\":\"fine words here\"}\n{not json\n"), 0o644)
	// Documents with one shingle set and different shingle counts: a
	// period-5 word cycle repeated 3, 4 and 4 times.
	cycle := "alpha beta gamma delta epsilon "
	repeats := filepath.Join(t.TempDir(), "repeats.jsonl")
	os.WriteFile(repeats, []byte(fmt.Sprintf("{\"id\":\"r3\",\"text\":%q}\n{\"id\":\"r4\",\"text\":%q}\n{\"id\":\"r4b\",\"text\":%q}\n",
		strings.Repeat(cycle, 3), strings.Repeat(cycle, 4), strings.Repeat(cycle, 4))), 0o644)
	// An input directory holding a file that cannot be read: a link to
	// nothing (tests run as root, so permissions would not stop them).
	withBroken := t.TempDir()
	os.WriteFile(filepath.Join(withBroken, "good.jsonl"), []byte("{\"id\":\"ok\",\"text\":\"fine words here and more of them\"}\n"), 0o644)
	os.Symlink(filepath.Join(withBroken, "gone.jsonl.target"), filepath.Join(withBroken, "broken.jsonl"))
	exactGroups := func(t *testing.T, out string) map[string]int32 {
		rows, err := parquet.ReadFile[records.ExactRecord](filepath.Join(out, "exact.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		g := map[string]int32{}
		for _, r := range rows {
			g[r.ID] = r.GroupSize
		}
		return g
	}
	pairsOnce := func(t *testing.T, out string) map[string]bool {
		seen := map[string]bool{}
		for _, pr := range readPairs(t, out) {
			k := pr.AID + " " + pr.BID
			if seen[k] || pr.A >= pr.B {
				t.Fatalf("pair %s listed twice or out of order", k)
			}
			seen[k] = true
		}
		return seen
	}
	tests := []struct {
		name    string
		inputs  []string
		set     func(*job.Params)
		wantErr string
		check   func(t *testing.T, out string, m *Manifest)
	}{
		{
			name:   "estimate",
			inputs: []string{in},
			set:    func(p *job.Params) { p.Verify = "estimate" },
			check: func(t *testing.T, out string, m *Manifest) {
				for _, pr := range readPairs(t, out) {
					if pr.Method != "minhash" || pr.Similarity != pr.Estimate || pr.Similarity < 0.8 {
						t.Fatalf("estimate mode pair %+v", pr)
					}
				}
				if m.Counts.Verified == 0 {
					t.Fatal("no pairs")
				}
			},
		},
		{
			name:   "keep longest",
			inputs: []string{in},
			set:    func(p *job.Params) { p.Keep = "longest" },
			check: func(t *testing.T, out string, m *Manifest) {
				docs := map[int64]int32{}
				files, _ := filepath.Glob(filepath.Join(out, "docs", "*.parquet"))
				for _, f := range files {
					rows, _ := parquet.ReadFile[records.DocRecord](f)
					for _, r := range rows {
						docs[r.Doc] = r.Tokens
					}
				}
				rows, err := parquet.ReadFile[records.ClusterRecord](filepath.Join(out, "clusters.parquet"))
				if err != nil {
					t.Fatal(err)
				}
				longest := map[int64]int32{}
				for _, r := range rows {
					longest[r.Cluster] = max(longest[r.Cluster], docs[r.Doc])
				}
				for _, r := range rows {
					if r.Keep && docs[r.Doc] != longest[r.Cluster] {
						t.Fatalf("cluster %d keeps doc %d of %d tokens, longest has %d", r.Cluster, r.Doc, docs[r.Doc], longest[r.Cluster])
					}
				}
			},
		},
		{
			name:   "rejects counted",
			inputs: []string{in, broken},
			check: func(t *testing.T, out string, m *Manifest) {
				if m.Counts.Rejected != 1 {
					t.Fatalf("rejected = %d, want 1", m.Counts.Rejected)
				}
				files, _ := filepath.Glob(filepath.Join(out, "rejects", "*.parquet"))
				if len(files) != 1 {
					t.Fatalf("reject files: %v", files)
				}
				rows, err := parquet.ReadFile[records.RejectRecord](files[0])
				if err != nil || len(rows) != 1 || rows[0].Line != 2 || rows[0].File != broken || rows[0].Offset != 37 {
					t.Fatalf("rejects = %+v, %v", rows, err)
				}
			},
		},
		{
			name:   "exact groups are identical shingle sets",
			inputs: []string{repeats},
			check: func(t *testing.T, out string, m *Manifest) {
				if g := exactGroups(t, out); len(g) != 3 || g["r3"] != 3 {
					t.Fatalf("exact groups %v, want r3, r4 and r4b in one group of 3", g)
				}
				if p := pairsOnce(t, out); len(p) != 3 {
					t.Fatalf("pairs %v, want the 3 pairs of the group", p)
				}
			},
		},
		{
			name:   "term-weighted SimHash: exact groups are identical shingle multisets",
			inputs: []string{repeats},
			set:    func(p *job.Params) { p.Method, p.SimHashWeights, p.Hamming = "simhash", "tf", 10 },
			check: func(t *testing.T, out string, m *Manifest) {
				// r3 has other shingle counts, hence perhaps another
				// fingerprint: it is not an exact copy of r4 here.
				if g := exactGroups(t, out); len(g) != 2 || g["r4"] != 2 || g["r4b"] != 2 {
					t.Fatalf("exact groups %v, want r4 and r4b in one group of 2", g)
				}
				if p := pairsOnce(t, out); !p["r4 r4b"] {
					t.Fatalf("pairs %v lack r4-r4b", p)
				}
			},
		},
		{
			name:   "unreadable input: a reject naming the file and a warning, not a failed plan",
			inputs: []string{withBroken},
			check: func(t *testing.T, out string, m *Manifest) {
				if m.Counts.Docs != 1 || m.Counts.UnreadFiles != 1 || m.Counts.Rejected != 1 || !hasWarning(m, "could not be read") {
					t.Fatalf("docs %d, unread files %d, rejected %d, warnings %q", m.Counts.Docs, m.Counts.UnreadFiles, m.Counts.Rejected, m.Warnings)
				}
				files, _ := filepath.Glob(filepath.Join(out, "rejects", "*.parquet"))
				var rows []records.RejectRecord
				for _, f := range files {
					r, _ := parquet.ReadFile[records.RejectRecord](f)
					rows = append(rows, r...)
				}
				if len(rows) != 1 || filepath.Base(rows[0].File) != "broken.jsonl" || rows[0].Offset != -1 || !strings.HasPrefix(rows[0].Reason, "unreadable") {
					t.Fatalf("rejects %+v, want one unreadable reject for broken.jsonl at offset -1", rows)
				}
			},
		},
		{
			name:    "unreadable input under --strict fails the job",
			inputs:  []string{withBroken},
			set:     func(p *Params) { p.Strict = true },
			wantErr: "broken.jsonl",
		},
		{
			name:    "strict",
			inputs:  []string{in, broken},
			set:     func(p *job.Params) { p.Strict = true },
			wantErr: "line 2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cfg := testConfig(t, "", out, 2)
			cfg.Inputs = tt.inputs
			cfg.Params.ChunkBytes = 64 << 20
			cfg.Queue.MaxDeliver = 2
			if tt.set != nil {
				tt.set(&cfg.Params)
			}
			m, err := Run(context.Background(), cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				if _, serr := os.Stat(filepath.Join(out, "_SUCCESS")); serr == nil {
					t.Fatal("_SUCCESS written for a failed job")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, out, m)
		})
	}
}
