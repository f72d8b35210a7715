package query

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// TestQueryFollowsJob checks that a job and a query give one verdict on
// a pair: both judge through sketch.Rule, so whatever the rule makes of
// the job's parameters (here its threshold, method and verification
// changed), every document of the job, queried against the job's own
// index, finds exactly its pairs in pairs/ (itself aside), with the same
// similarity, estimate and method. A change to the rule that reached the
// verify stage but not query (or the other way) would break it.
func TestQueryFollowsJob(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		set  func(*job.Params)
	}{
		{"minhash exact 0.8", func(*job.Params) {}},
		{"minhash exact 0.5", func(p *job.Params) { p.Threshold = 0.5 }},
		{"minhash exact 0.9", func(p *job.Params) { p.Threshold = 0.9 }},
		{"minhash estimate 0.7", func(p *job.Params) { p.Threshold, p.Verify = 0.7, "estimate" }},
		{"simhash exact", func(p *job.Params) { p.Method = "simhash" }},
		{"simhash estimate", func(p *job.Params) { p.Method, p.Verify = "simhash", "estimate" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := runJob(t, 600, 11, tc.set)
			var m manifest.Manifest
			if err := storage.ReadJSON(ctx, mustDir(t, f.out), job.ManifestFile, &m); err != nil {
				t.Fatal(err)
			}
			if m.Counts.NotCompared != 0 || m.Counts.NotListed != 0 {
				t.Fatalf("the job bounded buckets or clusters (%d pairs not compared, %d not listed): pick a corpus where it lists every pair", m.Counts.NotCompared, m.Counts.NotListed)
			}
			want := map[string][]string{} // by document: its pairs, as "partner similarity estimate method"
			files, err := filepath.Glob(filepath.Join(f.out, job.PairsDir, "*.parquet"))
			if err != nil {
				t.Fatal(err)
			}
			st := mustDir(t, f.out)
			for _, name := range files {
				rows, err := pqfile.Read[records.Pair](ctx, st, filepath.Join(job.PairsDir, filepath.Base(name)), nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range rows {
					want[r.AID] = append(want[r.AID], verdict(r.BID, r.Similarity, r.Estimate, r.Method))
					want[r.BID] = append(want[r.BID], verdict(r.AID, r.Similarity, r.Estimate, r.Method))
				}
			}
			s, err := Open(ctx, []string{f.out}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var docs []Doc
			for _, id := range f.ids {
				docs = append(docs, Doc{ID: id, Text: []byte(f.texts[id])})
			}
			res, _, err := s.Query(ctx, docs)
			if err != nil {
				t.Fatal(err)
			}
			pairs := 0
			for _, r := range res {
				var got []string
				for _, mt := range r.Matches {
					if mt.ID != r.ID {
						got = append(got, verdict(mt.ID, mt.Similarity, mt.Estimate, mt.Method))
					}
				}
				slices.Sort(got)
				w := slices.Sorted(slices.Values(want[r.ID]))
				if !slices.Equal(got, w) {
					t.Errorf("%s: the query finds\n  %s\nthe job listed\n  %s", r.ID, strings.Join(got, "\n  "), strings.Join(w, "\n  "))
				}
				pairs += len(w)
			}
			if pairs < 100 {
				t.Fatalf("only %d pairs listed: the test tests little", pairs/2)
			}
			t.Logf("%d pairs, the same in pairs/ and in the queries of all %d documents", pairs/2, len(res))
		})
	}
}

// verdict describes a pair from one side: the other document and what
// the verdict said.
func verdict(other string, sim, est float64, method string) string {
	return fmt.Sprintf("%s %v %v %s", other, sim, est, method)
}

func mustDir(t *testing.T, path string) *storage.Dir {
	t.Helper()
	st, err := storage.NewDir(path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
