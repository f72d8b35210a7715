package pipeline

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestWritePlanReport checks the planner's printed plan against golden
// files, and the b=20, r=5 table against the published S-curve values.
func TestWritePlanReport(t *testing.T) {
	tests := []struct {
		name   string
		set    func(*Params)
		golden string
		want   []string // lines that must appear
	}{
		{"default", func(*Params) {}, "plan-0.8.golden", []string{"bands (b)                            16", "P(candidate) at threshold            0.9470"}},
		{"b20r5", func(p *Params) { p.Bands, p.Rows = 20, 5 }, "plan-20x5.golden",
			[]string{"0.2         0.0064", "0.3         0.0475", "0.4         0.1860", "0.5         0.4701", "0.6         0.8019", "0.7         0.9748", "0.8         0.9996"}},
		{"threshold 0.5", func(p *Params) { p.Threshold = 0.5 }, "plan-0.5.golden", []string{"rows per band (r)                    3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultParams()
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
