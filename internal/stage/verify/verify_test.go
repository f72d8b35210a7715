package verify

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/sigfile"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/stage/mapper"
	"github.com/neardup/neardup/internal/stagetest"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/textstore"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/internal/worktest"
	"github.com/neardup/neardup/pkg/records"
)

// verifyDocs returns two chunks of documents for hand-made edges: in
// chunk 0, a, its copy a2, b (a's last word replaced: J = 8/10), u
// (unrelated), an empty document and s (a without its last two words: 7
// of a's 9 shingles, J = 7/9); in chunk 1, c (a's first word replaced: J =
// 8/10 with a).
func verifyDocs() [][]string {
	return [][]string{
		{
			`{"id":"a","text":"w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13"}`,
			`{"id":"a2","text":"W1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13!"}`,
			`{"id":"b","text":"w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 x13"}`,
			`{"id":"u","text":"v1 v2 v3 v4 v5 v6 v7 v8 v9 v10 v11 v12 v13"}`,
			`{"id":"empty","text":""}`,
			`{"id":"s","text":"w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11"}`,
		},
		{
			`{"id":"c","text":"x1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13"}`,
		},
	}
}

// The ordinals of verifyDocs: document i of chunk c is c<<32 | i.
const (
	ordA, ordA2, ordB, ordU, ordEmpty, ordS int64 = 0, 1, 2, 3, 4, 5
	ordC                                    int64 = 1 << 32
)

