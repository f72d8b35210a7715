package stage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// verifyDocs returns two chunks of documents for hand-made edges: in
// chunk 0, a, its copy a2, b (a's last word replaced: J = 8/10), u
// (unrelated) and an empty document; in chunk 1, c (a's first word
// replaced: J = 8/10 with a).
func verifyDocs() [][]string {
	return [][]string{
		{
			`{"id":"a","text":"w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13"}`,
			`{"id":"a2","text":"W1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13!"}`,
			`{"id":"b","text":"w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 x13"}`,
			`{"id":"u","text":"v1 v2 v3 v4 v5 v6 v7 v8 v9 v10 v11 v12 v13"}`,
			`{"id":"empty","text":""}`,
		},
		{
			`{"id":"c","text":"x1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13"}`,
		},
	}
}

// The ordinals of verifyDocs: document i of chunk c is c<<32 | i.
const (
	ordA, ordA2, ordB, ordU, ordEmpty int64 = 0, 1, 2, 3, 4
	ordC                              int64 = 1 << 32
)

// mapVerifyDocs maps verifyDocs and returns the map results by chunk.
func mapVerifyDocs(t *testing.T, st storage.FS, p job.Params) map[int]job.MapResult {
	t.Helper()
	out := map[int]job.MapResult{}
	for c, lines := range verifyDocs() {
		in := writeTemp(t, "in.jsonl", strings.Join(lines, "\n")+"\n")
		res, err := Map(context.Background(), st, &job.Spec{Params: p}, wholeChunk(c, in))
		if err != nil {
			t.Fatal(err)
		}
		out[c] = *res
	}
	return out
}

// edgesOf writes hand-made edges for chunk 0, as partition part would.
func edgesOf(t *testing.T, st storage.FS, part int, edges ...records.Candidate) job.ReduceResult {
	t.Helper()
	infos, err := writeEdges(context.Background(), st, job.EdgeFile(part), edges)
	if err != nil {
		t.Fatal(err)
	}
	return job.ReduceResult{Part: part, EdgeFiles: infos}
}

