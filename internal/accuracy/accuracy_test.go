package accuracy

import (
	"bytes"
	"context"
	"testing"

	"github.com/neardup/neardup/internal/control"
	"github.com/neardup/neardup/internal/corpus"
	"github.com/neardup/neardup/internal/job"
)

// TestAccuracy runs the job on a 3,500-document accuracy corpus with a
// 300-page template family, MinHash with default settings at thresholds
// 0.8 and 0.5, and requires what `accuracy --check` requires: precision 1,
// every pair listed once, pair recall >= 0.99 for J >= t+0.05 and >= 0.94
// for [t, t+0.05), and every pair with J = 1 listed. pairs/ must list the
// pairs themselves: recall by cluster does not count here.
func TestAccuracy(t *testing.T) {
	cfg := corpus.AccuracyConfig(3500, 1)
	cfg.TemplatePages = 300
	rep, err := Measure(context.Background(), Options{
		Corpus:     cfg,
		Thresholds: []float64{0.8, 0.5},
		Methods:    []job.Method{job.MethodMinHash},
		Params:     control.DefaultParams(),
		Workers:    2,
	})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, rep); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", buf.Bytes())
	for _, run := range rep.Runs {
		if !run.Checked {
			t.Fatalf("%s run at %v is not checked", run.Method, run.Result.Threshold)
		}
		for _, f := range run.Failures {
			t.Errorf("%s, threshold %.2f: %s", run.Method, run.Result.Threshold, f)
		}
	}
	if len(rep.Runs) != 2 {
		t.Errorf("%d runs, want 2", len(rep.Runs))
	}
}
