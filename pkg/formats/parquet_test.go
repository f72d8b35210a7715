package formats

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// corpusRow is the layout of the test parquet files: the text column is
// optional so that nulls can be written, and the other columns are read
// around.
type corpusRow struct {
	Lang string  `parquet:"lang"`
	ID   string  `parquet:"id"`
	Text *string `parquet:"text,optional"`
	URL  string  `parquet:"url"`
	Size int64   `parquet:"size"`
}

type numericIDRow struct {
	DocID   int64  `parquet:"doc_id"`
	Content string `parquet:"content,dict"`
}

type noTextRow struct {
	ID   string `parquet:"id"`
	Body string `parquet:"body"`
}

// writeParquet writes rows to a parquet file, rowsPerGroup rows per row
// group, small pages so that values cross page boundaries.
func writeParquet[T any](t *testing.T, path string, rows []T, rowsPerGroup int) {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf, parquet.PageBufferSize(256))
	for len(rows) > 0 {
		n := min(rowsPerGroup, len(rows))
		if _, err := w.Write(rows[:n]); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		rows = rows[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadParquet(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/corpus.parquet"
	var rows []corpusRow
	var want []docSummary
	var wantRejects []Reject
	for i := 0; i < 300; i++ {
		text := fmt.Sprintf("document %d %s", i, strings.Repeat("ab ", i%13))
		row := corpusRow{Lang: "en", ID: fmt.Sprintf("doc-%d", i), Text: &text, URL: fmt.Sprintf("https://p.example/%d", i), Size: int64(i)}
		switch {
		case i%10 == 3:
			row.Text = nil
			wantRejects = append(wantRejects, Reject{path, int64(i), 0, `null text in column "text"`, 0, 0})
		case i%10 == 7:
			bad := "bad \xff"
			row.Text = &bad
			wantRejects = append(wantRejects, Reject{path, int64(i), 0, "invalid UTF-8 in text at byte 4", 0, 0})
		case i == 50:
			big := strings.Repeat("x", 101)
			row.Text = &big
			wantRejects = append(wantRejects, Reject{path, int64(i), 0, "document of 101 bytes exceeds --max-doc-bytes 100", 0, 0})
		default:
			want = append(want, docSummary{row.ID, row.URL, text, int64(i), 0})
		}
		rows = append(rows, row)
	}
	writeParquet(t, path, rows, 120) // several row groups and pages
	res := readFile(t, path, Options{MaxDocBytes: 100})
	if res.err != nil {
		t.Fatal(res.err)
	}
	if got := summarize(res.docs); !reflect.DeepEqual(got, want) {
		t.Errorf("docs\n got %+v\nwant %+v", got, want)
	}
	if !reflect.DeepEqual(res.rejects, wantRejects) {
		t.Errorf("rejects\n got %+v\nwant %+v", res.rejects, wantRejects)
	}
}

func TestReadParquetOptions(t *testing.T) {
	dir := t.TempDir()
	numeric := dir + "/numeric.parquet"
	writeParquet(t, numeric, []numericIDRow{{7, "seven"}, {-1, "minus one"}, {7, "seven"}}, 2)
	res := readFile(t, numeric, Options{IDField: "doc_id", TextField: "content"})
	want := []docSummary{{"7", "", "seven", 0, 0}, {"-1", "", "minus one", 1, 0}, {"7", "", "seven", 2, 0}}
	if res.err != nil || !reflect.DeepEqual(summarize(res.docs), want) {
		t.Errorf("numeric ids: %+v, %v; want %+v", summarize(res.docs), res.err, want)
	}

	// Without an id column, rows are named by file and row index.
	res = readFile(t, numeric, Options{TextField: "content"})
	if res.err != nil || len(res.docs) != 3 || res.docs[1].ID != numeric+":1" {
		t.Errorf("no id column: %+v, %v", summarize(res.docs), res.err)
	}

	noText := dir + "/notext.parquet"
	writeParquet(t, noText, []noTextRow{{"a", "b"}}, 10)
	res = readFile(t, noText, Options{})
	if res.err == nil || !strings.Contains(res.err.Error(), noText) || !strings.Contains(res.err.Error(), `no text column "text" (columns: id, body)`) {
		t.Errorf("missing text column: %v", res.err)
	}
	res = readFile(t, noText, Options{TextField: "id", IDField: "body"})
	if res.err != nil || len(res.docs) != 1 || res.docs[0].ID != "b" || string(res.docs[0].Text) != "a" {
		t.Errorf("renamed fields: %+v, %v", summarize(res.docs), res.err)
	}
	res = readFile(t, numeric, Options{TextField: "doc_id"})
	if res.err == nil || !strings.Contains(res.err.Error(), `column "doc_id" has type INT64`) {
		t.Errorf("non-string text column: %v", res.err)
	}
}

func TestReadParquetCorrupt(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/c.parquet"
	var rows []corpusRow
	for i := 0; i < 50; i++ {
		text := strings.Repeat("text ", i)
		rows = append(rows, corpusRow{ID: fmt.Sprint(i), Text: &text})
	}
	writeParquet(t, path, rows, 50)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"truncated", data[:len(data)/2]},
		{"empty", nil},
		{"garbage", []byte("PAR1 not really a parquet file PAR1")},
	} {
		p := writeFile(t, dir, tt.name+".parquet", tt.data)
		res := readFile(t, p, Options{})
		if res.err == nil || !strings.Contains(res.err.Error(), p) {
			t.Errorf("%s: err = %v", tt.name, res.err)
		}
	}
	// Damage in the pages: every row is a doc or accounted for by a reject,
	// a damaged row group's by the rows and bytes it lost.
	for i := 4; i < len(data)/2; i += 97 {
		bad := bytes.Clone(data)
		bad[i] ^= 0x5a
		p := writeFile(t, dir, "damaged.parquet", bad)
		res := readFile(t, p, Options{})
		if res.err != nil {
			continue
		}
		n := int64(len(res.docs))
		for _, r := range res.rejects {
			if strings.HasPrefix(r.Reason, "corrupt parquet row group") {
				// The reject covers the rest of the group, and says so.
				if r.Rows <= 0 || r.Skipped <= 0 {
					t.Errorf("byte %d damaged: reject %+v counts no rows or bytes", i, r)
				}
				n += r.Rows
			} else {
				n++
			}
		}
		if n != 50 {
			t.Errorf("byte %d damaged: %d docs and rejects %+v account for %d rows", i, len(res.docs), res.rejects, n)
		}
	}
}
