package job

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/pkg/formats"
)

// tree writes files (path -> content) under a new directory and returns it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestExpandInputs(t *testing.T) {
	dir := tree(t, map[string]string{
		"b.jsonl":              "{}\n",
		"a.txt":                "text",
		"README.md":            "not an input",
		"sub/c.warc.wet.gz":    "x",
		"sub/d.parquet":        "x",
		"_work/e.jsonl":        "{}\n",
		".hidden/f.jsonl":      "{}\n",
		"sub/_SUCCESS":         "",
		"sub/.g.jsonl":         "{}\n",
		"sub/_h.jsonl":         "{}\n",
		"other/z.ndjson":       "{}\n{}\n",
		"other/y.jsonl.zst":    "x",
		"_side/explicit.jsonl": "{}\n",
		"docs/README.md":       "no input here",
		"data.csv":             "id,text\n",
	})
	p := func(name string) string { return filepath.Join(dir, filepath.FromSlash(name)) }
	tests := []struct {
		name string
		args []string
		want []string // relative paths, in order
		err  string
		bug  string // a known bug: the test is skipped while it fails
	}{
		{"directory: sorted, recursive, hidden and unsupported names skipped", []string{p("")},
			[]string{"a.txt", "b.jsonl", "other/y.jsonl.zst", "other/z.ndjson", "sub/c.warc.wet.gz", "sub/d.parquet"}, "", ""},
		{"files in the order given", []string{p("sub/d.parquet"), p("b.jsonl"), p("a.txt")},
			[]string{"sub/d.parquet", "b.jsonl", "a.txt"}, "", ""},
		{"a hidden directory named directly is read", []string{p("_work")}, []string{"_work/e.jsonl"}, "", ""},
		{"a hidden file named directly is read", []string{p("sub/_h.jsonl")}, []string{"sub/_h.jsonl"}, "", ""},
		{"a file named twice is read once", []string{p("b.jsonl"), p(""), p("b.jsonl")},
			[]string{"b.jsonl", "a.txt", "other/y.jsonl.zst", "other/z.ndjson", "sub/c.warc.wet.gz", "sub/d.parquet"}, "", ""},
		{"glob: sorted matches", []string{p("other/*")}, []string{"other/y.jsonl.zst", "other/z.ndjson"}, "", ""},
		{"glob: a matching directory is walked", []string{p("o*"), p("sub/*.parquet")},
			[]string{"other/y.jsonl.zst", "other/z.ndjson", "sub/d.parquet"}, "", ""},
		{"glob: unsupported matches skipped", []string{p("[abR]*")}, []string{"a.txt", "b.jsonl"}, "", ""},
		{"glob: hidden names skipped, as in a directory", []string{p("*")},
			[]string{"a.txt", "b.jsonl", "other/y.jsonl.zst", "other/z.ndjson", "sub/c.warc.wet.gz", "sub/d.parquet"}, "", ""},
		{"glob matching nothing", []string{p("*.warc")}, nil, "matches no file", ""},
		{"bad glob", []string{p("[")}, nil, "input pattern", ""},
		{"missing file", []string{p("b.jsonl"), p("nope.jsonl")}, nil, "nope.jsonl", ""},
		{"unsupported file named directly", []string{p("README.md")}, nil, "README.md", ""},
		{"a directory without inputs", []string{p("docs")}, nil, "no input files", ""},
	}
	// Files of no known kind under a directory or pattern are listed:
	// the READMEs as documentation (Doc), data.csv of unknown kind.
	wantSkipped := map[string][]string{
		"directory: sorted, recursive, hidden and unsupported names skipped": {"README.md", "data.csv", "docs/README.md"},
		"a file named twice is read once":                                    {"README.md", "data.csv", "docs/README.md"},
		"glob: unsupported matches skipped":                                  {"README.md"},
		"glob: hidden names skipped, as in a directory":                      {"README.md", "data.csv", "docs/README.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, skipped, err := ExpandInputs(context.Background(), tt.args, InputOptions{})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var rel []string
			for _, in := range got {
				r, _ := filepath.Rel(dir, in.Path)
				rel = append(rel, filepath.ToSlash(r))
				st, _ := os.Stat(in.Path)
				kind, _ := formats.DetectKind(in.Path)
				if in.Kind != kind || in.Size != st.Size() {
					t.Errorf("%s: kind %s size %d, want %s %d", r, in.Kind, in.Size, kind, st.Size())
				}
			}
			var relSkipped []string
			for _, sk := range skipped {
				r, _ := filepath.Rel(dir, sk.Path)
				relSkipped = append(relSkipped, filepath.ToSlash(r))
				doc := strings.HasSuffix(r, "README.md")
				switch {
				case sk.Doc != doc:
					t.Errorf("%s skipped with doc %v", r, sk.Doc)
				case doc && sk.Reason != "documentation, not an input":
					t.Errorf("%s skipped because %q", r, sk.Reason)
				case !doc && !strings.HasPrefix(sk.Reason, "unknown kind: "):
					t.Errorf("%s skipped because %q", r, sk.Reason)
				}
			}
			if !slices.Equal(relSkipped, wantSkipped[tt.name]) {
				t.Errorf("skipped %v, want %v", relSkipped, wantSkipped[tt.name])
			}
			if !slices.Equal(rel, tt.want) {
				if tt.bug != "" {
					t.Skipf("BUG: %s (inputs %v)", tt.bug, rel)
				}
				t.Errorf("inputs %v, want %v", rel, tt.want)
			}
		})
	}
	if _, _, err := ExpandInputs(context.Background(), []string{p("nope.jsonl")}, InputOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v, want fs.ErrNotExist", err)
	}
}

