package stages

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/internal/worktest"
	"github.com/neardup/neardup/pkg/records"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// A stage case is a text file in testdata/cases: comment lines (#) saying
// what it demonstrates, parameter lines ("threshold 0.8"), then one section
// per document, "-- ID --" followed by the document's text (its lines
// joined by newlines, blank lines at the end dropped; an empty section is
// an empty document). The test writes the documents as one JSONL file,
// plans and runs Map, Reduce, Verify and Cluster on a storage.Dir, renders
// what came out as text and compares it with NAME.out beside the case
// (go test ./internal/stage -update rewrites it). checkCase asserts the
// invariants that hold whatever the golden says.
//
// The cases are built so that their pairs, similarities (with --verify
// exact), exact groups and clusters do not depend on the MinHash sketch
// (a pair's bands=N first=F, the bands it collides in, do):
// every pair at or above the threshold shares a band with probability
// 1 - 1e-6 or more. What does depend on it is said in the cases that show
// it (estimate, partitions, max-bucket); elsewhere only a count may move,
// rarely: a candidate below the threshold rejected by the pre-filter
// rather than by its exact Jaccard (probability below 5e-4 per pair here).
// After a change of pkg/minhash, rerun with -update and read the diff.
type stageCase struct {
	name   string
	params job.Params
	// docsPerChunk, if set, pads every JSONL line to 1024/docsPerChunk
	// bytes and plans with --chunk-bytes 1024, so that each chunk holds
	// docsPerChunk documents.
	docsPerChunk int
	docs         []caseDoc
	// wholeBytes is the job's stage.Job.WholeBytes (-1: the cluster
	// stage in steps of tasks).
	wholeBytes int64
	// executor, if set, wraps the in-process executor.
	executor func(ex stage.Executor, st storage.FS) stage.Executor
}

type caseDoc struct{ id, text string }