// mapVerifyDocs maps verifyDocs and returns the map results by chunk.
func mapVerifyDocs(t *testing.T, st storage.FS, p job.Params) map[int]job.MapResult {
	t.Helper()
	out := map[int]job.MapResult{}
	for c, lines := range verifyDocs() {
		in := worktest.WriteTemp(t, "in.jsonl", strings.Join(lines, "\n")+"\n")
		res, err := mapper.Map(context.Background(), st, &job.Spec{Params: p}, worktest.WholeChunk(c, in))
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
	edges = slices.SortedFunc(slices.Values(edges), workfile.CompareEdge) // as reduce writes them
	infos, err := workfile.WriteEdges(context.Background(), st, job.EdgeFile(part), edges)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := workfile.WriteRequests(context.Background(), st, job.RequestFile(part), edges)
	if err != nil {
		t.Fatal(err)
	}
	return job.ReduceResult{Part: part, EdgeFiles: infos, RequestFiles: reqs}
}

// gatherAndVerify runs the gather tasks if p.Gather is on, then verifies
// chunk with windows of window documents: the first error of either is
// returned.
func gatherAndVerify(ctx context.Context, st storage.FS, p job.Params, chunk int, reduces []job.ReduceResult, byChunk map[int]job.MapResult, window int, cacheBytes int64) (*job.VerifyResult, error) {
	src := SigSource{Maps: byChunk}
	if p.Gather == "on" {
		var err error
		if src.Gathers, err = stagetest.RunGathers(ctx, st, reduces, byChunk); err != nil {
			return nil, err
		}
	}
	return verify(ctx, st, &job.Spec{Params: p}, chunk, reduces, src, window, cacheBytes, newBitSets)
}

// TestVerifyEdges checks verification of hand-made candidates and claims:
// what it keeps and counts, and that a claim whose sets differ (a
// fingerprint collision), an edge naming a document without a signature,
// or a pair whose signatures share no band key (they would not have been
// a candidate), fails the task. Each case runs with the task's window of
// documents and with windows of one and two documents, with the task's
// cache of earlier windows' documents, none, and one that keeps nothing
// old (a budget of one byte): the results are the same.
func TestVerifyEdges(t *testing.T) {
	ctx := context.Background()
	cand := func(a, b int64) records.Candidate { return records.Candidate{A: a, B: b, Band: 2} }
	claim := func(rep, m int64) records.Candidate { return records.Candidate{A: rep, B: m, Band: workfile.ClaimBand} }
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
		{"a subset too small for the threshold is rejected by its size", nil,
			[][]records.Candidate{{cand(ordA, ordS)}}, result{checked: 1, prefiltered: 1}, nil, ""},
		{"a subset large enough for the threshold is checked", func(p *job.Params) { p.Threshold = 0.77 },
			[][]records.Candidate{{cand(ordA, ordS)}}, result{checked: 1, exact: 1, verified: 1}, []string{"a s 0.7778"}, ""},
		{"below the threshold", func(p *job.Params) { p.Threshold = 0.81 },
			[][]records.Candidate{{cand(ordA, ordB)}}, result{checked: 1, exact: 1}, nil, ""},
		{"estimate: no pre-filter, no exact similarity", func(p *job.Params) { p.Verify, p.Threshold = "estimate", 0.01 },
			[][]records.Candidate{{cand(ordA, ordA2), cand(ordA, ordU)}}, result{checked: 2, verified: 1}, []string{"a a2 1.0000"}, ""},
		{"a candidate whose band keys all differ is an error", func(p *job.Params) { p.Bands, p.Rows, p.Threshold = 1, 128, 0.7 },
			[][]records.Candidate{{cand(ordA, ordB)}}, result{}, nil, "share no band key"},
		{"a document without shingles has no signature", nil,
			[][]records.Candidate{{cand(ordA, ordEmpty)}}, result{}, nil, "no signature"},
	}
	for _, tt := range tests {
		for _, run := range []struct {
			window int
			gather job.Gather
			cache  int64
		}{{verifyWindowDocs, "off", verifyCacheBytes}, {verifyWindowDocs, "on", verifyCacheBytes}, {verifyWindowDocs, "sets", verifyCacheBytes}, {1, "off", verifyCacheBytes}, {1, "on", 0}, {1, "sets", 0}, {2, "on", 1}, {2, "off", verifyCacheBytes}, {2, "sets", 1}} {
			window := run.window
			t.Run(fmt.Sprintf("%s/window=%d/gather=%s/cache=%d", tt.name, window, run.gather, run.cache), func(t *testing.T) {
				st := worktest.NewStore(t)
				p := worktest.Resolved(t, func(p *job.Params) {
					p.Gather = run.gather
					if tt.set != nil {
						tt.set(p)
					}
				})
				maps := mapVerifyDocs(t, st, p)
				var reduces []job.ReduceResult
				for part, edges := range tt.parts {
					reduces = append(reduces, edgesOf(t, st, part, edges...))
				}
				res, err := gatherAndVerify(ctx, st, p, 0, reduces, maps, window, run.cache)
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
					rows, err := worktest.ReadPairs(ctx, st, res.File)
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
					rows, err := worktest.ReadMembers(ctx, st, res.MembersFile)
					if err != nil || len(rows) != 1 || rows[0] != (records.ExactMember{Group: ordA, Doc: ordA2, GroupID: "a", ID: "a2"}) {
						t.Errorf("members %+v (%v)", rows, err)
					}
				}
			})
		}
	}
}

