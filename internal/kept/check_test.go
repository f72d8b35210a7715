package kept_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/control"
	"github.com/neardup/neardup/internal/dataroot"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/pkg/formats"
	"github.com/neardup/neardup/pkg/records"
)

// This file checks a written corpus against the job's inputs with code of
// its own: the inputs and outputs are read with pkg/formats (documents)
// and cut into lines, WARC records and Parquet rows here, not with the
// writer's code.

// runJob runs a dedup job on inputs into a new directory and returns it.
func runJob(t *testing.T, chunkBytes int64, inputs ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "job")
	p := job.DefaultParams()
	p.ChunkBytes = chunkBytes
	p.Partitions = 4
	qc := queue.DefaultConfig()
	qc.AckWait = 10 * time.Second
	cfg := control.Config{Out: out, Inputs: inputs, Params: p, Workers: 2, Queue: qc, Log: slog.New(slog.DiscardHandler)}
	if _, err := control.Run(context.Background(), cfg); err != nil {
		t.Fatalf("job on %v: %v", inputs, err)
	}
	return out
}

// ranWith returns the roots of the inputs of jobDir, a job the test ran
// itself: its manifest names the inputs it was given.
func ranWith(t *testing.T, jobDir string) []kept.Roots {
	t.Helper()
	var paths []string
	for _, in := range readManifestOf(t, jobDir).Inputs {
		paths = append(paths, in.Path)
	}
	return rootsAt(t, paths...)
}

// rootsAt returns the roots at paths.
func rootsAt(t *testing.T, paths ...string) []kept.Roots {
	t.Helper()
	r, err := dataroot.Resolve(paths)
	if err != nil {
		t.Fatal(err)
	}
	return []kept.Roots{r}
}

// writeCorpus writes the corpus of jobDir into a new directory, reading
// the inputs the job was run with unless o.Roots says otherwise.
func writeCorpus(t *testing.T, jobDir string, o kept.Options) (string, *kept.Summary) {
	t.Helper()
	if o.Roots == nil {
		o.Roots = ranWith(t, jobDir)
	}
	o.Job = jobDir
	o.Dir = filepath.Join(t.TempDir(), "kept")
	sum, err := kept.Write(context.Background(), o)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	return o.Dir, sum
}

// jobFacts is what a checker reads of a job: its manifest, its documents
// by input file (in file order) and its duplicates.
type jobFacts struct {
	man    *manifest.Manifest
	docs   map[string][]records.DocRecord
	dups   map[int64]records.Duplicate
	byDoc  map[int64]records.DocRecord
	inputs map[string]job.Input
}

func readJob(t *testing.T, dir string) *jobFacts {
	t.Helper()
	jf := &jobFacts{man: readManifestOf(t, dir), docs: map[string][]records.DocRecord{}, dups: map[int64]records.Duplicate{},
		byDoc: map[int64]records.DocRecord{}, inputs: map[string]job.Input{}}
	for _, in := range jf.man.Inputs {
		jf.inputs[in.Path] = in
	}
	files, _ := filepath.Glob(filepath.Join(dir, "docs", "*.parquet"))
	for _, f := range files {
		for _, d := range readRows[records.DocRecord](t, f) {
			jf.docs[d.File] = append(jf.docs[d.File], d)
			jf.byDoc[d.Doc] = d
		}
	}
	for f := range jf.docs {
		slices.SortFunc(jf.docs[f], func(a, b records.DocRecord) int { return int(a.Offset - b.Offset) })
	}
	for _, d := range readRows[records.Duplicate](t, filepath.Join(dir, job.DuplicatesFile)) {
		jf.dups[d.Doc] = d
	}
	return jf
}