// parseCase reads a case file. Parameters not given keep the job's
// defaults, except --partitions, which is 1: with one partition the
// candidates do not depend on the band keys.
func parseCase(path string) (*stageCase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &stageCase{name: strings.TrimSuffix(filepath.Base(path), ".txt"), params: job.DefaultParams()}
	c.params.Partitions = 1
	p := &c.params
	var doc *caseDoc
	for n, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if id, ok := strings.CutPrefix(line, "-- "); ok && strings.HasSuffix(id, " --") {
			c.docs = append(c.docs, caseDoc{id: strings.TrimSuffix(id, " --")})
			doc = &c.docs[len(c.docs)-1]
			continue
		}
		if doc != nil {
			doc.text += line + "\n"
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, _ := strings.Cut(line, " ")
		bad := func(err error) error { return fmt.Errorf("%s:%d: %s: %v", path, n+1, key, err) }
		var err error
		switch key {
		case "threshold":
			p.Threshold, err = strconv.ParseFloat(val, 64)
		case "perms":
			p.K, err = strconv.Atoi(val)
		case "bands":
			p.Bands, err = strconv.Atoi(val)
		case "rows":
			p.Rows, err = strconv.Atoi(val)
		case "hamming":
			p.Hamming, err = strconv.Atoi(val)
		case "partitions":
			p.Partitions, err = strconv.Atoi(val)
		case "max-bucket":
			p.MaxBucket, err = strconv.Atoi(val)
		case "max-cluster-pairs":
			p.MaxClusterPairs, err = strconv.ParseInt(val, 10, 64)
		case "docs-per-chunk":
			c.docsPerChunk, err = strconv.Atoi(val)
		case "method":
			err = p.Method.Set(val)
		case "verify":
			err = p.Verify.Set(val)
		case "keep":
			err = p.Keep.Set(val)
		default:
			err = fmt.Errorf("unknown parameter")
		}
		if err != nil {
			return nil, bad(err)
		}
	}
	for i := range c.docs {
		c.docs[i].text = strings.TrimRight(c.docs[i].text, "\n")
	}
	if len(c.docs) == 0 {
		return nil, fmt.Errorf("%s: no documents", path)
	}
	if err := p.Resolve(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// writeInput writes the case's documents as JSONL, one line each, padded
// when the case asks for several chunks.
func (c *stageCase) writeInput(path string) error {
	var buf bytes.Buffer
	for _, d := range c.docs {
		line, err := json.Marshal(map[string]string{"id": d.id, "text": d.text})
		if err != nil {
			return err
		}
		if c.docsPerChunk > 0 {
			width := 1024 / c.docsPerChunk
			pad := width - len(line) - len(`,"pad":""`) - 1 // and the newline
			if pad < 0 {
				return fmt.Errorf("document %s: %d bytes of JSON do not fit a line of %d", d.id, len(line), width)
			}
			line = fmt.Appendf(line[:len(line)-1], `,"pad":"%s"}`, strings.Repeat(" ", pad))
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// caseRun is everything the stages produced for a case.
type caseRun struct {
	plan     job.Plan
	docs     []records.DocRecord  // docs/, in ordinal order
	bands    []records.BandRecord // bands/, every file
	maps     []job.MapResult
	reduces  []job.ReduceResult
	cands    [][]records.Candidate // candidates/, by partition
	verifies []job.VerifyResult
	verified []records.Pair        // the work area's verified pairs of representatives
	members  []records.ExactMember // the work area's confirmed claims
	stats    *stage.ClusterStats
	pairs    []records.Pair // pairs/, every file
	pairFile int            // files in pairs/
	exact    []records.ExactRecord
	clusters []records.ClusterRecord
	dups     []records.Duplicate
	outcomes map[string]*stage.Outcome // by stage or cluster step
	out      *storage.Dir              // the job's output
}

// run plans the case's input and runs every stage on a fresh directory,
// in the order the coordinator does, without a queue.
func (c *stageCase) run(t *testing.T) *caseRun {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := c.writeInput(in); err != nil {
		t.Fatal(err)
	}
	st, err := storage.NewDir(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	p := c.params
	if c.docsPerChunk > 0 {
		p.ChunkBytes = 1024
	}
	spec := &job.Spec{Job: c.name, Epoch: "test", Out: st.Root(), Params: p}
	inputs, _, err := job.ExpandInputs(context.Background(), []string{in}, job.InputOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := &caseRun{}
	if r.plan, err = job.MakePlan(context.Background(), inputs, p.ChunkBytes); err != nil {
		t.Fatal(err)
	}
	// Every stage, in the coordinator's order, in this process.
	if err := storage.WriteJSON(ctx, st, job.PlanFile, &r.plan, true); err != nil {
		t.Fatal(err)
	}
	j := &stage.Job{Spec: spec, Plan: &r.plan, Out: st, FS: st, Manifest: &manifest.Manifest{}, Log: slog.New(slog.DiscardHandler), WholeBytes: c.wholeBytes}
	var ex stage.Executor = Local{Env: &stage.Env{Spec: spec, FS: st, Cache: &stage.Files{St: st}, Inputs: anyPath{}}}
	if c.executor != nil {
		ex = c.executor(ex, st)
	}
	rec := recorder{ex: ex, out: map[string]*stage.Outcome{}}
	r.out = st
	if err := stage.Drive(ctx, j, Of(spec), rec); err != nil {
		t.Fatal(err)
	}
	r.outcomes = rec.out
	r.maps = results[job.MapResult](t, rec.out["map"])
	for _, tr := range results[job.ReduceTaskResult](t, rec.out["reduce"]) {
		r.reduces = append(r.reduces, tr.Parts...)
		for _, b := range readAll[records.Band](t, st, tr.Bands) {
			if int(b.Part) < tr.First || int(b.Part) > tr.Last {
				t.Fatalf("%s: a record of partition %d", tr.Bands.Name, b.Part)
			}
			r.bands = append(r.bands, records.BandRecord{Band: b.Band, Key: b.Key, Doc: b.Doc, FPHi: b.FP})
		}
	}
	r.verifies = results[job.VerifyResult](t, rec.out["verify"])
	r.stats = j.Clusters
	for _, mr := range r.maps {
		r.docs = append(r.docs, readAll[records.DocRecord](t, st, mr.DocFile)...)
	}
	for _, rr := range r.reduces {
		r.cands = append(r.cands, readAll[records.Candidate](t, st, rr.File))
	}
	for _, vr := range r.verifies {
		if vr.File != nil {
			rows, err := worktest.ReadPairs(ctx, st, vr.File)
			if err != nil {
				t.Fatal(err)
			}
			r.verified = append(r.verified, rows...)
		}
		if vr.MembersFile != nil {
			rows, err := worktest.ReadMembers(ctx, st, vr.MembersFile)
			if err != nil {
				t.Fatal(err)
			}
			r.members = append(r.members, rows...)
		}
	}
	names, err := st.List(ctx, job.PairsDir)
	if err != nil {
		t.Fatal(err)
	}
	r.pairFile = len(names)
	for _, name := range names {
		r.pairs = append(r.pairs, readAll[records.Pair](t, st, fileinfo.Info{Name: name})...)
	}
	r.exact = readAll[records.ExactRecord](t, st, fileinfo.Info{Name: job.ExactFile})
	r.clusters = readAll[records.ClusterRecord](t, st, fileinfo.Info{Name: job.ClustersFile})
	r.dups = readAll[records.Duplicate](t, st, fileinfo.Info{Name: job.DuplicatesFile})
	return r
}

// recorder is an Executor that keeps what each stage's tasks returned.
type recorder struct {
	ex  stage.Executor
	out map[string]*stage.Outcome
}

func (r recorder) Execute(ctx context.Context, s stage.Stage, indices []int) (*stage.Outcome, error) {
	out, err := r.ex.Execute(ctx, s, indices)
	r.out[s.Name] = out
	return out, err
}

func (r recorder) Clear(ctx context.Context, s stage.Stage) error { return r.ex.Clear(ctx, s) }

// results decodes an outcome's results in task order.
func results[T any](t *testing.T, out *stage.Outcome) []T {
	t.Helper()
	if out == nil {
		return nil
	}
	list, err := stage.DecodeResults[T](context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// anyPath lets a task read any path.
type anyPath struct{}

func (anyPath) Check(string) error { return nil }

// readAll reads a whole file, checked against info when it carries a
// checksum (the files the stages describe in their results).
func readAll[T any](t *testing.T, st storage.Opener, info fileinfo.Info) []T {
	t.Helper()
	want := &info
	if info.Checksum == 0 {
		want = nil
	}
	rows, err := pqfile.Read[T](context.Background(), st, info.Name, want)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestStageCases(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "cases", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no cases in testdata/cases")
	}
	for _, file := range files {
		c, err := parseCase(file)
		if err != nil {
			t.Fatal(err)
		}
		// Both ways of reading signatures in verify give the same result.
		for _, gather := range []job.Gather{job.GatherOff, job.GatherOn, job.GatherSets} {
			c.params.Gather = gather
			t.Run(c.name+"/gather="+gather.String(), func(t *testing.T) {
				testCase(t, c, file)
			})
		}
	}
}

// testCase runs a case and checks it against its reference and golden
// file.
func testCase(t *testing.T, c *stageCase, file string) {
	r := c.run(t)
	ref := newReference(c)
	checkCase(t, c, ref, r)
	got := render(c, ref, r)
	golden := strings.TrimSuffix(file, ".txt") + ".out"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/stage -update)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (-want +got):\n%s", golden, lineDiff(string(want), got))
	}
}

// lineDiff lists the lines of want missing from got and those of got
// missing from want, in order: enough to read a golden mismatch.
func lineDiff(want, got string) string {
	count := func(s string) map[string]int {
		m := map[string]int{}
		for _, l := range strings.Split(s, "\n") {
			m[l]++
		}
		return m
	}
	wm, gm := count(want), count(got)
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if gm[l] > 0 {
			gm[l]--
			continue
		}
		fmt.Fprintf(&b, "-%s\n", l)
	}
	for _, l := range strings.Split(got, "\n") {
		if wm[l] > 0 {
			wm[l]--
			continue
		}
		fmt.Fprintf(&b, "+%s\n", l)
	}
	return b.String()
}

// render describes what the stages produced as stable text: documents by
// id, similarities to 4 decimals, and no band keys or signature values.
func render(c *stageCase, ref *reference, r *caseRun) string {
	var b strings.Builder
	p := c.params
	id := func(doc int64) string { return ref.id[doc] }
	ids := func(docs []int64) string {
		s := make([]string, len(docs))
		for i, d := range docs {
			s[i] = id(d)
		}
		return strings.Join(s, " ")
	}
	pair := func(pr records.Pair) string {
		s := fmt.Sprintf("%s %s %.4f %s", id(pr.A), id(pr.B), pr.Similarity, pr.Method)
		if pr.Hamming != nil {
			s += fmt.Sprintf(" d=%d", *pr.Hamming)
		}
		return s + fmt.Sprintf(" bands=%d first=%d", pr.BandsCollided, pr.FirstBand)
	}
	fmt.Fprintf(&b, "params: method=%s threshold=%g bands=%d rows=%d verify=%s keep=%s partitions=%d max-bucket=%d max-cluster-pairs=%d\n",
		p.Method, p.Threshold, p.Bands, p.Rows, p.Verify, p.Keep, p.Partitions, p.MaxBucket, p.MaxClusterPairs)

	b.WriteString("\nreference (document model: tokens, shingles; Jaccard of the pairs that share a shingle")
	if p.Method == "simhash" {
		b.WriteString(", SimHash distance")
	}
	b.WriteString(")\n")
	for i, d := range ref.ords {
		fmt.Fprintf(&b, "  %s: %d tokens, %d shingles\n", id(d), ref.tokens[i], len(ref.sets[i]))
	}
	for i := range ref.ords {
		for j := i + 1; j < len(ref.ords); j++ {
			a, d := ref.ords[i], ref.ords[j]
			jac := ref.jaccard(a, d)
			switch {
			case p.Method == "simhash" && jac > 0:
				fmt.Fprintf(&b, "  %s %s %.4f d=%d\n", id(a), id(d), jac, ref.distance(a, d))
			case jac > 0:
				fmt.Fprintf(&b, "  %s %s %.4f\n", id(a), id(d), jac)
			}
		}
	}

	b.WriteString("\nplan\n")
	for _, ch := range r.plan.Chunks {
		var docs []int64
		for _, d := range r.docs {
			if job.ChunkOf(d.Doc) == ch.Index {
				docs = append(docs, d.Doc)
			}
		}
		fmt.Fprintf(&b, "  chunk %d: %s\n", ch.Index, ids(docs))
	}

	b.WriteString("\nmap\n")
	for _, m := range r.maps {
		fmt.Fprintf(&b, "  chunk %d: docs=%d empty=%d rejected=%d shingles=%d band_records=%d\n",
			m.Chunk, m.Docs, m.Empty, m.Rejected, m.Shingles, m.BandRecords)
	}

	b.WriteString("\nreduce\n")
	for i, rr := range r.reduces {
		fmt.Fprintf(&b, "  partition %d: records=%d candidates=%d exact_claims=%d bounded_buckets=%d pairs_not_compared=%d\n",
			rr.Part, rr.Records, rr.Candidates, rr.ExactClaims, rr.BoundedBuckets, rr.PairsNotCompared)
		for _, e := range r.cands[i] {
			fmt.Fprintf(&b, "    candidate %s %s\n", id(e.A), id(e.B))
		}
		// The largest bounded buckets, alike ones counted together.
		var lines []string
		for _, bb := range rr.Bounded {
			lines = append(lines, fmt.Sprintf("docs=%d representatives=%d hubs=%d first=%s", bb.Docs, bb.Representatives, bb.Hubs, id(bb.FirstDoc)))
		}
		for i := 0; i < len(lines); {
			j := i
			for j < len(lines) && lines[j] == lines[i] {
				j++
			}
			fmt.Fprintf(&b, "    %d largest bounded buckets: %s\n", j-i, lines[i])
			i = j
		}
	}

	b.WriteString("\nverify\n")
	for _, v := range r.verifies {
		fmt.Fprintf(&b, "  chunk %d: checked=%d prefiltered=%d exact_checked=%d verified=%d exact_members=%d\n",
			v.Chunk, v.Checked, v.Prefiltered, v.Exact, v.Verified, v.ExactMembers)
		for _, pr := range r.verified {
			if job.ChunkOf(pr.A) == v.Chunk {
				fmt.Fprintf(&b, "    verified %s\n", pair(pr))
			}
		}
		for _, m := range r.members {
			if job.ChunkOf(m.Group) == v.Chunk {
				fmt.Fprintf(&b, "    member %s of %s\n", id(m.Doc), id(m.Group))
			}
		}
	}

	s := r.stats
	fmt.Fprintf(&b, "\npairs: %d listed, %d complete, %d not listed\n", len(r.pairs), s.CompletePairs, s.PairsNotListed)
	for _, pr := range sortedPairs(r.pairs) {
		fmt.Fprintf(&b, "  %s\n", pair(pr))
	}

	fmt.Fprintf(&b, "\nexact groups: %d, %d duplicates\n", s.ExactGroups, s.ExactDuplicates)
	for _, g := range groupsOf(r.exact) {
		fmt.Fprintf(&b, "  %s: %s\n", id(g[0]), ids(g))
	}

	fmt.Fprintf(&b, "\nclusters: %d, %d documents, %d duplicates, largest %d\n", s.Clusters, s.Clustered, s.Duplicates, s.Largest)
	for _, cl := range clustersOf(r.clusters) {
		var kept int64
		var drop []int64
		for _, row := range cl {
			if row.Keep {
				kept = row.Doc
			} else {
				drop = append(drop, row.Doc)
			}
		}
		fmt.Fprintf(&b, "  %s (%d): keep %s, drop %s\n", id(cl[0].Cluster), len(cl), id(kept), ids(drop))
	}
	for _, bc := range s.Bounded {
		fmt.Fprintf(&b, "  bounded cluster %s: size=%d kept=%s pairs=%d listed=%d not_listed=%d\n",
			id(bc.Cluster), bc.Size, bc.KeptID, bc.Pairs, bc.Listed, bc.NotListed)
	}
	return b.String()
}

func sortedPairs(pairs []records.Pair) []records.Pair {
	return slices.SortedFunc(slices.Values(pairs), func(x, y records.Pair) int {
		return workfile.CompareEdge(records.Candidate{A: x.A, B: x.B}, records.Candidate{A: y.A, B: y.B})
	})
}

// groupsOf returns exact.parquet's groups, each sorted, representative first.
func groupsOf(rows []records.ExactRecord) [][]int64 {
	byGroup := map[int64][]int64{}
	for _, e := range rows {
		byGroup[e.Group] = append(byGroup[e.Group], e.Doc)
	}
	var out [][]int64
	for _, g := range slices.Sorted(maps.Keys(byGroup)) {
		out = append(out, slices.Sorted(slices.Values(byGroup[g])))
	}
	return out
}

// clustersOf returns clusters.parquet's rows by cluster, in cluster order.
func clustersOf(rows []records.ClusterRecord) [][]records.ClusterRecord {
	by := map[int64][]records.ClusterRecord{}
	for _, c := range rows {
		by[c.Cluster] = append(by[c.Cluster], c)
	}
	var out [][]records.ClusterRecord
	for _, id := range slices.Sorted(maps.Keys(by)) {
		out = append(out, by[id])
	}
	return out
}
