package series

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/s3test"
	"github.com/neardup/neardup/internal/storage"
)

// member makes a member in state s holding chunks first to end-1.
func member(name string, s State, first, end int) Member {
	m := Member{Name: name, State: s, FirstChunk: first, End: end}
	for c := first; c < end; c++ {
		m.Chunks = append(m.Chunks, c)
	}
	return m
}

// TestPick checks which members a new one is matched against: the
// usable ones before it by name, a compacted member instead of those it
// holds, never itself or a later one, and every other earlier member
// skipped with its reason.
func TestPick(t *testing.T) {
	w1, w2, w3 := member("2026-W01", Complete, 0, 2), member("2026-W02", Complete, 2, 3), member("2026-W03", Complete, 3, 5)
	c12 := member("2026-W02-compact", Compacted, 0, 3)
	c123 := member("2026-W03-compact", Compacted, 0, 5)
	tests := []struct {
		name    string
		members []Member
		self    string
		earlier []string
		skipped []string // "name: reason prefix"
		held    []string // "name: reason"
		later   []string
		err     string
	}{
		{name: "first member", self: "2026-W01"},
		{name: "all complete, by name", members: []Member{w1, w2, w3}, self: "2026-W04",
			earlier: []string{"2026-W01", "2026-W02", "2026-W03"}},
		{name: "not itself nor later ones", members: []Member{w1, w2, w3}, self: "2026-W02",
			earlier: []string{"2026-W01"}, later: []string{"2026-W03"}},
		{name: "after every member: names beyond ASCII too", members: []Member{w1, member("é-2026-W02", Complete, 2, 3), member("~2026-W03", Complete, 3, 5)}, self: AfterEvery,
			earlier: []string{"2026-W01", "~2026-W03", "é-2026-W02"}},
		{name: "incomplete, no index and strangers skipped",
			members: []Member{w1, {Name: "2026-W02", State: Incomplete}, {Name: "2026-W03", State: NoIndex}, {Name: "2026-0-notes", State: NotJob}},
			self:    "2026-W04", earlier: []string{"2026-W01"},
			skipped: []string{"2026-0-notes: neither", "2026-W02: incomplete", "2026-W03: finished without an index"}},
		{name: "partial is used", members: []Member{w1, member("2026-W02", Partial, 2, 3)}, self: "2026-W03",
			earlier: []string{"2026-W01", "2026-W02"}},
		{name: "compacted replaces its members", members: []Member{w1, w2, c12, w3}, self: "2026-W04",
			earlier: []string{"2026-W02-compact", "2026-W03"},
			held:    []string{"2026-W01: held by the compacted member 2026-W02-compact", "2026-W02: held by the compacted member 2026-W02-compact"}},
		{name: "the larger compacted member wins", members: []Member{w1, w2, c12, w3, c123}, self: "2026-W04",
			earlier: []string{"2026-W03-compact"},
			held: []string{"2026-W01: held by the compacted member 2026-W03-compact", "2026-W02: held by the compacted member 2026-W03-compact",
				"2026-W02-compact: held by the compacted member 2026-W03-compact", "2026-W03: held by the compacted member 2026-W03-compact"}},
		{name: "a compacted member after self is not used", members: []Member{w1, w2, c12}, self: "2026-W02-a",
			earlier: []string{"2026-W01", "2026-W02"}, later: []string{"2026-W02-compact"}},
		{name: "same chunks: the later compacted name", members: []Member{w1, member("2026-W01-c", Compacted, 0, 2), member("2026-W01-d", Compacted, 0, 2)},
			self: "2026-W02", earlier: []string{"2026-W01-d"},
			held: []string{"2026-W01: held by the compacted member 2026-W01-d", "2026-W01-c: held by the compacted member 2026-W01-d"}},
		{name: "a job without documents is skipped", members: []Member{w1, member("2026-W02", Complete, 2, 2), c12}, self: "2026-W03",
			earlier: []string{"2026-W02-compact"}, skipped: []string{"2026-W02: no documents"},
			held: []string{"2026-W01: held by the compacted member 2026-W02-compact"}},
		{name: "a compacted member holding self's earlier run is not used for its rerun",
			members: []Member{w1, w2, w3, member("2026-W01-W03", Compacted, 0, 5)}, self: "2026-W02",
			earlier: []string{"2026-W01"}, later: []string{"2026-W03"},
			skipped: []string{"2026-W01-W03: it holds chunk 2 of 2026-W02's earlier run"}},
		{name: "a compacted member recording a job not before self is not used",
			members: []Member{w1, holding(member("2026-W01-W03", Compacted, 0, 5), "2026-W01", "2026-W02", "2026-W03")}, self: "2026-W02",
			earlier: []string{"2026-W01"}, skipped: []string{"2026-W01-W03: it holds the job 2026-W02"}},
		{name: "overlapping members refused", members: []Member{w1, member("2026-W02", Complete, 2, 4), member("2026-W03", Complete, 3, 5)},
			self: "2026-W04", err: "members 2026-W02 (chunks 2 to 3) and 2026-W03 (chunks 3 to 4) number their documents alike"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Pick(tt.members, tt.self)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := names(c.Earlier); !reflect.DeepEqual(got, tt.earlier) {
				t.Errorf("earlier = %q, want %q", got, tt.earlier)
			}
			if got := names(c.Later); !reflect.DeepEqual(got, tt.later) {
				t.Errorf("later = %q, want %q", got, tt.later)
			}
			if got := reasons(c.Skipped); !prefixes(got, tt.skipped) {
				t.Errorf("skipped = %q, want %q...", got, tt.skipped)
			}
			if got := reasons(c.Held); !reflect.DeepEqual(got, tt.held) {
				t.Errorf("held = %q, want %q", got, tt.held)
			}
		})
	}
}