// TestVerifyMissingInputs checks that a chunk without a map result, a
// signature file of another size, and damaged edge, request and gather
// files are errors, not fewer pairs, with the gather stage off and on.
func TestVerifyMissingInputs(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		gathers []job.Gather // the modes the case applies to
		break_  func(t *testing.T, st *storage.Dir, maps map[int]job.MapResult, rr job.ReduceResult) map[int]job.MapResult
		wantErr error  // or
		wantMsg string // a text of the error
	}{
		{"no map result for chunk 1", []job.Gather{job.GatherOff, job.GatherOn, job.GatherSets},
			func(t *testing.T, st *storage.Dir, maps map[int]job.MapResult, rr job.ReduceResult) map[int]job.MapResult {
				return map[int]job.MapResult{0: maps[0]}
			}, nil, "chunk 1 has no map result"},
		{"signature file of another size", []job.Gather{job.GatherOff, job.GatherOn},
			func(t *testing.T, st *storage.Dir, maps map[int]job.MapResult, rr job.ReduceResult) map[int]job.MapResult {
				sig := maps[1]
				sig.SigFile.Bytes++
				return map[int]job.MapResult{0: maps[0], 1: sig}
			}, sigfile.ErrCorrupt, ""},
		{"damaged text store", []job.Gather{job.GatherOff, job.GatherOn},
			func(t *testing.T, st *storage.Dir, maps map[int]job.MapResult, rr job.ReduceResult) map[int]job.MapResult {
				damage(t, st, maps[1].SigFile.Name)
				return maps
			}, textstore.ErrCorrupt, ""},
		{"damaged frame", []job.Gather{job.GatherOff, job.GatherOn},
			func(t *testing.T, st *storage.Dir, maps map[int]job.MapResult, rr job.ReduceResult) map[int]job.MapResult {
				flipByte(t, st, maps[0].SigFile.Name, 5)
				return maps
			}, nil, job.TextFile(0) + ": frame 0 at offset 0: checksum"},
		{"damaged edge file", []job.Gather{job.GatherOff, job.GatherOn, job.GatherSets},
			func(t *testing.T, st *storage.Dir, maps map[int]job.MapResult, rr job.ReduceResult) map[int]job.MapResult {
				damage(t, st, rr.EdgeFiles[0].Name)
				return maps
			}, workfile.ErrCorrupt, ""},
		{"set file of another size", []job.Gather{job.GatherSets},
			func(t *testing.T, st *storage.Dir, maps map[int]job.MapResult, rr job.ReduceResult) map[int]job.MapResult {
				set := maps[1]
				info := *set.SetFile
				info.Bytes++
				set.SetFile = &info
				return map[int]job.MapResult{0: maps[0], 1: set}
			}, sigfile.ErrCorrupt, ""},
		{"damaged set file", []job.Gather{job.GatherSets},
			func(t *testing.T, st *storage.Dir, maps map[int]job.MapResult, rr job.ReduceResult) map[int]job.MapResult {
				damage(t, st, maps[1].SetFile.Name)
				return maps
			}, nil, job.SetWorkFile(1) + ": offset 630: neither a text store's trailer nor a signature file's"},
		{"damaged record in a set file", []job.Gather{job.GatherSets},
			func(t *testing.T, st *storage.Dir, maps map[int]job.MapResult, rr job.ReduceResult) map[int]job.MapResult {
				flipByte(t, st, maps[0].SetFile.Name, 5)
				return maps
			}, sigfile.ErrCorrupt, ""},
		{"set file missing", []job.Gather{job.GatherSets},
			func(t *testing.T, st *storage.Dir, maps map[int]job.MapResult, rr job.ReduceResult) map[int]job.MapResult {
				if err := os.Remove(st.Path(maps[1].SetFile.Name)); err != nil {
					t.Fatal(err)
				}
				return maps
			}, fs.ErrNotExist, ""},
		{"damaged request file", []job.Gather{job.GatherOn},
			func(t *testing.T, st *storage.Dir, maps map[int]job.MapResult, rr job.ReduceResult) map[int]job.MapResult {
				damage(t, st, rr.RequestFiles[1].Name)
				return maps
			}, workfile.ErrCorrupt, ""},
	}
	for _, tt := range tests {
		for _, gather := range tt.gathers {
			t.Run(tt.name+"/gather="+gather.String(), func(t *testing.T) {
				st := worktest.NewStore(t)
				p := worktest.Resolved(t, func(p *job.Params) { p.Gather = gather })
				maps := mapVerifyDocs(t, st, p)
				rr := edgesOf(t, st, 0, records.Candidate{A: ordA, B: ordC, Band: 1})
				maps = tt.break_(t, st, maps, rr)
				_, err := gatherAndVerify(ctx, st, p, 0, []job.ReduceResult{rr}, maps, verifyWindowDocs, verifyCacheBytes)
				checkErr(t, err, tt.wantErr, tt.wantMsg)
			})
		}
	}
}

