package kept

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// A JSONL file written as Parquet (FormatParquet) has a column for each
// top-level member of its lines that are JSON objects, in the order the
// members first appear in the file, each optional (null where a line has
// not the member, or has it null). A column's type is that of its values
// (the non-null ones, in every such line of the file):
//
//	all strings                         string
//	all true or false                   boolean
//	all integers that fit in 64 bits    int64
//	all numbers, some not such integers double
//	objects, arrays, or values of more
//	than one of these kinds             string: each value's JSON text as
//	                                    it is in the line
//	none (only nulls)                   string
//
// The text field (--text-field) is always a string column: it holds each
// document's text once, decoded. A line that is no document of the job
// (rejected, blank) has no row. This takes two passes over the file: the
// columns are found first.

// maxColumns bounds the columns of a JSONL file written as Parquet.
const maxColumns = 4096

// The kinds of a JSON value, as bits: a column's kinds are its values'.
const (
	kindString = 1 << iota
	kindBool
	kindInt
	kindFloat
	kindOther // an object, an array, a number no float64 holds
)

// The types of a column.
const (
	colString = iota
	colBool
	colInt
	colDouble
	colJSON
)

// column is a column of a JSONL file written as Parquet.
type column struct {
	name  string
	kinds int
	typ   int
}

// table is the columns of a JSONL file written as Parquet.
type table struct {
	cols   []column
	index  map[string]int
	schema *parquet.Schema
	row    parquet.Row   // the values of the row being made, by column
	raw    [][]byte      // the raw values of the line, by column
	buf    bytes.Reader  // the line being read
	dec    *json.Decoder // reads buf
}

// kindOf is the kind of the raw JSON value v; 0 for null.
func kindOf(v []byte) int {
	switch v[0] {
	case '"':
		return kindString
	case 't', 'f':
		return kindBool
	case 'n':
		return 0
	case '{', '[':
		return kindOther
	}
	if _, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		return kindInt
	}
	if x, err := strconv.ParseFloat(string(v), 64); err == nil && !math.IsInf(x, 0) {
		return kindFloat
	}
	return kindOther
}

// typeOf is the type of a column of values of kinds.
func typeOf(kinds int) int {
	switch kinds {
	case 0, kindString:
		return colString
	case kindBool:
		return colBool
	case kindInt:
		return colInt
	case kindFloat, kindInt | kindFloat:
		return colDouble
	}
	return colJSON
}

// members calls fn with the name and raw value of each top-level member
// of line, in order, if line is a JSON object; ok is false when it is not
// (not JSON, or another value).
func (t *table) members(line []byte, fn func(name string, raw []byte) error) (ok bool, err error) {
	line = bytes.TrimPrefix(bytes.TrimRight(line, " \t\r\n"), []byte("\xef\xbb\xbf"))
	t.buf.Reset(line)
	t.dec = json.NewDecoder(&t.buf)
	if tok, err := t.dec.Token(); err != nil || tok != json.Delim('{') {
		return false, nil
	}
	for t.dec.More() {
		tok, err := t.dec.Token()
		name, isName := tok.(string)
		if err != nil || !isName {
			return false, nil
		}
		var raw json.RawMessage
		if err := t.dec.Decode(&raw); err != nil {
			return false, nil
		}
		if err := fn(name, raw); err != nil {
			return true, err
		}
	}
	if tok, err := t.dec.Token(); err != nil || tok != json.Delim('}') {
		return false, nil
	}
	if _, err := t.dec.Token(); !errors.Is(err, io.EOF) {
		return false, nil
	}
	return true, nil
}

// findColumns reads the lines of a JSONL file and returns its table: a
// column for each member of its objects, typed by its values; textField's
// column is a string one. Annotating, a member may not be named as an
// annotation column.
func (f *fileJob) findColumns(file storage.File, textField string) (*table, error) {
	src, done, err := decompress(file, compressionOf(f.in), f.in.Path)
	if err != nil {
		return nil, err
	}
	defer done()
	t := &table{index: map[string]int{}}
	br := bufio.NewReaderSize(src, 256<<10)
	var (
		off  int64
		line []byte
	)
	for n := 1; ; n++ {
		if n%checkEvery == 0 {
			if err := f.ctx.Err(); err != nil {
				return nil, fmt.Errorf("%s: offset %d: %w", f.in.Path, off, err)
			}
		}
		line, err = readLine(br, line[:0])
		if len(line) > 0 {
			if _, merr := t.members(line, func(name string, raw []byte) error {
				i, ok := t.index[name]
				if !ok {
					if len(t.cols) == maxColumns {
						return fmt.Errorf("more than %d different members: write it as jsonl", maxColumns)
					}
					if f.w.ann != nil && isAnnotationColumn(name) {
						return fmt.Errorf("a member %q, which --annotate adds as a column", name)
					}
					i = len(t.cols)
					t.index[name] = i
					t.cols = append(t.cols, column{name: name})
				}
				t.cols[i].kinds |= kindOf(raw)
				return nil
			}); merr != nil {
				return nil, fmt.Errorf("%s: offset %d: %w", f.in.Path, off, merr)
			}
		}
		off += int64(len(line))
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: offset %d: %w", f.in.Path, off, err)
		}
	}
	for i := range t.cols {
		c := &t.cols[i]
		c.typ = typeOf(c.kinds)
		if c.name == textField {
			c.typ = colString
		}
	}
	t.build()
	return t, nil
}

