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
}

// TestSeries runs a four-week series with --series (a generated corpus
// cut into four weekly inputs, with near-duplicates across weeks) and one
// job over all four inputs, and checks each week against the whole job:
// week k lists exactly the whole job's pairs between its documents and
// an earlier week's, each named by that week's member name in a_job, with
// the same similarity (and exactly the whole job's pairs among its own
// documents, a_job null), and its manifest's pairs_against counts them.
// A member interrupted before week 3 is skipped with a warning naming
// it; after the first three weeks are compacted into a member of the
// series, week 4 run again is matched against the compacted member alone
// and lists the same pairs, named by it; `series list` shows it all.
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
	}
	same := func(s string) string { return s }
	for w := range 4 {
		check(w, same)
	}

	// Weeks 1-3 compacted into a member; week 4 again, against it alone.
	compact := "2026-W49-compact"
	run(t, "coordinator", "index", "compact", "--out", filepath.Join(ser, compact), "--job", compact,
		filepath.Join(ser, weeks[0]), filepath.Join(ser, weeks[1]), filepath.Join(ser, weeks[2]))
	log := member(3, "--overwrite")
	if strings.Contains(log, "not given here") || strings.Count(log, "matched through a compacted member") != 3 ||
		!strings.Contains(log, "against=["+compact+"]") {
		t.Errorf("week 4 against the compacted member:\n%s", log)
	}
	check(3, func(s string) string {
		if pair, job, _ := strings.Cut(s, "\t"); slices.Contains(weeks[:3], job) {
			return pair + "\t" + compact
		}
		return s
	})

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