// TestGatheredRanges checks what verify trusts of a gather file: a range
// whose bytes, records or order differ from what its writer recorded is
// an error, and a document no gather task sent is one too; whether the
// ranges are read in place (local files) or copied first (files like an
// object store's).
func TestGatheredRanges(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		change  func(t *testing.T, st *storage.Dir, g []job.GatherResult)
		wantErr error
		wantMsg string
	}{
		{"undamaged", func(*testing.T, *storage.Dir, []job.GatherResult) {}, nil, ""},
		{"a byte changed", func(t *testing.T, st *storage.Dir, g []job.GatherResult) {
			info := g[1].Ranges[0]
			b, err := os.ReadFile(st.Path(info.Name))
			if err != nil {
				t.Fatal(err)
			}
			b[info.Offset+info.Bytes-1] ^= 1
			if err := os.WriteFile(st.Path(info.Name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, workfile.ErrCorrupt, ""},
		{"one record fewer", func(t *testing.T, st *storage.Dir, g []job.GatherResult) {
			info := g[0].Ranges[0]
			info.Rows++
			g[0].Ranges[0] = info
		}, workfile.ErrCorrupt, ""},
		{"range past the end", func(t *testing.T, st *storage.Dir, g []job.GatherResult) {
			info := g[0].Ranges[0]
			info.Bytes += 100
			g[0].Ranges[0] = info
		}, workfile.ErrCorrupt, ""},
		{"chunks out of order", func(t *testing.T, st *storage.Dir, g []job.GatherResult) {
			g[0].Chunk, g[1].Chunk = g[1].Chunk, g[0].Chunk
		}, workfile.ErrCorrupt, "out of order"},
		{"a chunk's records missing", func(t *testing.T, st *storage.Dir, g []job.GatherResult) {
			delete(g[1].Ranges, 0)
		}, nil, "no signature gathered for document"},
	}
	for _, tt := range tests {
		for _, remote := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/remote=%v", tt.name, remote), func(t *testing.T) {
				st, p, _, rr, g := gatheredFixture(t)
				if len(g) != 2 {
					t.Fatalf("%d gather results, want 2", len(g))
				}
				tt.change(t, st, g)
				var fs storage.FS = st
				if remote {
					fs = remoteFS{st}
				}
				res, err := verify(ctx, fs, &job.Spec{Params: p}, 0, rr, SigSource{Gathers: g}, verifyWindowDocs, verifyCacheBytes, newBitSets)
				if tt.wantErr == nil && tt.wantMsg == "" {
					if err != nil || res.Verified != 2 {
						t.Errorf("verified %v pairs, err %v; want 2", res, err)
					}
					return
				}
				checkErr(t, err, tt.wantErr, tt.wantMsg)
			})
		}
	}
}

// remoteFS is a local store whose files, like an object store's, are not
// local files: verify copies their ranges instead of reading them in
// place.
type remoteFS struct{ *storage.Dir }

func (r remoteFS) Open(ctx context.Context, name string) (storage.File, error) {
	f, err := r.Dir.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return remoteFile{f}, nil
}

type remoteFile struct{ storage.File }