// jsonlLines returns n JSONL lines of about width bytes each.
func jsonlLines(n, width int) string {
	var b strings.Builder
	for i := range n {
		line := fmt.Sprintf(`{"id":"d%d","text":"`, i)
		line += strings.Repeat("w ", (width-len(line)-3)/2) + `"}`
		b.WriteString(line + "\n")
	}
	return b.String()
}

// noisyLines returns n JSONL lines of text that compresses poorly.
func noisyLines(n int) string {
	var b strings.Builder
	x := uint64(0x9e3779b97f4a7c15)
	for i := range n {
		fmt.Fprintf(&b, `{"id":"n%d","text":"`, i)
		for range 4 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			fmt.Fprintf(&b, "%016x ", x)
		}
		b.WriteString("\"}\n")
	}
	return b.String()
}

func gzipped(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestMakePlan checks how inputs are cut into chunks of about chunk-bytes
// of text, and that reading a plan's chunks in order gives every document
// once, in input order, so that ordinals c<<32|i follow the input.
func TestMakePlan(t *testing.T) {
	big := jsonlLines(10, 300) // 3,000 bytes of JSONL
	gz := gzipped(t, noisyLines(100))
	if len(gz) <= 1024 {
		t.Fatalf("the compressed input has %d bytes, the test wants more than 1024", len(gz))
	}
	dir := tree(t, map[string]string{
		"1-small.jsonl":   jsonlLines(2, 100),
		"2-small.jsonl":   jsonlLines(3, 100),
		"3-small.txt":     "a text document",
		"4-big.jsonl":     big,
		"6-comp.jsonl.gz": gz,
		"7-small.jsonl":   jsonlLines(1, 100),
	})
	p := func(name string) string { return filepath.Join(dir, name) }
	type piece struct {
		file       string
		start, end int64
		line       int64
	}
	tests := []struct {
		name       string
		files      []string
		chunkBytes int64
		want       [][]piece // pieces of each chunk
	}{
		{"small files packed", []string{"1-small.jsonl", "2-small.jsonl", "3-small.txt"}, 1024,
			[][]piece{{{"1-small.jsonl", 0, -1, 1}, {"2-small.jsonl", 0, -1, 1}, {"3-small.txt", 0, -1, 1}}}},
		{"packing stops at chunk-bytes", []string{"1-small.jsonl", "2-small.jsonl", "3-small.txt", "7-small.jsonl"}, 300,
			[][]piece{{{"1-small.jsonl", 0, -1, 1}}, {{"2-small.jsonl", 0, -1, 1}}, {{"3-small.txt", 0, -1, 1}, {"7-small.jsonl", 0, -1, 1}}}},
		// Cut after the first newline at or beyond 1,024 bytes: every 4 lines.
		{"large JSONL cut at line boundaries", []string{"4-big.jsonl"}, 1024,
			[][]piece{{{"4-big.jsonl", 0, 1200, 1}}, {{"4-big.jsonl", 1200, 2400, 5}}, {{"4-big.jsonl", 2400, -1, 9}}}},
		{"a file within chunk-bytes is one piece", []string{"4-big.jsonl"}, 3000,
			[][]piece{{{"4-big.jsonl", 0, -1, 1}}}},
		{"a chunk ends at the boundary nearest chunk-bytes", []string{"1-small.jsonl", "2-small.jsonl", "7-small.jsonl"}, 450,
			[][]piece{{{"1-small.jsonl", 0, -1, 1}, {"2-small.jsonl", 0, -1, 1}}, {{"7-small.jsonl", 0, -1, 1}}}},
		// Counted once, the compressed file would join the chunks before
		// and after it.
		{"a compressed file is one piece, counted four times", []string{"7-small.jsonl", "6-comp.jsonl.gz", "3-small.txt"}, int64(2 * len(gz)),
			[][]piece{{{"7-small.jsonl", 0, -1, 1}}, {{"6-comp.jsonl.gz", 0, -1, 1}}, {{"3-small.txt", 0, -1, 1}}}},
		{"a compressed file larger than chunk-bytes", []string{"6-comp.jsonl.gz"}, 1024,
			[][]piece{{{"6-comp.jsonl.gz", 0, -1, 1}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args []string
			for _, f := range tt.files {
				args = append(args, p(f))
			}
			inputs, _, err := ExpandInputs(context.Background(), args, InputOptions{})
			if err != nil {
				t.Fatal(err)
			}
			plan, err := MakePlan(context.Background(), inputs, tt.chunkBytes)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(plan.Inputs, inputs) {
				t.Errorf("plan inputs %v", plan.Inputs)
			}
			var got [][]piece
			for i, c := range plan.Chunks {
				if c.Index != i {
					t.Errorf("chunk %d has index %d", i, c.Index)
				}
				var ps []piece
				var bytes, text int64
				for _, pc := range c.Pieces {
					ps = append(ps, piece{filepath.Base(pc.Path), pc.Start, pc.End, pc.StartLine})
					st, _ := os.Stat(pc.Path)
					n := pc.End - pc.Start
					if pc.End < 0 {
						n = st.Size() - pc.Start
					}
					bytes += n
					if formats.Compressed(pc.Path) {
						n *= compressionEstimate
					}
					text += n
				}
				if c.Bytes != bytes || c.Text != text {
					t.Errorf("chunk %d: %d bytes, %d of text; its pieces hold %d and %d", i, c.Bytes, c.Text, bytes, text)
				}
				got = append(got, ps)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("chunks\n%v\nwant\n%v", got, tt.want)
			}

			// Every document once, in input order.
			var want, read []string
			for _, in := range inputs {
				_ = formats.Read(context.Background(), formats.Piece{Path: in.Path, Kind: in.Kind, End: -1, StartLine: 1}, formats.Options{},
					func(d formats.Doc) error { want = append(want, d.ID); return nil }, func(formats.Reject) error { return nil })
			}
			var ords []int64
			for _, c := range plan.Chunks {
				i := 0
				for _, pc := range c.Pieces {
					err := formats.Read(context.Background(), pc, formats.Options{}, func(d formats.Doc) error {
						read = append(read, d.ID)
						ords = append(ords, Ordinal(c.Index, i))
						i++
						return nil
					}, func(r formats.Reject) error { return fmt.Errorf("reject: %s", r.Reason) })
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			if !slices.Equal(read, want) || len(want) == 0 {
				t.Errorf("the chunks hold %d documents, the inputs %d, or not in order", len(read), len(want))
			}
			if !slices.IsSorted(ords) {
				t.Errorf("ordinals %x do not follow the input order", ords)
			}
		})
	}
	if plan, err := MakePlan(context.Background(), nil, 1024); err != nil || len(plan.Chunks) != 0 {
		t.Errorf("no inputs: %+v, %v", plan, err)
	}
	// An input that cannot be read at planning is planned whole: its map
	// task then lists it as an unreadable reject.
	plan, err := MakePlan(context.Background(), []Input{{Path: p("gone.jsonl"), Kind: formats.KindJSONL}}, 1024)
	if err != nil || len(plan.Chunks) != 1 || len(plan.Chunks[0].Pieces) != 1 ||
		plan.Chunks[0].Pieces[0] != (formats.Piece{Path: p("gone.jsonl"), Kind: formats.KindJSONL, End: -1, StartLine: 1}) {
		t.Errorf("missing input: plan %+v, err %v; want one whole piece", plan, err)
	}
}

// TestAutoPartitions checks the automatic partition count: at least
// MinPartitions, then one per PartitionText of text, a compressed file
// counting compressionEstimate times its size.
func TestAutoChunkBytes(t *testing.T) {
	tests := []struct {
		name   string
		inputs []Input
		want   int64
	}{
		{"no inputs", nil, MinChunkBytes},
		{"small", []Input{{Path: "a.jsonl", Size: 100 << 20}}, MinChunkBytes},
		{"the 100k corpus: ten files of 10 MB gzipped", repeat(Input{Path: "a.jsonl.gz", Size: 10 << 20}, 10), 40 << 20},
		{"the 1M corpus: a hundred", repeat(Input{Path: "a.jsonl.gz", Size: 10 << 20}, 100), 400 << 20},
		{"just above the floor", []Input{{Path: "a.jsonl", Size: MinChunks*MinChunkBytes + 1}}, MinChunkBytes + 1},
		{"capped", []Input{{Path: "a.jsonl", Size: 1 << 40}}, MaxChunkBytes},
	}
	for _, tt := range tests {
		if got := AutoChunkBytes(tt.inputs); got != tt.want {
			t.Errorf("%s: AutoChunkBytes = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func repeat(in Input, n int) []Input {
	out := make([]Input, n)
	for i := range out {
		out[i] = in
	}
	return out
}

func TestAutoPartitions(t *testing.T) {
	tests := []struct {
		name   string
		inputs []Input
		want   int
	}{
		{"no inputs", nil, MinPartitions},
		{"small", []Input{{Path: "a.jsonl", Size: 100 << 20}}, MinPartitions},
		{"just above the floor", []Input{{Path: "a.jsonl", Size: 32*PartitionText + 1}}, 33},
		{"compressed counts four times", []Input{{Path: "a.warc.wet.gz", Size: 1 << 30}}, 64},
		{"several", []Input{{Path: "a.jsonl", Size: 40 * PartitionText}, {Path: "b.jsonl.zst", Size: 10 * PartitionText}}, 80},
		{"capped", []Input{{Path: "a.jsonl", Size: 1 << 62}}, 99999},
	}
	for _, tt := range tests {
		if got := AutoPartitions(tt.inputs); got != tt.want {
			t.Errorf("%s: AutoPartitions = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestIsDocumentation tells a dataset's documentation from files of no
// input kind that may be data.
func TestIsDocumentation(t *testing.T) {
	for path, want := range map[string]bool{
		"README.md": true, "data/readme.MD": true, "card.markdown": true, "notes.rst": true,
		"LICENSE": true, "LICENCE.txt": true, "NOTICE": true, "CHANGELOG.md": true, "s3://b/crawl/README": true,
		"table.csv": false, "image.png": false, "readme-data.json": false, "licenses.bin": false,
	} {
		if got := IsDocumentation(path); got != want {
			t.Errorf("IsDocumentation(%q) = %v, want %v", path, got, want)
		}
	}
}

// TestAutoGather checks what --gather auto chooses: the set files for a
// local output of up to SetsText bytes of text (a compressed byte counting
// four), the gather stage beyond it, for an output in object storage or
// for a job matched against earlier ones.
func TestAutoGather(t *testing.T) {
	tests := []struct {
		name            string
		inputs          []Input
		remote, against bool
		want            Gather
	}{
		{"small", []Input{{Path: "a.jsonl", Size: 100 << 20}}, false, false, GatherSets},
		{"at the limit", []Input{{Path: "a.jsonl", Size: SetsText / 2}, {Path: "b.jsonl.gz", Size: SetsText / 8}}, false, false, GatherSets},
		{"over the limit", []Input{{Path: "a.jsonl", Size: SetsText/2 + 1}, {Path: "b.jsonl.gz", Size: SetsText / 8}}, false, false, GatherOn},
		{"compressed, over", []Input{{Path: "a.warc.wet.gz", Size: SetsText/4 + 1}}, false, false, GatherOn},
		{"small, object storage", []Input{{Path: "a.jsonl", Size: 1 << 20}}, true, false, GatherOn},
		{"small, against earlier jobs", []Input{{Path: "a.jsonl", Size: 1 << 20}}, false, true, GatherOn},
	}
	for _, tt := range tests {
		if got := AutoGather(tt.inputs, tt.remote, tt.against); got != tt.want {
			t.Errorf("%s: AutoGather = %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestPieceChanged: a piece's file has changed when its size or time is
// not what the plan recorded; a piece planned without a time, or whose
// file is gone, is not known to have changed.
func TestPieceChanged(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.jsonl")
	if err := os.WriteFile(path, []byte("{\"text\":\"a\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	planned := formats.Piece{Path: path, Kind: formats.KindJSONL, End: -1, FileSize: fi.Size(), FileMTime: fi.ModTime().UnixNano()}
	for _, tt := range []struct {
		name string
		edit func(p *formats.Piece)
		want bool
	}{
		{"as planned", func(*formats.Piece) {}, false},
		{"another size", func(p *formats.Piece) { p.FileSize++ }, true},
		{"another time", func(p *formats.Piece) { p.FileMTime -= 1e9 }, true},
		{"planned without a time", func(p *formats.Piece) { p.FileSize, p.FileMTime = 0, 0 }, false},
		{"gone", func(p *formats.Piece) { p.Path += ".gone" }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := planned
			tt.edit(&p)
			if got := PieceChanged(ctx, p); got != tt.want {
				t.Errorf("PieceChanged = %v, want %v", got, tt.want)
			}
		})
	}
}
