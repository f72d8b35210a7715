package kept_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/formats"
	"github.com/neardup/neardup/pkg/records"
)

// TestSampleCorpus runs a job on the bundled sample (JSONL, a broken
// JSONL file, WARC and WET files of one gzip member per record) and writes
// its corpus whole, in shards and annotated: each checked record for
// record against the inputs minus the duplicates.
func TestSampleCorpus(t *testing.T) {
	jobDir := runJob(t, 32<<20, "../../testdata/sample")
	writeAndCheck(t, jobDir, 150, func(t *testing.T, dir string, sum *kept.Summary) {
		copies := map[formats.Kind]string{}
		for _, f := range sum.Files {
			copies[f.Kind] = f.Copy
		}
		if copies[formats.KindWARC] != "members" || copies[formats.KindWET] != "members" {
			t.Errorf("WARC and WET records copied as %v, want their gzip members", copies)
		}
		if sum.Docs != 2601 || sum.Dropped != sum.Duplicates || sum.Kept+sum.Dropped != sum.Docs {
			t.Errorf("summary: docs %d, kept %d, dropped %d, duplicates %d", sum.Docs, sum.Kept, sum.Dropped, sum.Duplicates)
		}
	})
	t.Run("annotate", func(t *testing.T) {
		dir, sum := writeCorpus(t, jobDir, kept.Options{Annotate: true})
		if sum.Kept != sum.Docs || sum.Dropped != 0 {
			t.Errorf("annotating wrote %d of %d documents, dropped %d", sum.Kept, sum.Docs, sum.Dropped)
		}
		if err := checkAnnotated(t, jobDir, dir, kept.FormatAuto); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("the check fails on a wrong record", func(t *testing.T) {
		jf := readJob(t, jobDir)
		for _, tamper := range []struct {
			input string
			fn    func(t *testing.T, jf *jobFacts, in, out string)
		}{
			{"sample.jsonl.gz", swapLastLine},
			{"sample.warc.gz", swapLastMember},
			{"sample.warc.wet.gz", swapLastMember},
		} {
			dir, sum := writeCorpus(t, jobDir, kept.Options{})
			for _, f := range sum.Files {
				if filepath.Base(f.Input) == tamper.input {
					tamper.fn(t, jf, f.Input, filepath.Join(dir, f.Outputs[0]))
				}
			}
			if err := checkKept(t, jobDir, dir); err == nil {
				t.Errorf("%s: a duplicate in place of a kept record went unnoticed", tamper.input)
			} else {
				t.Logf("%s: %v", tamper.input, err)
			}
		}
	})
}

// writeAndCheck writes the corpus of jobDir with one output file per input
// and in shards of per documents, checks each with checkKept (and the
// shards with checkShards), then with more.
func writeAndCheck(t *testing.T, jobDir string, per int64, more func(t *testing.T, dir string, sum *kept.Summary)) {
	for _, shard := range []int64{0, per} {
		name := "one file per input"
		if shard > 0 {
			name = fmt.Sprintf("shards of %d documents", shard)
		}
		t.Run(name, func(t *testing.T) {
			dir, sum := writeCorpus(t, jobDir, kept.Options{ShardDocs: shard})
			if err := checkKept(t, jobDir, dir); err != nil {
				t.Fatal(err)
			}
			for _, f := range sum.Files {
				if shard > 0 {
					checkShards(t, dir, f, shard)
				}
			}
			more(t, dir, sum)
		})
	}
}

// checkShards checks that each output of f holds at most per documents,
// and all but the last exactly per.
func checkShards(t *testing.T, dir string, f kept.FileSummary, per int64) {
	t.Helper()
	if want := max(1, (f.Kept+per-1)/per); int64(len(f.Outputs)) != want {
		t.Errorf("%s: %d outputs for %d documents, want %d", f.Input, len(f.Outputs), f.Kept, want)
	}
	for i, o := range f.Outputs {
		kind, _ := formats.DetectKind(o)
		n := int64(0)
		formats.Read(context.Background(), formats.Piece{Path: filepath.Join(dir, o), Kind: kind, End: -1, StartLine: 1}, formats.Options{},
			func(formats.Doc) error { n++; return nil }, func(formats.Reject) error { return nil })
		if n > per || i < len(f.Outputs)-1 && n != per {
			t.Errorf("%s: %d documents", o, n)
		}
	}
}

// swapLastLine replaces the last line of a JSONL output by the line of a
// dropped document.
func swapLastLine(t *testing.T, jf *jobFacts, in, out string) {
	t.Helper()
	d := jf.dropped(in)[0]
	inLines := lines(decompressed(t, in, ""))
	var dup []byte
	for _, l := range inLines {
		if l.off == d.Offset {
			dup = l.data
		}
	}
	outLines := lines(decompressed(t, out, ""))
	var data []byte
	for _, l := range outLines[:len(outLines)-1] {
		data = append(data, l.data...)
	}
	writeGzip(t, out, append(data, dup...))
}

// swapLastMember replaces the last gzip member of a WARC output by the
// member of a dropped document, as compressed in the input.
func swapLastMember(t *testing.T, jf *jobFacts, in, out string) {
	t.Helper()
	d := jf.dropped(in)[0]
	src, _ := os.ReadFile(in)
	dup := src[*d.CompressedOffset : *d.CompressedOffset+*d.CompressedLength]
	members := gzipMembers(t, out)
	var data bytes.Buffer
	for _, m := range members[:len(members)-1] {
		zw := gzip.NewWriter(&data)
		zw.Write(m)
		zw.Close()
	}
	data.Write(dup)
	if err := os.WriteFile(out, data.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeGzip(t *testing.T, path string, data []byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tableRow is a row of the Parquet input of TestDerivedInputs: the id,
// url and text the job reads, and columns it does not.
type tableRow struct {
	ID   string   `parquet:"id"`
	URL  *string  `parquet:"url,optional"`
	Text *string  `parquet:"text,optional"`
	N    int64    `parquet:"n"`
	Tags []string `parquet:"tags,list"`
}

// derivedInputs writes, from the sample, inputs of the layouts the sample
// has not: an uncompressed WARC file with request and metadata records, a
// WET file of one gzip stream, an uncompressed JSONL file the job reads in
// several pieces, and a Parquet table of several row groups with columns
// of its own and a row without text.
func derivedInputs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	warc := decompressed(t, "../../testdata/sample/sample.warc.gz", "")
	recs := warcRecords(t, warc)
	var plain []byte
	for i, r := range recs {
		plain = append(plain, r.data...)
		if i%10 == 1 { // after the warcinfo record and every tenth response
			for _, typ := range []string{"request", "metadata"} {
				block := fmt.Sprintf("GET /%d HTTP/1.1\r\nHost: example.org\r\n\r\n", i)
				plain = fmt.Appendf(plain, "WARC/1.0\r\nWARC-Type: %s\r\nWARC-Record-ID: <urn:uuid:%s-%d>\r\nContent-Type: application/http; msgtype=request\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n",
					typ, typ, i, len(block), block)
			}
		}
	}
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("plain.warc", plain)
	var wet bytes.Buffer
	zw := gzip.NewWriter(&wet)
	zw.Write(decompressed(t, "../../testdata/sample/sample.warc.wet.gz", ""))
	zw.Close()
	write("single.warc.wet.gz", wet.Bytes())

	jsonl := lines(decompressed(t, "../../testdata/sample/sample.jsonl.gz", ""))
	var part []byte
	for _, l := range jsonl[:500] {
		part = append(part, l.data...)
	}
	write("part.jsonl", part)
	write("typed.jsonl", typedLines(t, jsonl[900:1300]))

	var rows []tableRow
	for i, l := range jsonl[500:900] {
		var doc struct{ ID, URL, Text string }
		if err := json.Unmarshal(l.data, &doc); err != nil {
			t.Fatal(err)
		}
		r := tableRow{ID: doc.ID, URL: &doc.URL, Text: &doc.Text, N: int64(i), Tags: []string{"t", fmt.Sprint(i % 3)}}
		switch i {
		case 7:
			r.Text = nil // rejected: no text
		case 8:
			r.URL, r.Tags = nil, nil
		}
		rows = append(rows, r)
	}
	f, err := os.Create(filepath.Join(dir, "table.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	pw := parquet.NewGenericWriter[tableRow](f, parquet.MaxRowsPerRowGroup(128))
	if _, err := pw.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return dir
}

// typedLines makes JSONL lines of members of every kind from the sample's
// lines ls (their id, URL and text): integers, numbers, booleans, objects,
// arrays, members of mixed kinds, of nulls only, a number no float64
// holds; the first line starts with a member the others have later. A
// blank line, a line that is an array and one whose text is a number are
// no documents.
func typedLines(t *testing.T, ls []piece) []byte {
	t.Helper()
	var out []byte
	for i, l := range ls {
		var doc struct{ ID, URL, Text string }
		if err := json.Unmarshal(l.data, &doc); err != nil {
			t.Fatal(err)
		}
		id, _ := json.Marshal(doc.ID)
		url, _ := json.Marshal(doc.URL)
		text, _ := json.Marshal(doc.Text)
		score := fmt.Sprint(i)
		if i%2 == 1 {
			score += ".5"
		}
		mixed := `"s"`
		if i%2 == 1 {
			mixed = fmt.Sprint(i)
		}
		first := ""
		if i == 0 {
			first = `"ok":true, `
		}
		line := fmt.Sprintf(`{%s"id":%s,"url":%s,"text":%s,"n":%d,"score":%s,"ok":%v,"meta":{"i": %d},"tags":[%d,"x"],"mixed":%s`,
			first, id, url, text, i, score, i%3 == 0, i, i, mixed)
		if i%2 == 0 {
			line += `,"maybe":null`
		}
		if i == 5 {
			line += `,"huge":1e999`
		}
		out = append(out, line+"}\n"...)
		switch i {
		case 10:
			out = append(out, "\n"...)
		case 11:
			out = append(out, "[1, 2]\n"...)
		case 12:
			out = append(out, `{"id":"number-text","text":12,"ok":false}`+"\n"...)
		}
	}
	return out
}

// TestDerivedInputs writes the corpus of a job on derivedInputs: WARC
// records decompressed and written a gzip member each (with the request
// and metadata records kept), JSONL lines of a file read in pieces, and
// Parquet rows with every column of the input.
func TestDerivedInputs(t *testing.T) {
	in := derivedInputs(t)
	jobDir := runJob(t, 64<<10, in)
	jf := readJob(t, jobDir)
	writeAndCheck(t, jobDir, 100, func(t *testing.T, dir string, sum *kept.Summary) {
		for _, f := range sum.Files {
			if f.Dropped == 0 {
				t.Errorf("%s: no duplicate dropped; the test wants some in every input", f.Input)
			}
			switch f.Kind {
			case formats.KindWARC, formats.KindWET:
				if f.Copy != "records" {
					t.Errorf("%s: copied as %q, want records", f.Input, f.Copy)
				}
			case formats.KindParquet:
				checkTable(t, jf, f, dir)
			}
		}
		data := concat(t, outputsOf(t, dir, sum, "plain.warc"))
		for _, typ := range []string{"request", "metadata"} {
			if n := bytes.Count(data, []byte("WARC-Type: "+typ+"\r\n")); n != 10 {
				t.Errorf("%d %s records kept, want all 10", n, typ)
			}
		}
	})
	for _, format := range []string{kept.FormatJSONL, kept.FormatParquet} {
		t.Run("format "+format, func(t *testing.T) {
			dir, _ := writeCorpus(t, jobDir, kept.Options{Format: format, ShardDocs: 100})
			checkConverted(t, jobDir, dir, format)
		})
	}
	for _, format := range []string{kept.FormatAuto, kept.FormatJSONL, kept.FormatParquet} {
		t.Run("annotate, format "+format, func(t *testing.T) {
			dir, _ := writeCorpus(t, jobDir, kept.Options{Annotate: true, ShardDocs: 100, Format: format})
			if err := checkAnnotated(t, jobDir, dir, format); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("the check fails on a wrong row", func(t *testing.T) {
		jf := readJob(t, jobDir)
		dir, sum := writeCorpus(t, jobDir, kept.Options{})
		outs := outputsOf(t, dir, sum, "table.parquet")
		input := filepath.Join(in, "table.parquet")
		all := readRows[tableRow](t, input)
		rows := readRows[tableRow](t, outs[0])
		rows[len(rows)-1] = all[jf.dropped(input)[0].Offset]
		if err := parquet.WriteFile(outs[0], rows); err != nil {
			t.Fatal(err)
		}
		if err := checkKept(t, jobDir, dir); err == nil {
			t.Error("a duplicate in place of a kept row went unnoticed")
		} else {
			t.Log(err)
		}
	})
}

// outputsOf returns the paths of the outputs of the input named name.
func outputsOf(t *testing.T, dir string, sum *kept.Summary, name string) []string {
	t.Helper()
	for _, f := range sum.Files {
		if filepath.Base(f.Input) == name {
			var out []string
			for _, o := range f.Outputs {
				out = append(out, filepath.Join(dir, o))
			}
			return out
		}
	}
	t.Fatalf("no input %s", name)
	return nil
}

// checkTable reads the Parquet outputs of f as tableRow values: the input's
// rows without the duplicates', every column equal.
func checkTable(t *testing.T, jf *jobFacts, f kept.FileSummary, dir string) {
	t.Helper()
	all := readRows[tableRow](t, f.Input)
	drop := jf.droppedOffsets(f.Input)
	var want, got []tableRow
	for i, r := range all {
		if !drop[int64(i)] {
			want = append(want, r)
		}
	}
	for _, o := range f.Outputs {
		got = append(got, readRows[tableRow](t, filepath.Join(dir, o))...)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", f.Input, len(got), len(want))
	}
	for i := range got {
		g, _ := json.Marshal(got[i])
		w, _ := json.Marshal(want[i])
		if !bytes.Equal(g, w) {
			t.Fatalf("%s: row %d is %s, want %s", f.Input, i, g, w)
		}
	}
}

// TestWriteChecks makes a job's files disagree with its inputs, and
// checks that Write refuses them loudly; and that it refuses an
// unfinished job and an output directory that holds files.
func TestWriteChecks(t *testing.T) {
	jobDir := runJob(t, 32<<20, "../../testdata/sample/sample.warc.gz", "../../testdata/sample/broken.jsonl")
	clone := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "job")
		if err := os.CopyFS(dir, os.DirFS(jobDir)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	ctx := context.Background()
	roots := ranWith(t, jobDir)
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		want   string
	}{
		{"a duplicate no input holds", func(t *testing.T, dir string) {
			rewrite(t, filepath.Join(dir, job.DuplicatesFile), func(rows []records.Duplicate) []records.Duplicate {
				return append(rows, records.Duplicate{Doc: 1 << 40, ID: "nowhere"})
			})
		}, "documents dropped, but duplicates.parquet lists"},
		{"a document at the wrong offset", func(t *testing.T, dir string) {
			rewrite(t, filepath.Join(dir, "docs", "chunk-000000.parquet"), func(rows []records.DocRecord) []records.DocRecord {
				for i := range rows {
					if strings.HasSuffix(rows[i].File, ".jsonl") {
						rows[i].Offset++
					}
				}
				return rows
			})
		}, "broken.jsonl: offset 1: docs/ lists document"},
		{"a member in the wrong place", func(t *testing.T, dir string) {
			rewrite(t, filepath.Join(dir, "docs", "chunk-000000.parquet"), func(rows []records.DocRecord) []records.DocRecord {
				for i := range rows {
					if rows[i].CompressedOffset != nil && i%2 == 0 {
						*rows[i].CompressedOffset = *rows[i+1].CompressedOffset
						*rows[i].CompressedLength = *rows[i+1].CompressedLength
					}
				}
				return rows
			})
		}, "sample.warc.gz: compressed byte"},
		{"a document of no input", func(t *testing.T, dir string) {
			rewrite(t, filepath.Join(dir, "docs", "chunk-000000.parquet"), func(rows []records.DocRecord) []records.DocRecord {
				rows[len(rows)/2].File = "/nowhere.warc.gz"
				return rows
			})
		}, "of /nowhere.warc.gz, which is not among the job's inputs"},
		{"an input that has changed", func(t *testing.T, dir string) {
			path := filepath.Join(dir, job.ManifestFile)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var man map[string]any
			json.Unmarshal(data, &man)
			in := man["inputs"].([]any)[0].(map[string]any)
			in["size"] = in["size"].(float64) + 1
			data, _ = json.Marshal(man)
			os.WriteFile(path, data, 0o644)
		}, "when the job read it: the file has changed"},
		{"an unfinished job", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, job.SuccessFile))
		}, kept.ErrNotFinished.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := clone(t)
			tt.change(t, dir)
			_, err := kept.Write(ctx, kept.Options{Job: dir, Dir: filepath.Join(t.TempDir(), "kept"), Roots: roots})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Write: %v, want an error saying %q", err, tt.want)
			}
		})
	}
	t.Run("a directory that holds a corpus", func(t *testing.T) {
		out, _ := writeCorpus(t, jobDir, kept.Options{ShardDocs: 1})
		_, err := kept.Write(ctx, kept.Options{Job: jobDir, Dir: out, Roots: roots})
		if !errors.Is(err, kept.ErrNotEmpty) {
			t.Fatalf("Write into a directory that holds files: %v, want ErrNotEmpty", err)
		}
		if _, err := kept.Write(ctx, kept.Options{Job: jobDir, Dir: out, Roots: roots, Overwrite: true}); err != nil {
			t.Fatalf("with Overwrite: %v", err)
		}
		if shard, err := filepath.Glob(filepath.Join(out, "*-00001.*")); err != nil || len(shard) != 0 {
			t.Errorf("Overwrite left the shards of the corpus that was there: %v %v", shard, err)
		}
		if err := checkKept(t, jobDir, out); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a directory that holds a job", func(t *testing.T) {
		parent := filepath.Dir(clone(t))
		_, err := kept.Write(ctx, kept.Options{Job: jobDir, Dir: parent, Roots: roots, Overwrite: true})
		if err == nil || !strings.Contains(err.Error(), "holds a job") {
			t.Fatalf("Write over a directory that holds a job: %v", err)
		}
		if _, err := os.Stat(filepath.Join(parent, "job", job.ManifestFile)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		out := filepath.Join(t.TempDir(), "kept")
		opened := 0
		open := func(ctx context.Context, path string) (storage.File, error) {
			if opened++; opened == 2 {
				cancel() // while the second input is written
			}
			return storage.OpenFile(ctx, path)
		}
		_, err := kept.Write(ctx, kept.Options{Job: jobDir, Dir: out, Roots: roots, Open: open})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Write: %v, want context.Canceled", err)
		}
		for _, name := range []string{kept.SuccessFile, kept.SummaryFile} {
			if _, err := os.Stat(filepath.Join(out, name)); !os.IsNotExist(err) {
				t.Errorf("a cancelled Write left %s: %v", name, err)
			}
		}
	})
	t.Run("a format that cannot write an input", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "kept")
		_, err := kept.Write(ctx, kept.Options{Job: jobDir, Dir: out, Roots: roots, Format: kept.FormatWARC})
		if err == nil || !strings.Contains(err.Error(), "broken.jsonl (jsonl) cannot be written as warc") {
			t.Fatalf("Write of a JSONL input as WARC: %v", err)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("the refused Write made its directory: %v", err)
		}
	})
	t.Run("the job's own directory", func(t *testing.T) {
		if _, err := kept.Write(ctx, kept.Options{Job: jobDir, Dir: jobDir, Roots: roots, Overwrite: true}); err == nil {
			t.Fatal("Write into the job's directory succeeded")
		}
	})
}

// rewrite rewrites a Parquet file of T with its rows changed by change.
func rewrite[T any](t *testing.T, path string, change func([]T) []T) {
	t.Helper()
	if err := parquet.WriteFile(path, change(readRows[T](t, path))); err != nil {
		t.Fatal(err)
	}
}

// annotation is the "neardup" member of an annotated JSONL line.
type annotation struct {
	Doc            int64    `json:"doc"`
	Cluster        int64    `json:"cluster"`
	ClusterSize    int32    `json:"cluster_size"`
	Keep           bool     `json:"keep"`
	BestMatchID    *string  `json:"best_match_id"`
	BestSimilarity *float64 `json:"best_similarity"`
}

// annotatedRow is what an annotated Parquet output adds to a row.
type annotatedRow struct {
	Doc            *int64   `parquet:"neardup_doc,optional"`
	Cluster        *int64   `parquet:"neardup_cluster,optional"`
	ClusterSize    *int32   `parquet:"neardup_cluster_size,optional"`
	Keep           *bool    `parquet:"neardup_keep,optional"`
	BestMatchID    *string  `parquet:"neardup_best_match_id,optional"`
	BestSimilarity *float64 `parquet:"neardup_best_similarity,optional"`
}

// wantAnnotations works out every document's annotation from the job's
// files: cluster from clusters.parquet, keep from duplicates.parquet, the
// best match from pairs/.
func wantAnnotations(t *testing.T, jobDir string, jf *jobFacts) map[int64]annotation {
	t.Helper()
	want := map[int64]annotation{}
	for doc := range jf.byDoc {
		_, dup := jf.dups[doc]
		want[doc] = annotation{Doc: doc, Cluster: doc, ClusterSize: 1, Keep: !dup}
	}
	for _, c := range readRows[records.ClusterRecord](t, filepath.Join(jobDir, job.ClustersFile)) {
		a := want[c.Doc]
		a.Cluster, a.ClusterSize = c.Cluster, c.ClusterSize
		if c.Keep != a.Keep {
			t.Fatalf("document %d: clusters.parquet says keep %v, duplicates.parquet the opposite", c.Doc, c.Keep)
		}
		want[c.Doc] = a
	}
	type best struct {
		other int64
		id    string
		sim   float64
	}
	bests := map[int64][]best{}
	files, _ := filepath.Glob(filepath.Join(jobDir, "pairs", "*.parquet"))
	for _, f := range files {
		for _, p := range readRows[records.Pair](t, f) {
			bests[p.A] = append(bests[p.A], best{p.B, p.BID, p.Similarity})
			bests[p.B] = append(bests[p.B], best{p.A, p.AID, p.Similarity})
		}
	}
	for doc, bs := range bests {
		slices.SortFunc(bs, func(x, y best) int {
			if x.sim != y.sim {
				if x.sim > y.sim {
					return -1
				}
				return 1
			}
			return int(x.other - y.other)
		})
		a := want[doc]
		a.BestMatchID, a.BestSimilarity = &bs[0].id, &bs[0].sim
		want[doc] = a
	}
	return want
}

// annotationColumns is how many columns --annotate adds to a Parquet
// input's (docs/usage.md).
const annotationColumns = 6

// checkAnnotated checks an annotated corpus: annotations.parquet holds
// every document once, with its file, offset and the annotation
// wantAnnotations gives; JSONL outputs hold every input line, a
// document's with that annotation added and nothing else changed; Parquet
// outputs every row with its columns and the annotation's; WARC and WET
// outputs every record unchanged.
func checkAnnotated(t *testing.T, jobDir, dir, format string) error {
	t.Helper()
	jf := readJob(t, jobDir)
	want := wantAnnotations(t, jobDir, jf)
	sum := readSummary(t, dir)
	var errs []error
	seen := map[int64]bool{}
	outputs := map[string]bool{}
	for _, f := range sum.Files {
		for _, o := range f.Outputs {
			outputs[o] = true
		}
	}
	for _, a := range readRows[kept.Annotation](t, filepath.Join(dir, kept.AnnotationsFile)) {
		d, ok := jf.byDoc[a.Doc]
		got := annotation{a.Doc, a.Cluster, a.ClusterSize, a.Keep, a.BestMatchID, a.BestSimilarity}
		switch {
		case !ok || seen[a.Doc]:
			errs = append(errs, fmt.Errorf("annotations.parquet: document %d is no document of the job, or listed twice", a.Doc))
		case a.ID != d.ID || a.File != d.File || a.Offset != d.Offset || !outputs[a.Output]:
			errs = append(errs, fmt.Errorf("annotations.parquet: document %d at %s:%d in %q, docs/ says %s:%d", a.Doc, a.File, a.Offset, a.Output, d.File, d.Offset))
		case !sameAnnotation(got, want[a.Doc]):
			errs = append(errs, fmt.Errorf("annotations.parquet: document %d: %s, want %s", a.Doc, show(got), show(want[a.Doc])))
		}
		seen[a.Doc] = true
	}
	if len(seen) != len(jf.byDoc) {
		errs = append(errs, fmt.Errorf("annotations.parquet: %d documents, the job has %d", len(seen), len(jf.byDoc)))
	}
	for _, f := range sum.Files {
		in := jf.inputs[f.Input]
		var outs []string
		for _, o := range f.Outputs {
			outs = append(outs, filepath.Join(dir, o))
		}
		docAt := map[int64]int64{}
		for _, d := range jf.docs[in.Path] {
			docAt[d.Offset] = d.Doc
		}
		rowDoc := func(i int) (int64, bool) {
			doc, ok := docAt[int64(i)]
			return doc, ok
		}
		switch {
		case in.Kind == formats.KindJSONL && format == kept.FormatParquet:
			// A row for each document, its members in columns.
			docs := jf.docs[in.Path]
			var offsets []int64
			for _, d := range docs {
				offsets = append(offsets, d.Offset)
			}
			errs = append(errs, checkColumns(t, in, outs, offsets, jf.man.Params.TextField, annotationColumns))
			errs = append(errs, checkAnnotatedRows(t, in.Path, outs, func(i int) (int64, bool) { return docs[i].Doc, true }, want))
		case in.Kind == formats.KindJSONL:
			errs = append(errs, checkAnnotatedLines(t, in, outs, docAt, want))
		case in.Kind == formats.KindParquet && format == kept.FormatJSONL:
			var ids []string
			for _, r := range readRows[tableRow](t, in.Path) {
				ids = append(ids, r.ID)
			}
			errs = append(errs, checkAnnotatedObjects(t, in.Path, outs, ids, rowDoc, want))
		case in.Kind == formats.KindParquet:
			errs = append(errs, checkRows(t, in.Path, outs, nil, annotationColumns))
			errs = append(errs, checkAnnotatedRows(t, in.Path, outs, rowDoc, want))
		case format == kept.FormatJSONL || format == kept.FormatParquet:
			// A WARC, WET or text file: an object or a row for each
			// document, in order.
			docs := jf.docs[in.Path]
			var ids []string
			for _, d := range docs {
				ids = append(ids, d.ID)
			}
			docOf := func(i int) (int64, bool) { return docs[i].Doc, true }
			if format == kept.FormatJSONL {
				errs = append(errs, checkAnnotatedObjects(t, in.Path, outs, ids, docOf, want))
				continue
			}
			var got []string
			for _, o := range outs {
				for _, d := range readDocs(t, jf, o, formats.KindParquet, "") {
					got = append(got, d.ID)
				}
			}
			if !slices.Equal(got, ids) {
				errs = append(errs, fmt.Errorf("%s: rows of documents %q, want %q", in.Path, got, ids))
			}
			errs = append(errs, checkAnnotatedRows(t, in.Path, outs, docOf, want))
		default:
			if !bytes.Equal(concat(t, outs), decompressed(t, in.Path, in.Compression)) {
				errs = append(errs, fmt.Errorf("%s: the annotated outputs are not the input's records", in.Path))
			}
		}
	}
	return errors.Join(errs...)
}

// checkAnnotatedRows checks the annotation columns of the Parquet outputs
// of input: row i has the annotation of document docOf(i), or nulls when
// it is no document.
func checkAnnotatedRows(t *testing.T, input string, outs []string, docOf func(i int) (int64, bool), want map[int64]annotation) error {
	var rows []annotatedRow
	for _, o := range outs {
		rows = append(rows, readRows[annotatedRow](t, o)...)
	}
	for i, r := range rows {
		doc, isDoc := docOf(i)
		switch {
		case !isDoc && r.Doc != nil:
			return fmt.Errorf("%s: row %d is no document but annotated %d", input, i, *r.Doc)
		case !isDoc:
		case r.Doc == nil || r.Cluster == nil || r.ClusterSize == nil || r.Keep == nil:
			return fmt.Errorf("%s: row %d: annotation columns null", input, i)
		default:
			got := annotation{*r.Doc, *r.Cluster, *r.ClusterSize, *r.Keep, r.BestMatchID, r.BestSimilarity}
			if !sameAnnotation(got, want[doc]) {
				return fmt.Errorf("%s: row %d: %s, want %s", input, i, show(got), show(want[doc]))
			}
		}
	}
	return nil
}

// checkAnnotatedObjects checks the JSON lines a Parquet input (or the
// documents of a WARC, WET or text file) was written as: line i is record
// i, whose id is ids[i], with the "neardup" member of document docOf(i),
// or none when it is no document.
func checkAnnotatedObjects(t *testing.T, input string, outs []string, ids []string, docOf func(i int) (int64, bool), want map[int64]annotation) error {
	outLines := lines(concat(t, outs))
	if len(outLines) != len(ids) {
		return fmt.Errorf("%s: %d lines, want the input's %d records", input, len(outLines), len(ids))
	}
	for i, l := range outLines {
		var obj struct {
			ID      string      `json:"id"`
			Neardup *annotation `json:"neardup"`
		}
		if err := json.Unmarshal(l.data, &obj); err != nil {
			return fmt.Errorf("%s: line %d: %v", input, i, err)
		}
		doc, isDoc := docOf(i)
		switch {
		case obj.ID != ids[i]:
			return fmt.Errorf("%s: line %d is %q, not record %d, %q", input, i, obj.ID, i, ids[i])
		case isDoc != (obj.Neardup != nil):
			return fmt.Errorf("%s: line %d: document %v, annotated %v", input, i, isDoc, obj.Neardup != nil)
		case isDoc && !sameAnnotation(*obj.Neardup, want[doc]):
			return fmt.Errorf("%s: line %d: %s, want %s", input, i, show(*obj.Neardup), show(want[doc]))
		}
	}
	return nil
}

// checkAnnotatedLines checks the annotated outputs of a JSONL input.
func checkAnnotatedLines(t *testing.T, in job.Input, outs []string, docAt map[int64]int64, want map[int64]annotation) error {
	inLines := lines(decompressed(t, in.Path, in.Compression))
	outLines := lines(concat(t, outs))
	if len(inLines) != len(outLines) {
		return fmt.Errorf("%s: %d lines in the outputs, want the input's %d", in.Path, len(outLines), len(inLines))
	}
	for i, l := range inLines {
		o := outLines[i].data
		doc, isDoc := docAt[l.off]
		if !isDoc {
			if !bytes.Equal(o, l.data) {
				return fmt.Errorf("%s: offset %d: a line that is no document changed", in.Path, l.off)
			}
			continue
		}
		var inObj, outObj map[string]json.RawMessage
		if err := json.Unmarshal(l.data, &inObj); err != nil {
			return fmt.Errorf("%s: offset %d: %v", in.Path, l.off, err)
		}
		if err := json.Unmarshal(o, &outObj); err != nil {
			return fmt.Errorf("%s: offset %d: annotated line: %v", in.Path, l.off, err)
		}
		var got annotation
		if err := json.Unmarshal(outObj["neardup"], &got); err != nil {
			return fmt.Errorf("%s: offset %d: \"neardup\": %v", in.Path, l.off, err)
		}
		if !sameAnnotation(got, want[doc]) {
			return fmt.Errorf("%s: offset %d: %s, want %s", in.Path, l.off, show(got), show(want[doc]))
		}
		delete(outObj, "neardup")
		if fmt.Sprint(outObj) != fmt.Sprint(inObj) || !bytes.HasSuffix(o, []byte("}\n")) {
			return fmt.Errorf("%s: offset %d: the annotated line's other members changed", in.Path, l.off)
		}
	}
	return nil
}

func sameAnnotation(a, b annotation) bool {
	return show(a) == show(b)
}

// show prints an annotation with the values its pointers point to.
func show(a annotation) string {
	id, sim := "null", "null"
	if a.BestMatchID != nil {
		id = *a.BestMatchID
	}
	if a.BestSimilarity != nil {
		sim = fmt.Sprint(*a.BestSimilarity)
	}
	return fmt.Sprintf("doc %d cluster %d size %d keep %v best %s %s", a.Doc, a.Cluster, a.ClusterSize, a.Keep, id, sim)
}