// TestInPlaceRanges checks that both ways of reading a verify task's
// gathered records give the same bytes for every document: in place from
// the gather files and copied to a scratch.
func TestInPlaceRanges(t *testing.T) {
	ctx := context.Background()
	st, _, _, _, g := gatheredFixture(t)
	local, err := workfile.ReadGathered(ctx, st, 0, g)
	if err != nil {
		t.Fatal(err)
	}
	defer local.Remove()
	copied, err := workfile.ReadGathered(ctx, remoteFS{st}, 0, g)
	if err != nil {
		t.Fatal(err)
	}
	defer copied.Remove()
	if !local.InPlace() || copied.InPlace() {
		t.Fatalf("read in place: %v from local files, %v from remote ones; want true and false", local.InPlace(), copied.InPlace())
	}
	if !slices.Equal(local.Docs(), copied.Docs()) || len(local.Docs()) == 0 {
		t.Fatalf("documents %v in place, %v copied", local.Docs(), copied.Docs())
	}
	for _, doc := range local.Docs() {
		a, err := local.Get(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		b, err := copied.Get(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("document %d: %d bytes in place, %d copied, different", doc, len(a), len(b))
		}
	}
}

// TestGatherAgain runs the gather tasks twice: the first removes its
// chunk's signature file, the second (a task whose result was lost)
// describes the file the first wrote, with the same result; a damaged or
// missing gather file is then an error.
func TestGatherAgain(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		change  func(t *testing.T, st *storage.Dir, name string)
		wantErr error
	}{
		{"undamaged", func(*testing.T, *storage.Dir, string) {}, nil},
		{"a byte changed", func(t *testing.T, st *storage.Dir, name string) {
			b, err := os.ReadFile(st.Path(name))
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)-20] ^= 1
			if err := os.WriteFile(st.Path(name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, workfile.ErrCorrupt},
		{"truncated", func(t *testing.T, st *storage.Dir, name string) {
			if err := os.Truncate(st.Path(name), 30); err != nil {
				t.Fatal(err)
			}
		}, workfile.ErrCorrupt},
		{"removed", func(t *testing.T, st *storage.Dir, name string) {
			if err := os.Remove(st.Path(name)); err != nil {
				t.Fatal(err)
			}
		}, fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, _, maps, rr, first := gatheredFixture(t)
			for _, m := range maps {
				if _, err := os.Stat(st.Path(m.SigFile.Name)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s is still there after its gather task: %v", m.SigFile.Name, err)
				}
			}
			tt.change(t, st, job.GatherFile(1))
			again, err := stagetest.RunGathers(ctx, st, rr, maps)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range first {
				first[i].Seconds, again[i].Seconds = 0, 0
			}
			if !reflect.DeepEqual(again, first) {
				t.Errorf("run again: %+v\nfirst: %+v", again, first)
			}
		})
	}
}

// checkErr fails t unless err wraps wantErr (if set) and contains wantMsg
// (if set).
func checkErr(t *testing.T, err, wantErr error, wantMsg string) {
	t.Helper()
	if wantErr != nil && !errors.Is(err, wantErr) {
		t.Errorf("err = %v, want %v", err, wantErr)
	}
	if wantMsg != "" && (err == nil || !strings.Contains(err.Error(), wantMsg)) {
		t.Errorf("err = %v, want %q", err, wantMsg)
	}
}

// gatheredFixture maps the verify documents, makes two candidates of a
// (with c in chunk 1 and b in chunk 0) and runs the gather tasks.
func gatheredFixture(t *testing.T) (*storage.Dir, job.Params, map[int]job.MapResult, []job.ReduceResult, []job.GatherResult) {
	t.Helper()
	st := worktest.NewStore(t)
	p := worktest.Resolved(t, func(p *job.Params) { p.Gather = "on" })
	maps := mapVerifyDocs(t, st, p)
	rr := []job.ReduceResult{edgesOf(t, st, 0, records.Candidate{A: ordA, B: ordC, Band: 1}, records.Candidate{A: ordA, B: ordB, Band: 1})}
	g, err := stagetest.RunGathers(context.Background(), st, rr, maps)
	if err != nil {
		t.Fatal(err)
	}
	return st, p, maps, rr, g
}