// build makes the schema of t's columns, in their order, each optional,
// of its type.
func (t *table) build() {
	g := appendedGroup{Node: parquet.Group{}}
	for _, c := range t.cols {
		node := parquet.String()
		switch c.typ {
		case colBool:
			node = parquet.Leaf(parquet.BooleanType)
		case colInt:
			node = parquet.Int(64)
		case colDouble:
			node = parquet.Leaf(parquet.DoubleType)
		}
		g.extra = append(g.extra, namedField{Node: parquet.Optional(node), name: c.name})
	}
	t.schema = parquet.NewSchema("document", g)
	t.raw = make([][]byte, len(t.cols))
}

// readLine appends the next line of br, its end of line included, to dst.
func readLine(br *bufio.Reader, dst []byte) ([]byte, error) {
	for {
		b, err := br.ReadSlice('\n')
		dst = append(dst, b...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return dst, err
		}
	}
}

// isAnnotationColumn tells whether --annotate adds a column of that name.
func isAnnotationColumn(name string) bool {
	for _, c := range annotationColumns {
		if c.name == name {
			return true
		}
	}
	return false
}

// makeRow returns the row of t of a document's line: each column's value,
// converted to its type, or null. It fails when the line is not what the
// first pass found (the file changed since).
func (t *table) makeRow(line []byte) (parquet.Row, error) {
	clear(t.raw)
	ok, err := t.members(line, func(name string, raw []byte) error {
		i, known := t.index[name]
		if !known {
			return fmt.Errorf("a member %q that the file did not have a moment ago: it has changed", name)
		}
		t.raw[i] = raw // the last of equal names, as encoding/json takes it
		return nil
	})
	if err == nil && !ok {
		err = errors.New("a document's line is not a JSON object")
	}
	if err != nil {
		return nil, err
	}
	row := make(parquet.Row, len(t.cols))
	for i, c := range t.cols {
		v, err := value(c, t.raw[i])
		if err != nil {
			return nil, fmt.Errorf("member %q: %w", c.name, err)
		}
		def := 1
		if v.IsNull() {
			def = 0
		}
		row[i] = v.Level(0, def, i)
	}
	return row, nil
}

// value is the Parquet value of the raw JSON value raw in column c; null
// for a null or missing value, and for a value that is no string in the
// text column (in the line of no document). A value of a kind the first
// pass did not find in the column fails: the file has changed since.
func value(c column, raw []byte) (parquet.Value, error) {
	if raw == nil {
		return parquet.NullValue(), nil
	}
	k := kindOf(raw)
	switch {
	case k == 0:
		return parquet.NullValue(), nil
	case k&c.kinds == 0:
		return parquet.Value{}, fmt.Errorf("%.40s, which the file did not have a moment ago: it has changed", raw)
	}
	switch c.typ {
	case colString:
		if k != kindString {
			return parquet.NullValue(), nil
		}
		// raw is the value's own copy (json.RawMessage): a string without
		// escapes, valid UTF-8, is its bytes between the quotes.
		if body := raw[1 : len(raw)-1]; bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
			return parquet.ByteArrayValue(body), nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return parquet.Value{}, err
		}
		return parquet.ByteArrayValue([]byte(s)), nil
	case colBool:
		return parquet.BooleanValue(raw[0] == 't'), nil
	case colInt:
		n, err := strconv.ParseInt(string(raw), 10, 64)
		return parquet.Int64Value(n), err
	case colDouble:
		x, err := strconv.ParseFloat(string(raw), 64)
		return parquet.DoubleValue(x), err
	}
	return parquet.ByteArrayValue(bytes.Clone(raw)), nil
}

// columns writes the documents of a JSONL file that are kept as Parquet
// rows of its members (see the comment at the top of this file).
func (f *fileJob) columns(file storage.File) error {
	t, err := f.findColumns(file, f.w.params.TextField)
	if err != nil {
		return err
	}
	sink := newParquetSink(f, t.schema)
	var line []byte
	return f.lines(file, func(bool) (bool, error) { return false, nil }, f.write,
		func(frag []byte, _ int64, _ bool) error {
			line = append(line, frag...)
			return nil
		}, func(d records.DocRecord, start int64) error {
			row, err := t.makeRow(line)
			line = line[:0]
			if err == nil {
				err = sink.add(row, f.annotation())
			}
			if err == nil && len(sink.held) >= 1024 {
				err = sink.flush()
			}
			if err != nil {
				return fmt.Errorf("%s: offset %d: document %d (id %q): %w", f.in.Path, start, d.Doc, d.ID, err)
			}
			return nil
		})
}
