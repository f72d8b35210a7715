package control

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/records"
)

// v2Fixture is an index of layout version 2 (signature files) made by an
// earlier build, and the corpus it was made of (../../testdata/index-v2).
const v2Fixture = "../../testdata/index-v2"

// copyV2Fixture copies the v2 index to a temporary directory (a job
// against it must not write into testdata) and returns it and the
// corpus's files.
func copyV2Fixture(t *testing.T) (string, []string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "v2")
	if err := os.CopyFS(out, os.DirFS(filepath.Join(v2Fixture, "out"))); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(v2Fixture, "corpus", "*.jsonl.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus in %s: %v", v2Fixture, err)
	}
	return out, files
}

// TestAgainstV2Index runs a job --against an index of layout version 2
// (signature files) and the same job --against an index of this build
// (text stores) over the same corpus, and checks that they list the same
// pairs: a v2 index stays usable, and its records and the re-sketched
// texts agree.
func TestAgainstV2Index(t *testing.T) {
	ctx := context.Background()
	v2, corpusFiles := copyV2Fixture(t)
	v3 := filepath.Join(t.TempDir(), "v3")
	cfg := testConfig(t, "", v3, 1)
	cfg.Inputs = corpusFiles
	cfg.Params.Partitions = 2
	cfg.Params.ChunkBytes = job.DefaultParams().ChunkBytes // as the fixture's job
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	pairs := map[string][]records.Pair{}
	for name, earlier := range map[string]string{"v2": v2, "v3": v3, "v2 gather": v2, "v3 gather": v3} {
		out := filepath.Join(t.TempDir(), "second")
		cfg := testConfig(t, corpusFiles[1], out, 1)
		cfg.Params.Partitions = 2
		if strings.HasSuffix(name, "gather") {
			cfg.Params.Gather = job.GatherOn
		}
		cfg.Against = []string{earlier}
		if _, err := Run(ctx, cfg); err != nil {
			t.Fatalf("--against the %s index: %v", name, err)
		}
		ps := readPairs(t, out)
		for i := range ps {
			ps[i].AJob, ps[i].AOut = nil, nil // name the earlier job
		}
		slices.SortFunc(ps, func(x, y records.Pair) int {
			if x.A != y.A {
				return int(x.A - y.A)
			}
			return int(x.B - y.B)
		})
		pairs[name] = ps
	}
	firstOwn := job.Ordinal(1, 0) // the fixture's job has chunk 0 only
	cross := 0
	for _, p := range pairs["v2"] {
		if p.A < firstOwn {
			cross++
		}
	}
	if cross == 0 {
		t.Fatalf("%d pairs, none with a document of the v2 index: the test tests nothing", len(pairs["v2"]))
	}
	for _, name := range []string{"v3", "v2 gather", "v3 gather"} {
		if !slices.EqualFunc(pairs["v2"], pairs[name], func(x, y records.Pair) bool {
			return x.A == y.A && x.B == y.B && x.AID == y.AID && x.BID == y.BID && x.Similarity == y.Similarity &&
				x.Estimate == y.Estimate && x.Method == y.Method && x.BandsCollided == y.BandsCollided && x.FirstBand == y.FirstBand && x.AURL == y.AURL
		}) {
			t.Errorf("--against the v2 index: %d pairs, %s: %d, not the same:\n%v\n%v", len(pairs["v2"]), name, len(pairs[name]), pairs["v2"], pairs[name])
		}
	}
	t.Logf("%d pairs, %d with an earlier document", len(pairs["v2"]), cross)
}
