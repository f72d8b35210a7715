package kept_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/pkg/formats"
	"github.com/parquet-go/parquet-go"
)

// checkConverted checks a corpus written with format jsonl or parquet:
// every input's outputs are of that format, its documents read back from its outputs are the input's
// minus the duplicates (by id, URL and text); a JSONL input written as
// Parquet has a column for each member and a row for each kept document
// (checkColumns); a Parquet input written as JSON lines has each row but
// the duplicates' as a JSON object of its columns (tableRow's).
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
		for i, d := range inDocs {
			if _, dup := jf.dups[docs[i].Doc]; !dup {
				want = append(want, d)
			}
		}
		var got []formats.Doc
		for _, o := range outs {
			kind, _ := formats.DetectKind(o)
			if string(kind) != format {
				t.Errorf("%s (%s) written as %s, not %s", in.Path, in.Kind, o, format)
			}
			got = append(got, readDocs(t, jf, o, kind, "")...)
		}
		if err := sameDocs(got, want, in.Path); err != nil {
			t.Error(err)
		}
		switch {
		case in.Kind == formats.KindJSONL && format == kept.FormatParquet:
			var offsets []int64
			for i, d := range inDocs {
				if _, dup := jf.dups[docs[i].Doc]; !dup {
					offsets = append(offsets, d.Offset)
				}
			}
			if err := checkColumns(t, in, outs, offsets, jf.man.Params.TextField, 0); err != nil {
				t.Error(err)
			}
		case in.Kind != formats.KindParquet && format == kept.FormatParquet:
			// A WARC, WET or text file's documents: id, url, text.
			for _, o := range outs {
				_, schema := parquetRows(t, o)
				var names []string
				for _, f := range schema.Fields() {
					names = append(names, f.Name())
				}
				if !slices.Equal(names, []string{"id", "url", "text"}) {
					t.Errorf("%s: columns %q, want id, url, text", o, names)
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

// member is a top-level member of a JSON object: its name and its value
// as it is in the line.
type member struct {
	name string
	raw  json.RawMessage
}

// objectMembers returns the members of line, in order, and whether it is
// a JSON object.
func objectMembers(line []byte) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var ms []member
	for dec.More() {
		tok, err := dec.Token()
		name, ok := tok.(string)
		var raw json.RawMessage
		if err != nil || !ok || dec.Decode(&raw) != nil {
			return nil, false
		}
		ms = append(ms, member{name, raw})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, false
	}
	return ms, true
}

// jsonKind is the kind of a raw JSON value, as the column types of a
// JSONL file written as Parquet tell them apart: "" for null.
func jsonKind(raw json.RawMessage) string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return "other"
	}
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return "string"
	case bool:
		return "bool"
	case json.Number:
		if _, err := strconv.ParseInt(v.String(), 10, 64); err == nil {
			return "int"
		}
		if x, err := v.Float64(); err == nil && !math.IsInf(x, 0) {
			return "float"
		}
	}
	return "other"
}

// checkColumns checks the Parquet outputs of a JSONL input: a column for
// each member of the input's JSON objects, in the order they first
// appear, of the type docs/usage.md gives it (the text field's a string),
// and a row for each kept document (at offsets, in order) holding its
// members' values, null where it has none; extra columns after them (the
// annotation's) are not looked at.
func checkColumns(t *testing.T, in job.Input, outs []string, offsets []int64, textField string, extra int) error {
	t.Helper()
	type col struct {
		name  string
		kinds map[string]bool
	}
	var cols []col
	index := map[string]int{}
	objects := map[int64][]member{}
	for _, l := range lines(decompressed(t, in.Path, in.Compression)) {
		ms, ok := objectMembers(l.data)
		if !ok {
			continue
		}
		objects[l.off] = ms
		for _, m := range ms {
			i, seen := index[m.name]
			if !seen {
				i = len(cols)
				index[m.name] = i
				cols = append(cols, col{m.name, map[string]bool{}})
			}
			if k := jsonKind(m.raw); k != "" {
				cols[i].kinds[k] = true
			}
		}
	}
	types := make([]parquet.Kind, len(cols))
	for i, c := range cols {
		switch {
		case c.name == textField, len(c.kinds) == 0, len(c.kinds) == 1 && c.kinds["string"]:
			types[i] = parquet.ByteArray
		case len(c.kinds) == 1 && c.kinds["bool"]:
			types[i] = parquet.Boolean
		case len(c.kinds) == 1 && c.kinds["int"]:
			types[i] = parquet.Int64
		case !c.kinds["string"] && !c.kinds["bool"] && !c.kinds["other"]:
			types[i] = parquet.Double
		default:
			types[i] = -1 // the JSON text, a string
		}
	}
	var rows []parquet.Row
	for _, o := range outs {
		got, schema := parquetRows(t, o)
		fields := schema.Fields()
		if len(fields) != len(cols)+extra {
			return fmt.Errorf("%s: %d columns, want %d", o, len(fields), len(cols)+extra)
		}
		for i, c := range cols {
			kind := types[i]
			if kind < 0 {
				kind = parquet.ByteArray
			}
			if fields[i].Name() != c.name || fields[i].Type().Kind() != kind || !fields[i].Optional() {
				return fmt.Errorf("%s: column %d is %s %v, want %s %v, optional", o, i, fields[i].Name(), fields[i].Type().Kind(), c.name, kind)
			}
		}
		rows = append(rows, got...)
	}
	if len(rows) != len(offsets) {
		return fmt.Errorf("%s: %d rows, want %d (its documents minus the duplicates)", in.Path, len(rows), len(offsets))
	}
	for r, off := range offsets {
		want := make([]json.RawMessage, len(cols))
		for _, m := range objects[off] {
			want[index[m.name]] = m.raw
		}
		for i := range cols {
			v := rows[r][i]
			if err := sameValue(v, want[i], types[i]); err != nil {
				return fmt.Errorf("%s: row %d (offset %d), column %s: %w", in.Path, r, off, cols[i].name, err)
			}
		}
	}
	return nil
}

// sameValue checks a Parquet value against the raw JSON value of its
// member, in a column of the given kind (-1: JSON text).
func sameValue(v parquet.Value, raw json.RawMessage, kind parquet.Kind) error {
	if raw == nil || jsonKind(raw) == "" || kind == parquet.ByteArray && jsonKind(raw) != "string" {
		if !v.IsNull() {
			return fmt.Errorf("%v, want null", v)
		}
		return nil
	}
	var want any
	switch kind {
	case parquet.ByteArray:
		var s string
		json.Unmarshal(raw, &s)
		want = s
	case parquet.Boolean:
		want = string(raw) == "true"
	case parquet.Int64:
		want, _ = strconv.ParseInt(string(raw), 10, 64)
	case parquet.Double:
		want, _ = strconv.ParseFloat(string(raw), 64)
	default:
		want = string(raw)
	}
	var got any
	switch {
	case v.IsNull():
		return fmt.Errorf("null, want %v", want)
	case kind == parquet.Boolean:
		got = v.Boolean()
	case kind == parquet.Int64:
		got = v.Int64()
	case kind == parquet.Double:
		got = v.Double()
	default:
		got = string(v.ByteArray())
	}
	if got != want {
		return fmt.Errorf("%.60v, want %.60v", got, want)
	}
	return nil
}
