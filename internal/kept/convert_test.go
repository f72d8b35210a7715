package kept_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/pkg/formats"
)

// jsonlRecord is the row a JSONL document becomes with FormatParquet.
type jsonlRecord struct {
	ID   string  `parquet:"id"`
	URL  *string `parquet:"url,optional"`
	Text string  `parquet:"text"`
	JSON string  `parquet:"json"`
}

// checkConverted checks a corpus written with format jsonl or parquet:
// every input's documents read back from its outputs are the input's
// minus the duplicates (by id, URL and text); a JSONL input written as
// Parquet has each kept document's line, unchanged, in the json column;
// a Parquet input written as JSON lines has each row but the duplicates'
// as a JSON object of its columns (tableRow's).
func checkConverted(t *testing.T, jobDir, dir, format string) {
	t.Helper()
	jf := readJob(t, jobDir)
	sum := readSummary(t, dir)
	for _, f := range sum.Files {
		in := jf.inputs[f.Input]
		var outs []string
		for _, o := range f.Outputs {
			outs = append(outs, filepath.Join(dir, o))
		}
		inDocs := readDocs(t, jf, in.Path, in.Kind, in.Compression)
		docs := jf.docs[in.Path]
		var want []formats.Doc
		var wantLines []string
		inLines := map[int64][]byte{}
		if in.Kind == formats.KindJSONL {
			for _, l := range lines(decompressed(t, in.Path, in.Compression)) {
				inLines[l.off] = bytes.TrimRight(l.data, "\r\n")
			}
		}
		for i, d := range inDocs {
			if _, dup := jf.dups[docs[i].Doc]; !dup {
				want = append(want, d)
				wantLines = append(wantLines, string(inLines[d.Offset]))
			}
		}
		var got []formats.Doc
		for _, o := range outs {
			kind, _ := formats.DetectKind(o)
			got = append(got, readDocs(t, jf, o, kind, "")...)
		}
		if err := sameDocs(got, want, in.Path); err != nil {
			t.Error(err)
		}
		switch {
		case in.Kind == formats.KindJSONL && format == kept.FormatParquet:
			var rows []jsonlRecord
			for _, o := range outs {
				rows = append(rows, readRows[jsonlRecord](t, o)...)
			}
			for i, r := range rows {
				if i >= len(wantLines) || r.JSON != wantLines[i] {
					t.Errorf("%s: row %d: json column %.80q, want the document's line", in.Path, i, r.JSON)
					break
				}
			}
		case in.Kind == formats.KindParquet && format == kept.FormatJSONL:
			all := readRows[tableRow](t, in.Path)
			drop := jf.droppedOffsets(in.Path)
			var wantRows []string
			for i, r := range all {
				if !drop[int64(i)] {
					if r.Tags == nil {
						r.Tags = []string{} // a null list reads back as an empty one
					}
					b, _ := json.Marshal(r)
					wantRows = append(wantRows, string(b))
				}
			}
			outLines := lines(concat(t, outs))
			if len(outLines) != len(wantRows) {
				t.Fatalf("%s: %d lines, want %d rows", in.Path, len(outLines), len(wantRows))
			}
			for i, l := range outLines {
				var r tableRow
				if err := json.Unmarshal(l.data, &r); err != nil {
					t.Fatalf("%s: line %d: %v", in.Path, i, err)
				}
				if b, _ := json.Marshal(r); string(b) != wantRows[i] {
					t.Errorf("%s: line %d is %s, want %s", in.Path, i, b, wantRows[i])
					break
				}
			}
		}
	}
	if sum.Dropped != int64(len(jf.dups)) {
		t.Errorf("%d documents dropped, duplicates.parquet lists %d", sum.Dropped, len(jf.dups))
	}

}
