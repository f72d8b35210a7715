package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/s3test"
	"github.com/neardup/neardup/internal/storage"
)

// seriesPair is what TestSeries reads of a pairs/ row.
type seriesPair struct {
	AID        string  `parquet:"a_id"`
	BID        string  `parquet:"b_id"`
	Similarity float64 `parquet:"similarity"`
	AJob       *string `parquet:"a_job,optional"`
	APublished *bool   `parquet:"a_published,optional"`
}

// seriesCluster and seriesDuplicate are what TestSeries reads of
// clusters.parquet and duplicates.parquet.
type seriesCluster struct {
	ID   string  `parquet:"id"`
	Keep bool    `parquet:"keep"`
	Job  *string `parquet:"job,optional"`
}

type seriesDuplicate struct {
	ID      string  `parquet:"id"`
	KeptID  string  `parquet:"kept_id"`
	KeptJob *string `parquet:"kept_job,optional"`
}

// TestSeries runs a four-week series with --series (a generated corpus
// cut into four weekly inputs, with near-duplicates across weeks) and one
// job over all four inputs, and checks each week against the whole job:
// week k lists exactly the whole job's pairs between its documents and
// an earlier week's, each named by that week's member name in a_job, with
// the same similarity (and exactly the whole job's pairs among its own
// documents, a_job null), and its manifest's pairs_against counts them.
// Published means published: no week keeps, or names as kept, a
// document an earlier week dropped, and pairs/ marks exactly the pairs
// against such documents (a_published false). A member interrupted
// before week 3 is skipped with a warning naming it; after the first
// three weeks are compacted into a member of the series, week 4 run
// again is matched against the compacted member alone and lists the same
// pairs, each still named by its document's week (not the compacted
// member), and keeps the same; `query` against the compacted member
// names each match's week; `series list` shows it all.
func TestSeries(t *testing.T) {
	dir := t.TempDir()
	corp := filepath.Join(dir, "corpus")
	run(t, "gencorpus", "-n", "1600", "-seed", "23", "-files", "4", "-q", "-out", corp)
	inputs, _ := filepath.Glob(filepath.Join(corp, "part-*.jsonl"))
	if len(inputs) != 4 {
		t.Fatalf("gencorpus wrote %q, want 4 files", inputs)
	}
	weeks := []string{"2026-W47", "2026-W48", "2026-W49", "2026-W50"}
	weekOf := map[string]int{} // document id -> week
	for w, f := range inputs {
		for _, id := range jsonlIDs(t, f) {
			weekOf[id] = w
		}
	}
	ser := filepath.Join(dir, "crawl-dedup")
	member := func(w int, extra ...string) string {
		t.Helper()
		args := append([]string{"--series", ser, "--name", weeks[w], "--quiet", "--workers", "2"}, extra...)
		return run(t, "coordinator", append(args, inputs[w])...)
	}
	logs := make([]string, 4)
	for w := range 2 {
		logs[w] = member(w)
	}
	interrupted(t, ser, "2026-W48-stopped", inputs[2])
	for w := 2; w < 4; w++ {
		logs[w] = member(w)
	}
	if !strings.Contains(logs[2], `msg="series member skipped"`) || !strings.Contains(logs[2], "member=2026-W48-stopped state=incomplete") {
		t.Errorf("week 3 did not warn of the interrupted member:\n%s", logs[2])
	}
	whole := filepath.Join(dir, "whole")
	run(t, "coordinator", append([]string{"--out", whole, "--quiet", "--workers", "2"}, inputs...)...)

	// What the whole job says each week must list: its pairs with an
	// earlier week's document (named by that week) and its own.
	want := make([][]string, 4)
	for _, p := range readSeriesPairs(t, whole) {
		if p.AJob != nil {
			t.Fatalf("the whole job's pair %s %s names an earlier job", p.AID, p.BID)
		}
		wa, wb := weekOf[p.AID], weekOf[p.BID]
		if wa > wb {
			t.Fatalf("the whole job's pair %s (week %d) %s (week %d): a is not the earlier document", p.AID, wa, p.BID, wb)
		}
		job := ""
		if wa < wb {
			job = weeks[wa]
		}
		want[wb] = append(want[wb], pairKey(p.AID, p.BID, p.Similarity, job))
	}
	check := func(w int, rename func(string) string) {
		t.Helper()
		out := filepath.Join(ser, weeks[w])
		var got []string
		against := 0
		for _, p := range readSeriesPairs(t, out) {
			job := ""
			if p.AJob != nil {
				job, against = *p.AJob, against+1
			}
			got = append(got, pairKey(p.AID, p.BID, p.Similarity, job))
		}
		exp := slices.Clone(want[w])
		for i := range exp {
			exp[i] = rename(exp[i])
		}
		slices.Sort(got)
		slices.Sort(exp)
		if !slices.Equal(got, exp) {
			t.Errorf("%s lists %d pairs, the whole job %d for it:\n%s", weeks[w], len(got), len(exp), diffLines(got, exp))
		}
		if c := readCounts(t, out); c["pairs_against"] != int64(against) || c["pairs"] != int64(len(got)) {
			t.Errorf("%s: manifest pairs %d, pairs_against %d; pairs/ has %d rows, %d naming an earlier week",
				weeks[w], c["pairs"], c["pairs_against"], len(got), against)
		}
		if w > 0 && against == 0 {
			t.Errorf("%s: no pair with an earlier week: the corpus tests nothing", weeks[w])
		}
		checkPublished(t, ser, weeks[:w+1])
	}
	same := func(s string) string { return s }
	for w := range 4 {
		check(w, same)
	}
	kept4 := clusterKeys(readSeriesRows[seriesCluster](t, filepath.Join(ser, weeks[3]), "clusters.parquet"))

	// Weeks 1-3 compacted into a member; week 4 again, against it alone.
	compact := "2026-W49-compact"
	run(t, "coordinator", "index", "compact", "--out", filepath.Join(ser, compact), "--job", compact,
		filepath.Join(ser, weeks[0]), filepath.Join(ser, weeks[1]), filepath.Join(ser, weeks[2]))
	log := member(3, "--overwrite")
	if strings.Contains(log, "not given here") || strings.Count(log, "matched through a compacted member") != 3 ||
		!strings.Contains(log, "against=["+compact+"]") {
		t.Errorf("week 4 against the compacted member:\n%s", log)
	}
	check(3, same)
	if again := clusterKeys(readSeriesRows[seriesCluster](t, filepath.Join(ser, weeks[3]), "clusters.parquet")); !slices.Equal(again, kept4) {
		t.Errorf("week 4 against the compacted member: clusters.parquet differs from week 4 against the weeks:\n%s", diffLines(again, kept4))
	}
	queryCompacted(t, filepath.Join(ser, compact), inputs[:3], weeks[:3])

	list := run(t, "coordinator", "series", "list", "--json", ser)
	var states []string
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		var m struct{ Name, State, Next string }
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("series list: %v: %q", err, line)
		}
		states = append(states, m.Name+" "+m.State+" "+strings.SplitN(m.Next, ":", 2)[0])
	}
	wantStates := []string{
		"2026-W47 complete held by the compacted member 2026-W49-compact",
		"2026-W48 complete held by the compacted member 2026-W49-compact",
		"2026-W48-stopped incomplete skipped",
		"2026-W49 complete held by the compacted member 2026-W49-compact",
		"2026-W49-compact compacted matched",
		"2026-W50 complete matched",
	}
	if !slices.Equal(states, wantStates) {
		t.Errorf("series list:\n%s\nwant:\n%s", strings.Join(states, "\n"), strings.Join(wantStates, "\n"))
	}
}