func reasons(sk []Skipped) []string {
	var out []string
	for _, s := range sk {
		out = append(out, s.Member.Name+": "+s.Reason)
	}
	return out
}

// prefixes reports whether each of got starts with the same one of want.
func prefixes(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !strings.HasPrefix(got[i], want[i]) {
			return false
		}
	}
	return true
}

func names(ms []Member) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}

// TestScan writes members of every state into a series, locally and in
// an S3 bucket, and checks what Scan reads of each.
func TestScan(t *testing.T) {
	t.Run("local", func(t *testing.T) {
		d, err := storage.Open(context.Background(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		// A symbolic link to a member is not followed, and said.
		if err := os.Symlink(t.TempDir(), d.Path("2026-W00")); err != nil {
			t.Fatal(err)
		}
		ignored := testScan(t, d, func(name string) string { return d.Root() + "/" + name })
		if want := "2026-W00 a symbolic link"; len(ignored) != 1 || !strings.HasPrefix(ignored[0], want) {
			t.Errorf("ignored %q, want %q alone", ignored, want)
		}
	})
	t.Run("s3", func(t *testing.T) {
		s3test.Start(t, "bucket")
		// The bucket's options in the URL stay at the end of each
		// member's location.
		d, err := storage.Open(context.Background(), "s3://bucket/crawl-dedup?region=us-east-1")
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		_ = testScan(t, d, func(name string) string { return "s3://bucket/crawl-dedup/" + name + "?region=us-east-1" })
	})
}

// testScan writes the members into d and checks what Scan reads, each
// member's location being out(its name), and that it reports the entries
// it ignores; it returns those it did not expect ("name reason").
func testScan(t *testing.T, d *storage.Dir, out func(name string) string) []string {
	ctx := context.Background()
	put := func(name string, v any) {
		t.Helper()
		var data []byte
		if v != nil {
			var err error
			if data, err = json.Marshal(v); err != nil {
				t.Fatal(err)
			}
		}
		if err := storage.WriteFile(ctx, d, name, data); err != nil {
			t.Fatal(err)
		}
	}
	ix := func(name string, first, end int, holds ...string) *index.Index {
		x := &index.Index{Version: index.Version, Job: name, FirstChunk: first}
		for c := first; c < end; c++ {
			x.Chunks = append(x.Chunks, index.Chunk{Chunk: c, Docs: 10})
			x.Docs += 10
		}
		for _, h := range holds {
			x.Compacted = append(x.Compacted, job.Against{Job: h})
		}
		return x
	}
	man := func(name, status string, pairsAgainst int64) map[string]any {
		return map[string]any{"status": status, "job": name, "counts": map[string]int64{"pairs": 7, "pairs_against": pairsAgainst}}
	}
	// complete
	put("2026-W01/_SUCCESS", nil)
	put("2026-W01/manifest.json", man("2026-W01", "complete", 0))
	put("2026-W01/index/index.json", ix("2026-W01", 0, 2))
	// partial, accepted
	put("2026-W02/_PARTIAL", nil)
	put("2026-W02/manifest.json", man("2026-W02", "partial", 3))
	put("2026-W02/index/index.json", ix("2026-W02", 2, 3))
	// compacted, recording its sources, and one of an earlier build
	put("2026-W02-compact/index/index.json", ix("c1", 0, 3, "2026-W01", "2026-W02"))
	put("old-compact/index/index.json", ix("c0", 0, 2))
	// unfinished: planned, and written up to the index
	put("2026-W03/_work/job.json", map[string]any{"job": "2026-W03"})
	put("2026-W04/_work/job.json", map[string]any{"job": "2026-W04"})
	put("2026-W04/index/index.json", ix("2026-W04", 3, 4))
	// failed before planning: only the lock
	put("2026-W04b/.neardup.lock", nil)
	// failed for good: a partial manifest, no marker
	put("2026-W05/manifest.json", man("2026-W05", "partial", 0))
	// finished without an index
	put("2026-W06/_SUCCESS", nil)
	put("2026-W06/manifest.json", man("2026-W06", "complete", 0))
	// not members, or not jobs
	put("_tmp/x", nil)
	put(".hidden/x", nil)
	put("notes/readme.txt", nil)
	put("top.txt", nil)
	// the series' report: neither a member nor an entry to warn of
	put(ReportDir+"/report.html", []byte("<html></html>"))

	got, ignored, err := Scan(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	var others []string
	wantIgnored := map[string]string{".hidden": "starting with _ or .", "_tmp": "starting with _ or .", "top.txt": "a file, not a directory"}
	for _, ig := range ignored {
		if w, ok := wantIgnored[ig.Name]; ok {
			if !strings.Contains(ig.Reason, w) {
				t.Errorf("%s ignored because %q, want %q", ig.Name, ig.Reason, w)
			}
			delete(wantIgnored, ig.Name)
			continue
		}
		others = append(others, ig.Name+" "+ig.Reason)
	}
	for name := range wantIgnored {
		t.Errorf("%s ignored silently", name)
	}
	var lines []string
	for _, m := range got {
		if m.Out != out(m.Name) {
			t.Errorf("%s: out %s, want %s", m.Name, m.Out, out(m.Name))
		}
		lines = append(lines, fmt.Sprintf("%s %s job=%s docs=%d chunks=%v pairs_against=%d holds=%v", m.Name, m.State, m.Job, m.Docs, m.Chunks, m.PairsAgainst, m.Holds))
	}
	want := []string{
		"2026-W01 complete job=2026-W01 docs=20 chunks=[0 1] pairs_against=0 holds=[]",
		"2026-W02 partial job=2026-W02 docs=10 chunks=[2] pairs_against=3 holds=[]",
		"2026-W02-compact compacted job=c1 docs=30 chunks=[0 1 2] pairs_against=0 holds=[2026-W01 2026-W02]",
		"2026-W03 incomplete job= docs=0 chunks=[] pairs_against=0 holds=[]",
		"2026-W04 incomplete job=2026-W04 docs=10 chunks=[3] pairs_against=0 holds=[]",
		"2026-W04b incomplete job= docs=0 chunks=[] pairs_against=0 holds=[]",
		"2026-W05 incomplete job=2026-W05 docs=0 chunks=[] pairs_against=0 holds=[]",
		"2026-W06 no-index job=2026-W06 docs=0 chunks=[] pairs_against=0 holds=[]",
		"notes not-a-job job= docs=0 chunks=[] pairs_against=0 holds=[]",
		"old-compact compacted job=c0 docs=20 chunks=[0 1] pairs_against=0 holds=[]",
	}
	if !reflect.DeepEqual(lines, want) {
		t.Fatalf("Scan:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	c, err := Pick(got, "2026-W07")
	if err != nil {
		t.Fatal(err)
	}
	if n := names(c.Earlier); !reflect.DeepEqual(n, []string{"2026-W02-compact"}) {
		t.Errorf("2026-W07 is matched against %q, want the compacted member only", n)
	}
	return others
}

// TestResumed reads the earlier jobs an unfinished member started with.
func TestResumed(t *testing.T) {
	ctx := context.Background()
	d, err := storage.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := Resumed(ctx, d); ok || err != nil {
		t.Fatalf("empty output: resumed %v, %v", ok, err)
	}
	spec := job.Spec{Job: "2026-W03", Format: job.SpecFormat}
	spec.Against = []job.Against{{Job: "2026-W01", Out: "/s/2026-W01"}, {Job: "2026-W02", Out: "/s/2026-W02"}}
	data, _ := json.Marshal(spec)
	if err := storage.WriteFile(ctx, d, job.SpecFile, data); err != nil {
		t.Fatal(err)
	}
	outs, ok, err := Resumed(ctx, d)
	if !ok || err != nil || !reflect.DeepEqual(outs, []string{"/s/2026-W01", "/s/2026-W02"}) {
		t.Fatalf("Resumed = %q, %v, %v", outs, ok, err)
	}
}

func TestCheckName(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{{"2026-W48", true}, {"2026-11-25", true}, {"week_1", true}, {"", false}, {"a/b", false}, {"_under", false}, {"-dash", true}, {"2026.11", false}, {strings.Repeat("x", 65), false}} {
		if err := CheckName(tt.name); (err == nil) != tt.ok {
			t.Errorf("CheckName(%q) = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

// failing fails opening one file, as a storage outage would.
type failing struct {
	storage.Opener
	name string
}

func (f failing) Open(ctx context.Context, name string) (storage.File, error) {
	if name == f.name {
		return nil, fmt.Errorf("storage: open %s: 503 SlowDown", name)
	}
	return f.Opener.Open(ctx, name)
}

// TestReadIndexErrors checks that a member whose index cannot be read
// is an error, not a member to skip (it would be left out of matching),
// while one with no index is a state.
func TestReadIndexErrors(t *testing.T) {
	ctx := context.Background()
	indexFile := "index/index.json"
	tests := []struct {
		name      string
		files     map[string]string
		fail      bool // opening index.json fails
		wantState State
		wantErr   string
	}{
		{name: "finished, no index", files: map[string]string{job.SuccessFile: ""}, wantState: NoIndex},
		{name: "finished, the storage fails on the index", files: map[string]string{job.SuccessFile: "", indexFile: "{}"}, fail: true, wantErr: "503 SlowDown"},
		{name: "finished, a damaged index", files: map[string]string{job.SuccessFile: "", indexFile: "{"}, wantErr: "its index"},
		{name: "compacted, the storage fails on the index", files: map[string]string{indexFile: "{}"}, fail: true, wantErr: "503 SlowDown"},
		{name: "compacted, a damaged index", files: map[string]string{indexFile: "{"}, wantErr: "its index"},
		{name: "not a job", files: map[string]string{"notes.txt": "x"}, wantState: NotJob},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := storage.Open(ctx, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			for name, data := range tt.files {
				if err := storage.WriteFile(ctx, d, name, []byte(data)); err != nil {
					t.Fatal(err)
				}
			}
			var st storage.Opener = d
			if tt.fail {
				st = failing{d, indexFile}
			}
			m, err := Read(ctx, st)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("state %s, err %v; want an error saying %q", m.State, err, tt.wantErr)
				}
			case err != nil || m.State != tt.wantState:
				t.Fatalf("state %s, err %v; want %s", m.State, err, tt.wantState)
			}
		})
	}
}

// holding is m recording that it holds the jobs named.
func holding(m Member, jobs ...string) Member {
	m.Holds = jobs
	return m
}