// TestSigCache checks what the verify task's cache keeps from window to
// window: a document needed again is not loaded again while it fits;
// once a window is judged, the documents whose pairs their Bits count
// drop their sets; over the budget (at least twice the last window's own
// documents) entries with sets go before those without, the least
// recently used first.
func TestSigCache(t *testing.T) {
	entry := func() *sigEntry { return &sigEntry{set: make([]uint64, 10), n: 10, keys: []uint64{1}} } // 216 bytes counted
	const size, slim = 8*10 + 8 + 128, 8 + 128
	tests := []struct {
		name    string
		budget  int64
		bits    []int64   // the documents with Bits
		windows [][]int64 // the documents each window needs
		loads   int       // how many were not in the cache
		kept    []int64   // in the cache after the last window
		dropped []int64   // of them, without their sets
	}{
		{"all fit", 100 * size, nil, [][]int64{{1, 2}, {2, 3}, {1, 3}}, 3, []int64{1, 2, 3}, nil},
		{"no budget: twice the window's own", 0, nil, [][]int64{{1}, {2}, {3}, {1}}, 4, []int64{1, 3}, nil},
		{"least recently used goes first", 3 * size, nil, [][]int64{{1, 2}, {3}, {1}, {4}}, 4, []int64{1, 3, 4}, nil},
		{"a long window's own kept, then going", size, nil, [][]int64{{1, 2, 3}, {4}, {5}}, 5, []int64{4, 5}, nil},
		{"documents with Bits drop their sets", 3 * slim, []int64{1, 2, 3}, [][]int64{{1, 2}, {3}, {1, 2, 3}}, 3, []int64{1, 2, 3}, []int64{1, 2, 3}},
		{"sets go first", 2*slim + size, []int64{1, 2}, [][]int64{{1, 2, 3}, {4}, {1}}, 4, []int64{1, 2, 4}, []int64{1, 2}},
		{"then the least recently used", 2 * slim, []int64{1, 2, 3}, [][]int64{{1, 2, 3}, {4}}, 4, []int64{3, 4}, []int64{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newSigCache(tt.budget)
			loads := 0
			for _, w := range tt.windows {
				docs := map[int64]*sigEntry{}
				for _, doc := range w {
					if e := c.get(doc); e != nil {
						if !slices.Equal(e.keys, []uint64{1}) || e.n != 10 {
							t.Fatalf("document %d: band keys %v and %d shingles, want those it was added with", doc, e.keys, e.n)
						}
						docs[doc] = e
						continue
					}
					loads++
					docs[doc] = entry()
					c.add(doc, docs[doc])
				}
				c.settle(docs, func(doc int64) bool { return slices.Contains(tt.bits, doc) })
				c.next()
				var bytes int64
				for _, ce := range c.entries {
					bytes += entryBytes(ce.e)
				}
				if c.bytes != bytes {
					t.Fatalf("%d bytes counted, the entries hold %d", c.bytes, bytes)
				}
			}
			if loads != tt.loads {
				t.Errorf("%d loads, want %d", loads, tt.loads)
			}
			if got := slices.Sorted(maps.Keys(c.entries)); !slices.Equal(got, tt.kept) {
				t.Errorf("kept %v, want %v", got, tt.kept)
			}
			var dropped []int64
			for _, doc := range tt.kept {
				if ce := c.entries[doc]; ce != nil && ce.e.dropped() {
					dropped = append(dropped, doc)
				}
			}
			if !slices.Equal(dropped, tt.dropped) {
				t.Errorf("dropped the sets of %v, want %v", dropped, tt.dropped)
			}
		})
	}
}

// countingSource gives every document the record of one text, counting
// the loads of each document.
type countingSource struct {
	rec   sigfile.Record
	mu    sync.Mutex
	loads map[int64]int
}

func (c *countingSource) fork() (recordSource, error) { return c, nil }

func (c *countingSource) get(_ context.Context, doc int64) (sigfile.Record, []uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loads[doc]++
	r := c.rec
	r.ID = fmt.Sprint(doc)
	return r, nil, nil
}