// TestSeriesObjectStorage runs a two-member series in an S3 bucket (a
// test server on loopback) and the same locally: the second member finds
// the first by listing the bucket, and lists the same pairs, named alike.
func TestSeriesObjectStorage(t *testing.T) {
	dir := t.TempDir()
	corp := filepath.Join(dir, "corpus")
	run(t, "gencorpus", "-n", "600", "-seed", "5", "-files", "2", "-q", "-out", corp)
	inputs, _ := filepath.Glob(filepath.Join(corp, "part-*.jsonl"))
	s3test.Start(t, "crawl")
	local, bucket := filepath.Join(dir, "series"), "s3://crawl/series"
	for _, ser := range []string{local, bucket} {
		for w, name := range []string{"2026-11-18", "2026-11-25"} {
			cmd := command("coordinator", "--series", ser, "--name", name, "--quiet", "--workers", "2", inputs[w])
			cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s/%s: %v\n%s", ser, name, err, out)
			}
		}
	}
	ctx := context.Background()
	st, err := storage.Open(ctx, bucket+"/2026-11-25")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	names, err := st.List(ctx, "pairs")
	if err != nil || len(names) == 0 {
		t.Fatalf("no pairs/ in the bucket: %v", err)
	}
	var got, want []string
	for _, name := range names {
		f, err := st.Open(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := parquet.Read[seriesPair](f, f.Size())
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range rows {
			got = append(got, pairKey(p.AID, p.BID, p.Similarity, deref(p.AJob)))
		}
	}
	against := 0
	for _, p := range readSeriesPairs(t, filepath.Join(local, "2026-11-25")) {
		want = append(want, pairKey(p.AID, p.BID, p.Similarity, deref(p.AJob)))
		if p.AJob != nil {
			against++
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if against == 0 || !slices.Equal(got, want) {
		t.Errorf("the member in the bucket lists %d pairs, the local one %d (%d against the first member):\n%s", len(got), len(want), against, diffLines(got, want))
	}
	list := run(t, "coordinator", "series", "list", bucket)
	if !strings.Contains(list, "2026-11-18  complete") || !strings.Contains(list, "2026-11-25  complete") {
		t.Errorf("series list %s:\n%s", bucket, list)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// checkPublished checks the last of the weeks of the series ser against
// the earlier ones' duplicates: it keeps none of the documents they
// dropped, names none as a kept document, and marks a pair as against
// an unpublished document (a_published false) exactly when its earlier
// document is one; an earlier document's week is named in job.
func checkPublished(t *testing.T, ser string, weeks []string) {
	t.Helper()
	last := weeks[len(weeks)-1]
	dropped := map[string]string{} // id -> week
	for _, w := range weeks[:len(weeks)-1] {
		for _, d := range readSeriesRows[seriesDuplicate](t, filepath.Join(ser, w), "duplicates.parquet") {
			dropped[d.ID] = w
		}
	}
	out := filepath.Join(ser, last)
	var earlier, unpublished, marked int
	for _, c := range readSeriesRows[seriesCluster](t, out, "clusters.parquet") {
		if c.Job != nil {
			earlier++
		}
		if w, ok := dropped[c.ID]; ok {
			unpublished++
			if c.Keep || deref(c.Job) != w {
				t.Errorf("%s: %s, dropped by %s, has keep %v, job %s", last, c.ID, w, c.Keep, deref(c.Job))
			}
		}
	}
	for _, d := range readSeriesRows[seriesDuplicate](t, out, "duplicates.parquet") {
		if w, ok := dropped[d.KeptID]; ok {
			t.Errorf("%s: %s is dropped for %s (%s), which %s dropped", last, d.ID, d.KeptID, deref(d.KeptJob), w)
		}
	}
	for _, p := range readSeriesPairs(t, out) {
		_, wasDropped := dropped[p.AID]
		switch {
		case p.AJob == nil && p.APublished != nil:
			t.Errorf("%s: pair %s %s of its own documents has a_published %v", last, p.AID, p.BID, *p.APublished)
		case p.AJob != nil && (p.APublished == nil || *p.APublished == wasDropped):
			t.Errorf("%s: pair %s %s: a_published %v, %s dropped by its week: %v", last, p.AID, p.BID, p.APublished, p.AID, wasDropped)
		case p.AJob != nil && wasDropped:
			marked++
		}
	}
	if len(weeks) > 1 && (earlier == 0 || unpublished == 0 || marked == 0) {
		t.Errorf("%s: %d earlier documents in its clusters, %d of them dropped by their week, %d pairs against them: the corpus tests nothing",
			last, earlier, unpublished, marked)
	}
}

// queryCompacted queries the documents of inputs[i] (the first lines of
// each) against the compacted index at index, and checks that each finds
// itself, named by its own week, weeks[i].
func queryCompacted(t *testing.T, index string, inputs, weeks []string) {
	t.Helper()
	var lines []string
	want := map[string]string{}
	for i, in := range inputs {
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.SplitN(string(data), "\n", 4)[:3] {
			var d struct{ ID string }
			if err := json.Unmarshal([]byte(l), &d); err != nil {
				t.Fatal(err)
			}
			lines, want[d.ID] = append(lines, l), weeks[i]
		}
	}
	q := filepath.Join(t.TempDir(), "q.jsonl")
	if err := os.WriteFile(q, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := command("coordinator", "query", "--index", index, q)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("query: %v\n%s", err, stderr.String())
	}
	out := string(stdout)
	found := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r struct {
			ID      string
			Matches []struct{ ID, Job string }
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("query: %v: %q", err, l)
		}
		for _, m := range r.Matches {
			if m.ID == r.ID {
				found++
				if m.Job != want[r.ID] {
					t.Errorf("query: %s found in the compacted index as of job %s, want %s", r.ID, m.Job, want[r.ID])
				}
			}
		}
	}
	if found != len(want) {
		t.Errorf("query: %d of %d documents found themselves in the compacted index:\n%s", found, len(want), out)
	}
}

// clusterKeys describes rows of clusters.parquet as sorted lines.
func clusterKeys(rows []seriesCluster) []string {
	var out []string
	for _, c := range rows {
		out = append(out, fmt.Sprintf("%s keep=%v job=%s", c.ID, c.Keep, deref(c.Job)))
	}
	slices.Sort(out)
	return out
}

// readSeriesRows reads the rows of the file name of out.
func readSeriesRows[T any](t *testing.T, out, name string) []T {
	t.Helper()
	rows, err := parquet.ReadFile[T](filepath.Join(out, name))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// interrupted starts a member that waits for outside workers, and
// stops it (SIGTERM) once its job is planned: an unfinished member.
func interrupted(t *testing.T, ser, name, input string) {
	t.Helper()
	cmd := command("coordinator", "--series", ser, "--name", name, "--quiet", "--workers", "0", "--listen", "127.0.0.1:0", input)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var log strings.Builder
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), `msg="job planned"`) {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, stderr)
	if err := cmd.Wait(); err == nil {
		t.Fatalf("the member waiting for workers finished:\n%s", log.String())
	}
}

func pairKey(a, b string, sim float64, job string) string {
	return a + " " + b + " " + strconv.FormatFloat(sim, 'g', -1, 64) + "\t" + job
}

// diffLines names the lines of got and want that the other lacks (both
// sorted), a few of each.
func diffLines(got, want []string) string {
	var b strings.Builder
	extra, missing := 0, 0
	for _, g := range got {
		if _, ok := slices.BinarySearch(want, g); !ok && extra < 5 {
			fmt.Fprintf(&b, "  not in the whole job: %s\n", g)
			extra++
		}
	}
	for _, w := range want {
		if _, ok := slices.BinarySearch(got, w); !ok && missing < 5 {
			fmt.Fprintf(&b, "  missing: %s\n", w)
			missing++
		}
	}
	return b.String()
}

// readSeriesPairs reads the rows of every file of out's pairs/.
func readSeriesPairs(t *testing.T, out string) []seriesPair {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(out, "pairs", "*.parquet"))
	if len(files) == 0 {
		t.Fatalf("%s: no pairs/ files", out)
	}
	var all []seriesPair
	for _, f := range files {
		rows, err := parquet.ReadFile[seriesPair](f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, rows...)
	}
	return all
}

// jsonlIDs returns the id field of every line of a JSONL file.
func jsonlIDs(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var d struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		ids = append(ids, d.ID)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}