// TestVerifyEdges checks verification of hand-made candidates and claims:
// what it keeps and counts, and that a claim whose sets differ (a
// fingerprint collision), or an edge naming a document without a
// signature, fails the task. Each case runs with the task's window of
// documents and with windows of one and two documents: the results are
// the same.
func TestVerifyEdges(t *testing.T) {
	ctx := context.Background()
	cand := func(a, b int64) records.Candidate { return records.Candidate{A: a, B: b, Band: 2} }
	claim := func(rep, m int64) records.Candidate { return records.Candidate{A: rep, B: m, Band: claimBand} }
	type result struct{ checked, prefiltered, exact, verified, members int64 }
	tests := []struct {
		name    string
		set     func(*job.Params)
		parts   [][]records.Candidate // the edges of each partition
		want    result
		pairs   []string // verified pairs, "a b similarity"
		wantErr string
	}{
		{"claim of a copy is confirmed", nil,
			[][]records.Candidate{{claim(ordA, ordA2)}}, result{members: 1}, nil, ""},
		{"claim of another set is a fingerprint collision", nil,
			[][]records.Candidate{{claim(ordA, ordB)}}, result{}, nil, "fingerprint collision"},
		{"claim across chunks is a fingerprint collision", nil,
			[][]records.Candidate{{cand(ordA, ordB), claim(ordA, ordC)}}, result{}, nil, "fingerprint collision"},
		{"near-duplicates at the threshold, across chunks", nil,
			[][]records.Candidate{{cand(ordA, ordB), cand(ordA, ordC)}}, result{checked: 2, exact: 2, verified: 2}, []string{"a b 0.8000", "a c 0.8000"}, ""},
		{"one pair from three partitions is checked once", nil,
			[][]records.Candidate{{cand(ordA, ordB)}, {cand(ordA, ordB)}, {cand(ordA, ordB), cand(ordA, ordC)}},
			result{checked: 2, exact: 2, verified: 2}, []string{"a b 0.8000", "a c 0.8000"}, ""},
		{"an unrelated pair is rejected by the pre-filter", nil,
			[][]records.Candidate{{cand(ordA, ordU)}}, result{checked: 1, prefiltered: 1}, nil, ""},
		{"below the threshold", func(p *job.Params) { p.Threshold = 0.81 },
			[][]records.Candidate{{cand(ordA, ordB)}}, result{checked: 1, exact: 1}, nil, ""},
		{"estimate: no pre-filter, no exact similarity", func(p *job.Params) { p.Verify, p.Threshold = "estimate", 0.01 },
			[][]records.Candidate{{cand(ordA, ordA2), cand(ordA, ordU)}}, result{checked: 2, verified: 1}, []string{"a a2 1.0000"}, ""},
		{"a document without shingles has no signature", nil,
			[][]records.Candidate{{cand(ordA, ordEmpty)}}, result{}, nil, "no signature"},
	}
	for _, tt := range tests {
		for _, window := range []int{verifyWindowDocs, 1, 2} {
			t.Run(fmt.Sprintf("%s/window=%d", tt.name, window), func(t *testing.T) {
				st := newStore(t)
				p := resolved(t, func(p *job.Params) {
					if tt.set != nil {
						tt.set(p)
					}
				})
				maps := mapVerifyDocs(t, st, p)
				var reduces []job.ReduceResult
				for part, edges := range tt.parts {
					reduces = append(reduces, edgesOf(t, st, part, edges...))
				}
				res, err := verify(ctx, st, &job.Spec{Params: p}, 0, reduces, maps, window)
				if tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("err = %v, want %q", err, tt.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				got := result{res.Checked, res.Prefiltered, res.Exact, res.Verified, res.ExactMembers}
				if got != tt.want {
					t.Errorf("counts %+v, want %+v", got, tt.want)
				}
				var pairs []string
				if res.File != nil {
					rows, err := pqfile.Read[records.Pair](ctx, st, res.File.Name, res.File)
					if err != nil {
						t.Fatal(err)
					}
					for _, r := range rows {
						pairs = append(pairs, fmt.Sprintf("%s %s %.4f", r.AID, r.BID, r.Similarity))
					}
				}
				if !slices.Equal(pairs, tt.pairs) {
					t.Errorf("verified %v, want %v", pairs, tt.pairs)
				}
				var hist, rejected int64
				for i := range res.VerifiedHist {
					hist += res.VerifiedHist[i]
					rejected += res.RejectedHist[i]
				}
				if hist != res.Verified || rejected != res.Checked-res.Prefiltered-res.Verified {
					t.Errorf("histograms hold %d verified and %d rejected pairs", hist, rejected)
				}
				if res.MembersFile != nil {
					rows, err := pqfile.Read[records.ExactMember](ctx, st, res.MembersFile.Name, res.MembersFile)
					if err != nil || len(rows) != 1 || rows[0] != (records.ExactMember{Group: ordA, Doc: ordA2, GroupID: "a", ID: "a2"}) {
						t.Errorf("members %+v (%v)", rows, err)
					}
				}
			})
		}
	}
}

// TestVerifyMissingInputs checks that a damaged edge file and a chunk
// without a map result are errors, not fewer pairs.
func TestVerifyMissingInputs(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	p := resolved(t, func(*job.Params) {})
	maps := mapVerifyDocs(t, st, p)
	rr := edgesOf(t, st, 0, records.Candidate{A: ordA, B: ordC, Band: 1})

	only0 := map[int]job.MapResult{0: maps[0]}
	if _, err := Verify(ctx, st, &job.Spec{Params: p}, 0, []job.ReduceResult{rr}, only0); err == nil || !strings.Contains(err.Error(), "chunk 1 has no map result") {
		t.Errorf("without chunk 1's map result: err = %v", err)
	}

	sig := maps[1]
	sig.SigFile.Bytes++
	if _, err := Verify(ctx, st, &job.Spec{Params: p}, 0, []job.ReduceResult{rr}, map[int]job.MapResult{0: maps[0], 1: sig}); err == nil {
		t.Error("a signature file of another size was read")
	}

	if err := os.WriteFile(st.Path(rr.EdgeFiles[0].Name), make([]byte, rr.EdgeFiles[0].Bytes), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(ctx, st, &job.Spec{Params: p}, 0, []job.ReduceResult{rr}, maps); !errors.Is(err, pqfile.ErrCorrupt) {
		t.Errorf("damaged edge file: err = %v, want ErrCorrupt", err)
	}
}