// TestBlockLoads checks the block nested loops of verify: with heads
// paired with second documents spread over the chunk (the pages of
// template families), each document is loaded at most once a block, and
// the pairs come out in (a, b) order whatever order they were judged in
// (windows of 128 heads load and judge in two parts at once).
func TestBlockLoads(t *testing.T) {
	ctx := context.Background()
	const heads, pool, per = 256, 200, 25
	for _, tt := range []struct{ window int }{{8}, {4}, {64}, {128}} {
		t.Run(fmt.Sprintf("window=%d", tt.window), func(t *testing.T) {
			jb, src := newCountingJudge(t, tt.window)
			res := jb.res
			var all []records.Pair
			blocks := 0
			for lo := 0; lo < heads; lo += tt.window {
				var edges []records.Candidate
				hs := map[int64]bool{}
				for a := lo; a < min(lo+tt.window, heads); a++ {
					hs[int64(a)] = true
					for k := range per {
						// Second documents spread over the pool, each
						// paired with many heads.
						edges = append(edges, records.Candidate{A: int64(a), B: int64(heads + (a*7+k*8)%pool), Band: 1})
					}
				}
				slices.SortFunc(edges, func(x, y records.Candidate) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) })
				edges = slices.CompactFunc(edges, func(x, y records.Candidate) bool { return x.A == y.A && x.B == y.B })
				pairs, _, err := jb.judgeBlock(ctx, edges, hs)
				if err != nil {
					t.Fatal(err)
				}
				if len(pairs) != len(edges) {
					t.Fatalf("block at %d: %d pairs of %d edges", lo, len(pairs), len(edges))
				}
				for i, e := range edges {
					if pairs[i].A != e.A || pairs[i].B != e.B {
						t.Fatalf("block at %d: pair %d is (%d, %d), edge (%d, %d)", lo, i, pairs[i].A, pairs[i].B, e.A, e.B)
					}
				}
				all = append(all, pairs...)
				blocks++
			}
			var verified int64
			for _, n := range res.VerifiedHist {
				verified += n
			}
			if res.Checked != int64(len(all)) || verified != int64(len(all)) || res.Exact != int64(len(all)) {
				t.Errorf("counted %d checked, %d exact, %d verified; want %d each", res.Checked, res.Exact, verified, len(all))
			}
			if !slices.IsSortedFunc(all, func(x, y records.Pair) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) }) {
				t.Error("pairs not in (a, b) order")
			}
			loads := 0
			for doc, n := range src.loads {
				if n > blocks {
					t.Errorf("document %d loaded %d times in %d blocks", doc, n, blocks)
				}
				loads += n
			}
			if res.Loads != int64(loads) {
				t.Errorf("%d loads counted, %d made", res.Loads, loads)
			}
		})
	}
}

// newCountingJudge returns a blockJudge of windows of window documents,
// with a cache of no budget (but twice a window's own), whose documents
// all have the record of one text, and that text's countingSource.
func newCountingJudge(t *testing.T, window int) (*blockJudge, *countingSource) {
	t.Helper()
	p := worktest.Resolved(t, func(*job.Params) {})
	rs, err := sketch.NewResketcher(p)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := rs.Record(textstore.Doc{ID: "x", Text: []byte("the same page of a template family, with enough words to make shingles of it")})
	if err != nil {
		t.Fatal(err)
	}
	bnd, err := sketch.NewBanding(p)
	if err != nil {
		t.Fatal(err)
	}
	src := &countingSource{rec: rec, loads: map[int64]int{}}
	res := &job.VerifyResult{VerifiedHist: make([]int64, job.HistBins), RejectedHist: make([]int64, job.HistBins)}
	return &blockJudge{p: p, rule: sketch.NewRule(p), bnd: bnd, cache: newSigCache(0), srcs: []recordSource{src, src}, window: window, res: res, bits: newBitSets(2)}, src
}

