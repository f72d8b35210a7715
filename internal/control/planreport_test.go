package control

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/job"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestWritePlanReport checks the planner's printed plan against golden
// files, the b=20, r=5 table against the published S-curve values, and
// the SimHash plans (k = 3 at thresholds 0.8 and 0.5, k = 10 at 0.8).
func TestWritePlanReport(t *testing.T) {
	tests := []struct {
		name   string
		set    func(*job.Params)
		golden string
		want   []string // lines that must appear
	}{
		{"default", func(*job.Params) {}, "plan-0.8.golden", []string{"bands (b)                            16", "P(candidate) at threshold            0.9470"}},
		{"b20r5", func(p *job.Params) { p.Bands, p.Rows = 20, 5 }, "plan-20x5.golden",
			[]string{"0.2         0.0064", "0.3         0.0475", "0.4         0.1860", "0.5         0.4701", "0.6         0.8019", "0.7         0.9748", "0.8         0.9996"}},
		{"threshold 0.5", func(p *job.Params) { p.Threshold = 0.5 }, "plan-0.5.golden", []string{"rows per band (r)                    3"}},
		{"simhash k3", func(p *job.Params) { p.Method = "simhash" }, "plan-simhash-k3-0.8.golden",
			[]string{"block widths (bits)                  16 16 16 16", "expected distance 64q at threshold   9.69",
				"P(found) at threshold                0.0085", "--hamming 10 is the smallest that finds half (0.62; it makes 19%"}},
		{"simhash k3 threshold 0.5", func(p *job.Params) { p.Method, p.Threshold = "simhash", 0.5 }, "plan-simhash-k3-0.5.golden",
			[]string{"bit-flip probability q at threshold  0.2677", "no --hamming up to 15 finds half (15: 0.33): use --method minhash"}},
		{"simhash k10", func(p *job.Params) { p.Method, p.Hamming = "simhash", 10 }, "plan-simhash-k10-0.8.golden",
			[]string{"block widths (bits)                  6 6 6 6 6 6 6 6 6 5 5", "P(found) at threshold                0.6247",
				"P(candidate) of unrelated documents  0.19"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := job.DefaultParams()
			tt.set(&p)
			if err := p.Resolve(); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := WritePlanReport(&buf, p); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("plan lacks %q:\n%s", w, buf.String())
				}
			}
			path := filepath.Join("testdata", tt.golden)
			if *update {
				os.WriteFile(path, buf.Bytes(), 0o644)
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("plan differs from %s:\n%s", path, buf.String())
			}
		})
	}
}