// readRows reads a whole Parquet file of T.
func readRows[T any](t *testing.T, path string) []T {
	t.Helper()
	rows, err := parquet.ReadFile[T](path)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// dropped returns the documents of file that are duplicates.
func (jf *jobFacts) dropped(file string) []records.DocRecord {
	var out []records.DocRecord
	for _, d := range jf.docs[file] {
		if _, ok := jf.dups[d.Doc]; ok {
			out = append(out, d)
		}
	}
	return out
}

// droppedOffsets returns the offsets of the documents of file that are
// duplicates.
func (jf *jobFacts) droppedOffsets(file string) map[int64]bool {
	m := map[int64]bool{}
	for _, d := range jf.dropped(file) {
		m[d.Offset] = true
	}
	return m
}

// readSummary reads kept.json of a corpus.
func readSummary(t *testing.T, dir string) *kept.Summary {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, kept.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var s kept.Summary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// checkKept checks the corpus in dir (written without annotation) against
// the job: for every input file, its documents read back from the outputs
// are the input's minus the duplicates (by id and text), the dropped ones
// are the duplicates.parquet rows of that file, and the outputs hold the
// input's lines, rows or WARC records byte for byte, but those of the
// duplicates. It returns every difference found.
func checkKept(t *testing.T, jobDir, dir string) error {
	t.Helper()
	jf := readJob(t, jobDir)
	sum := readSummary(t, dir)
	var errs []error
	var dropped int64
	for _, fs := range sum.Files {
		in := jf.inputs[fs.Input]
		outs := make([]string, len(fs.Outputs))
		for i, o := range fs.Outputs {
			outs[i] = filepath.Join(dir, o)
		}
		// Documents: input minus duplicates, in order.
		inDocs := readDocs(t, jf, in.Path, in.Kind, in.Compression)
		docs := jf.docs[in.Path]
		if len(inDocs) != len(docs) {
			errs = append(errs, fmt.Errorf("%s: %d documents read, docs/ lists %d", in.Path, len(inDocs), len(docs)))
			continue
		}
		var want []formats.Doc
		for i, d := range inDocs {
			if _, dup := jf.dups[docs[i].Doc]; dup {
				dropped++
				continue
			}
			want = append(want, d)
		}
		var got []formats.Doc
		for _, o := range outs {
			kind, err := formats.DetectKind(o)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, readDocs(t, jf, o, kind, "")...)
		}
		if err := sameDocs(got, want, in.Path); err != nil {
			errs = append(errs, err)
		}
		// Bytes: lines, records or rows.
		var err error
		switch in.Kind {
		case formats.KindJSONL:
			err = checkLines(t, in, outs, jf.droppedOffsets(in.Path))
		case formats.KindWARC, formats.KindWET:
			err = checkWARC(t, jf, in, outs, fs.Copy)
		case formats.KindParquet:
			err = checkRows(t, in.Path, outs, jf.droppedOffsets(in.Path), 0)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if dropped != int64(len(jf.dups)) || sum.Dropped != dropped {
		errs = append(errs, fmt.Errorf("%d documents dropped (kept.json: %d), duplicates.parquet lists %d", dropped, sum.Dropped, len(jf.dups)))
	}
	return errors.Join(errs...)
}

// readDocs reads the documents of a file with pkg/formats, as the job did.
func readDocs(t *testing.T, jf *jobFacts, path string, kind formats.Kind, comp string) []formats.Doc {
	t.Helper()
	var docs []formats.Doc
	o := formats.Options{IDField: jf.man.Params.IDField, TextField: jf.man.Params.TextField, MaxDocBytes: jf.man.Params.MaxDocBytes}
	err := formats.Read(context.Background(), formats.Piece{Path: path, Kind: kind, End: -1, StartLine: 1, Compression: comp}, o,
		func(d formats.Doc) error {
			d.Text = slices.Clone(d.Text)
			docs = append(docs, d)
			return nil
		}, func(formats.Reject) error { return nil })
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return docs
}

// sameDocs compares documents by id, URL and text. An id made of the file
// name and line (a JSONL line without one) names another file in the
// output: such ids are not compared.
func sameDocs(got, want []formats.Doc, input string) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d documents in the outputs, want %d (input minus duplicates)", input, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		generated := strings.HasPrefix(w.ID, input+":")
		if !generated && g.ID != w.ID || g.URL != w.URL || !bytes.Equal(g.Text, w.Text) {
			return fmt.Errorf("%s: output document %d is %q (%d text bytes), want %q (%d text bytes)", input, i, g.ID, len(g.Text), w.ID, len(w.Text))
		}
	}
	return nil
}

// decompressed reads a whole file, decompressed by its name or by comp.
func decompressed(t *testing.T, path, comp string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case comp == "gzip" || comp == "" && strings.HasSuffix(path, ".gz"):
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		data, err = io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	case comp == "zstd" || comp == "" && strings.HasSuffix(path, ".zst"):
		zr, err := zstd.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		defer zr.Close()
		data, err = io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return data
}

// concat is the decompressed outputs one after the other.
func concat(t *testing.T, outs []string) []byte {
	var all []byte
	for _, o := range outs {
		all = append(all, decompressed(t, o, "")...)
	}
	return all
}

// piece is a line or WARC record of a decompressed file.
type piece struct {
	off  int64
	data []byte
}

// lines cuts data into lines, each with its '\n'.
func lines(data []byte) []piece {
	var out []piece
	var off int64
	for len(data) > 0 {
		n := bytes.IndexByte(data, '\n') + 1
		if n == 0 {
			n = len(data)
		}
		out = append(out, piece{off, data[:n]})
		off += int64(n)
		data = data[n:]
	}
	return out
}

// without returns the pieces whose offsets are not in drop, joined.
func without(ps []piece, drop map[int64]bool) ([]byte, int) {
	var out []byte
	n := 0
	for _, p := range ps {
		if drop[p.off] {
			n++
			continue
		}
		out = append(out, p.data...)
	}
	return out, n
}

// checkLines checks that the outputs of a JSONL input hold its lines but
// those at drop, byte for byte.
func checkLines(t *testing.T, in job.Input, outs []string, drop map[int64]bool) error {
	want, n := without(lines(decompressed(t, in.Path, in.Compression)), drop)
	if n != len(drop) {
		return fmt.Errorf("%s: %d of the %d dropped documents start a line", in.Path, n, len(drop))
	}
	if got := concat(t, outs); !bytes.Equal(got, want) {
		return fmt.Errorf("%s: the outputs hold %d bytes of lines, not the input's %d bytes without its duplicates' lines", in.Path, len(got), len(want))
	}
	return nil
}

// warcRecords cuts a decompressed WARC file into records: header, block
// (Content-Length bytes) and the line ends after it. It expects well
// framed records, as the test inputs have.
func warcRecords(t *testing.T, data []byte) []piece {
	t.Helper()
	var out []piece
	var off int64
	for len(data) > 0 {
		end := bytes.Index(data, []byte("\r\n\r\n"))
		if !bytes.HasPrefix(data, []byte("WARC/")) || end < 0 {
			t.Fatalf("offset %d: no WARC record header", off)
		}
		var length int
		for _, l := range strings.Split(string(data[:end]), "\r\n") {
			if v, ok := strings.CutPrefix(strings.ToLower(l), "content-length:"); ok {
				length, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		n := end + 4 + length
		for n < len(data) && (data[n] == '\r' || data[n] == '\n') {
			n++
		}
		out = append(out, piece{off, data[:n]})
		off += int64(n)
		data = data[n:]
	}
	return out
}

// checkWARC checks that the outputs of a WARC or WET input hold its records
// but those of the duplicates, byte for byte, each a gzip member of its
// own; with copy "members", the members are the input's compressed bytes
// unchanged.
func checkWARC(t *testing.T, jf *jobFacts, in job.Input, outs []string, copy string) error {
	recs := warcRecords(t, decompressed(t, in.Path, in.Compression))
	drop := jf.droppedOffsets(in.Path)
	want, n := without(recs, drop)
	if n != len(drop) {
		return fmt.Errorf("%s: %d of the %d dropped documents start a record", in.Path, n, len(drop))
	}
	if got := concat(t, outs); !bytes.Equal(got, want) {
		return fmt.Errorf("%s: the outputs hold %d bytes of records, not the input's %d bytes without its duplicates' records", in.Path, len(got), len(want))
	}
	var members [][]byte
	for _, o := range outs {
		members = append(members, gzipMembers(t, o)...)
	}
	kept := 0
	for _, r := range recs {
		if drop[r.off] {
			continue
		}
		if kept >= len(members) || !bytes.Equal(members[kept], r.data) {
			return fmt.Errorf("%s: the record at offset %d is not gzip member %d of the outputs", in.Path, r.off, kept)
		}
		kept++
	}
	if copy != "members" {
		return nil
	}
	// Compressed bytes: the input's without the dropped members.
	data, err := os.ReadFile(in.Path)
	if err != nil {
		t.Fatal(err)
	}
	var wantZ []byte
	pos := int64(0)
	for _, d := range jf.dropped(in.Path) {
		wantZ = append(wantZ, data[pos:*d.CompressedOffset]...)
		pos = *d.CompressedOffset + *d.CompressedLength
	}
	wantZ = append(wantZ, data[pos:]...)
	var gotZ []byte
	for _, o := range outs {
		b, err := os.ReadFile(o)
		if err != nil {
			t.Fatal(err)
		}
		gotZ = append(gotZ, b...)
	}
	if !bytes.Equal(gotZ, wantZ) {
		return fmt.Errorf("%s: the outputs are not the input's compressed bytes without the dropped members", in.Path)
	}
	return nil
}

// gzipMembers returns what each gzip member of a file decompresses to.
func gzipMembers(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(bytes.NewReader(data))
	var out [][]byte
	for {
		if _, err := br.Peek(1); err == io.EOF {
			return out
		}
		zr, err := gzip.NewReader(br)
		if err != nil {
			t.Fatalf("%s: member %d: %v", path, len(out), err)
		}
		zr.Multistream(false)
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s: member %d: %v", path, len(out), err)
		}
		out = append(out, b)
	}
}

// parquetRows reads every row of a Parquet file, and its schema.
func parquetRows(t *testing.T, path string) ([]parquet.Row, *parquet.Schema) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	r := parquet.NewReader(pf)
	defer r.Close()
	var rows []parquet.Row
	buf := make([]parquet.Row, 64)
	for {
		n, err := r.ReadRows(buf)
		for _, row := range buf[:n] {
			rows = append(rows, row.Clone())
		}
		if err == io.EOF {
			return rows, pf.Schema()
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
}

// checkRows checks that the outputs of a Parquet input hold its rows but
// those at drop (row indexes), equal in every column, under the input's
// schema plus extra columns (the annotation's; their values are not
// compared here).
func checkRows(t *testing.T, input string, outs []string, drop map[int64]bool, extra int) error {
	in, schema := parquetRows(t, input)
	var want []parquet.Row
	for i, r := range in {
		if !drop[int64(i)] {
			want = append(want, r)
		}
	}
	var got []parquet.Row
	for _, o := range outs {
		rows, s := parquetRows(t, o)
		if extra == 0 && s.String() != schema.String() {
			return fmt.Errorf("%s: schema\n%s\nnot the input's\n%s", o, s, schema)
		}
		got = append(got, rows...)
	}
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d rows in the outputs, want %d (input minus duplicates)", input, len(got), len(want))
	}
	base := len(schema.Columns())
	for i := range got {
		g := got[i]
		if extra > 0 {
			g = slices.DeleteFunc(slices.Clone(g), func(v parquet.Value) bool { return v.Column() >= base })
		}
		if !g.Equal(want[i]) {
			return fmt.Errorf("%s: output row %d differs from the input's", input, i)
		}
	}
	return nil
}