// TestDroppedClaims checks a group claim whose documents' entries
// dropped their sets (see sigCache.settle) in an earlier block: the sets
// are loaded again, once, and compared, and the member confirmed.
func TestDroppedClaims(t *testing.T) {
	ctx := context.Background()
	jb, src := newCountingJudge(t, 64)
	jb.cache = newSigCache(verifyCacheBytes)
	// A block of 64 first documents each paired with 30 of 100 others:
	// every one gets Bits, and its entry drops its set.
	var edges []records.Candidate
	heads := map[int64]bool{}
	for a := range int64(64) {
		heads[a] = true
		for k := range int64(30) {
			edges = append(edges, records.Candidate{A: a, B: 100 + (a+3*k)%100, Band: 1})
		}
	}
	slices.SortFunc(edges, func(x, y records.Candidate) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) })
	if _, _, err := jb.judgeBlock(ctx, edges, heads); err != nil {
		t.Fatal(err)
	}
	for _, doc := range []int64{0, 1, 100, 101} {
		if ce := jb.cache.entries[doc]; ce == nil || !ce.e.dropped() {
			t.Fatalf("document %d: cached %v, want its entry without its set", doc, ce)
		}
	}
	claims := []records.Candidate{{A: 0, B: 100, Band: workfile.ClaimBand}, {A: 0, B: 101, Band: workfile.ClaimBand}, {A: 1, B: 102, Band: workfile.ClaimBand}}
	_, members, err := jb.judgeBlock(ctx, claims, map[int64]bool{0: true, 1: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(members) != len(claims) {
		t.Errorf("%d members confirmed, want %d", len(members), len(claims))
	}
	for _, doc := range []int64{0, 1, 100, 101, 102} {
		if src.loads[doc] != 2 {
			t.Errorf("document %d loaded %d times, want 2", doc, src.loads[doc])
		}
	}
}

// TestVerifyTaskError runs a verify task as a worker does, through the
// stage's Run, on a damaged edge file: its error names the chunk once
// ("verify chunk 0: verify chunk 0:" was printed before).
func TestVerifyTaskError(t *testing.T) {
	ctx := context.Background()
	st := worktest.NewStore(t)
	p := worktest.Resolved(t, func(p *job.Params) { p.Gather = job.GatherOff })
	byChunk := mapVerifyDocs(t, st, p)
	rr := edgesOf(t, st, 0, records.Candidate{A: ordA, B: ordC, Band: 1})
	damage(t, st, rr.EdgeFiles[0].Name)
	edges := rr.EdgeFiles[0]
	if err := stage.WriteTaskInputs(ctx, st, job.InputsEdges, map[int][]stage.EdgeInput{0: {{Part: rr.Part, Edges: &edges}}}); err != nil {
		t.Fatal(err)
	}
	list := slices.Collect(maps.Values(byChunk))
	if err := storage.WriteJSON(ctx, st, job.MapStageFile, list, true); err != nil {
		t.Fatal(err)
	}
	env := &stage.Env{Spec: &job.Spec{Params: p}, FS: st, Cache: &stage.Files{St: st}}
	_, err := Stage().Run(ctx, env, stage.Task{Stage: "verify", Index: 0})
	if !errors.Is(err, workfile.ErrCorrupt) {
		t.Fatalf("err = %v, want a corrupt edge file", err)
	}
	if n := strings.Count(err.Error(), "verify chunk 0:"); n != 1 {
		t.Errorf("%q names the chunk %d times, want once", err, n)
	}
}

// flipByte changes a bit of byte off of a file.
func flipByte(t *testing.T, st *storage.Dir, name string, off int) {
	t.Helper()
	b, err := os.ReadFile(st.Path(name))
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= 0x40
	if err := os.WriteFile(st.Path(name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// damage overwrites the file name with zeros.
func damage(t *testing.T, st *storage.Dir, name string) {
	t.Helper()
	info, err := os.Stat(st.Path(name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(st.Path(name), make([]byte, info.Size()), 0o644); err != nil {
		t.Fatal(err)
	}
}
