package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/corpus"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/storage"
)

// TestCompactIndexes runs a series of three weekly jobs, the third twice:
// against the first two jobs' outputs, and against their indexes
// compacted into one (coordinator index compact). Both must list the same
// pairs (with the same similarity, estimate and bands), and the compacted
// index must hold every document of the two, in few files. A second
// compaction into the same place is refused without Overwrite; one that
// names a job twice is refused.
func TestCompactIndexes(t *testing.T) {
	pool, err := corpus.BundledPool()
	if err != nil {
		t.Fatal(err)
	}
	g, err := corpus.New(pool, corpus.AccuracyConfig(1500, 5))
	if err != nil {
		t.Fatal(err)
	}
	w, err := corpus.Write(g, corpus.WriteOptions{Dir: t.TempDir(), Format: corpus.Format("jsonl"), Files: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	base := t.TempDir()
	run := func(name string, input string, against ...string) string {
		out := filepath.Join(base, name)
		cfg := testConfig(t, input, out, 2)
		cfg.Against = against
		cfg.Params.ChunkBytes = 128 << 10
		cfg.Params.Partitions = 0 // later jobs take the first's
		if _, err := Run(ctx, cfg); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return out
	}
	week1 := run("week1", w.Files[0])
	week2 := run("week2", w.Files[1], week1)
	compacted := filepath.Join(base, "compacted")
	ix, err := CompactIndexes(ctx, CompactConfig{Out: compacted, Indexes: []string{week1, week2}})
	if err != nil {
		t.Fatal(err)
	}
	var docs int64
	for _, out := range []string{week1, week2} {
		d, err := storage.Open(ctx, out)
		if err != nil {
			t.Fatal(err)
		}
		src, err := index.Load(ctx, d)
		d.Close()
		if err != nil {
			t.Fatal(err)
		}
		docs += src.Docs
	}
	if ix.Docs != docs || len(ix.BandFiles) != 1 || ix.Against != nil {
		t.Fatalf("compacted index: %d docs (want %d), %d band files (want 1), against %v (want none)", ix.Docs, docs, len(ix.BandFiles), ix.Against)
	}
	if len(ix.Compacted) != 2 || ix.Compacted[0].Out != week1 || ix.Compacted[1].Out != week2 ||
		ix.Compacted[0].Docs+ix.Compacted[1].Docs != docs || ix.Compacted[1].FirstChunk != ix.Compacted[0].Chunks {
		t.Fatalf("compacted index: compacted = %+v, want week1 and week2 with their chunk ranges", ix.Compacted)
	}

	bySeries := run("week3", w.Files[2], week1, week2)
	byCompacted := run("week3c", w.Files[2], compacted)
	key := func(out string) []string {
		var keys []string
		for _, p := range readPairs(t, out) {
			keys = append(keys, fmt.Sprintf("%s %s %.6f %.6f %d %d", p.AID, p.BID, p.Similarity, p.Estimate, p.BandsCollided, p.FirstBand))
		}
		slices.Sort(keys)
		return keys
	}
	want, got := key(bySeries), key(byCompacted)
	if len(want) == 0 {
		t.Fatal("the third week has no pairs: the test shows nothing")
	}
	if !slices.Equal(got, want) {
		t.Fatalf("against the compacted index: %d pairs, against the series: %d\nfirst: %q\nwant:  %q", len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
	}
	earlier := 0
	for _, p := range readPairs(t, byCompacted) {
		if p.AJob != nil && *p.AJob == ix.Job {
			earlier++
		}
	}
	if earlier == 0 {
		t.Fatal("no pair of the third week names a document of the compacted index")
	}

	// A compacted source holds its jobs: the third week, run against
	// week1 and week2, is not against anything once compacted with them.
	again, err := CompactIndexes(ctx, CompactConfig{Out: filepath.Join(base, "again"), Indexes: []string{compacted, bySeries}})
	if err != nil {
		t.Fatal(err)
	}
	if again.Against != nil || len(again.Compacted) != 3 {
		t.Fatalf("compacting the compacted index with week3: against %+v (want none), holds %d jobs (want 3)", again.Against, len(again.Compacted))
	}

	if _, err := CompactIndexes(ctx, CompactConfig{Out: compacted, Indexes: []string{week1, week2}}); !errors.Is(err, ErrHasIndex) {
		t.Fatalf("compacting again without overwrite: %v, want %v", err, ErrHasIndex)
	}
	if _, err := CompactIndexes(ctx, CompactConfig{Out: filepath.Join(base, "twice"), Indexes: []string{week1, week1}}); err == nil {
		t.Fatal("compacting one job twice was not refused")
	}
}
