package kept

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/buildinfo"
)

// rowSink writes rows of one schema to the output files of an input.
type rowSink interface {
	// add writes r, with an, its annotation, when annotating a
	// document (nil otherwise). The row may be held until flush.
	add(r parquet.Row, an *Annotation) error
	// flush writes the rows held.
	flush() error
}

// parquetSink writes rows as Parquet files of their schema, followed by
// the annotationColumns when annotating.
type parquetSink struct {
	f        *fileJob
	base     int // leaf columns of the rows' schema
	annotate bool
	pw       *parquet.Writer
	held     []parquet.Row
}

// newParquetSink writes the output files of f as Parquet files of schema.
func newParquetSink(f *fileJob, schema *parquet.Schema) *parquetSink {
	s := &parquetSink{f: f, base: len(schema.Columns()), annotate: f.w.ann != nil}
	if s.annotate {
		schema = annotatedSchema(schema)
	}
	f.out.begin = func(w io.Writer) error {
		s.pw = parquet.NewWriter(w, schema, parquet.Compression(&parquet.Zstd),
			parquet.MaxRowsPerRowGroup(parquetRowGroup),
			&parquet.WriterConfig{CreatedBy: buildinfo.Read().CreatedBy()})
		return nil
	}
	// Rows held go to the file they were added to, before it is closed.
	f.out.end = func() error {
		if err := s.flush(); err != nil {
			return err
		}
		return s.pw.Close()
	}
	return s
}

func (s *parquetSink) add(r parquet.Row, an *Annotation) error {
	if s.annotate {
		r = appendAnnotation(r, s.base, an)
	}
	s.held = append(s.held, r)
	return nil
}

func (s *parquetSink) flush() error {
	if len(s.held) == 0 {
		return nil
	}
	_, err := s.pw.WriteRows(s.held)
	clear(s.held)
	s.held = s.held[:0]
	if err != nil {
		return fmt.Errorf("%s: %w", s.f.out.name, err)
	}
	return nil
}

// jsonSink writes rows as JSON objects, one a line, gzipped: each row's
// columns as members (groups as objects, lists as arrays), and when
// annotated a member "neardup" (appendJSON).
type jsonSink struct {
	schema *parquet.Schema
	gz     *gzip.Writer
	buf    bytes.Buffer
	enc    *json.Encoder
}

// newJSONSink writes the output files of f as JSON lines of rows of schema.
func newJSONSink(f *fileJob, schema *parquet.Schema) *jsonSink {
	s := &jsonSink{schema: schema, gz: gzipShards(f.out)}
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false)
	return s
}

func (s *jsonSink) add(r parquet.Row, an *Annotation) error {
	var v any
	if err := s.schema.Reconstruct(&v, r); err != nil {
		return err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("a row read as %T, not an object", v)
	}
	if an != nil {
		m["neardup"] = json.RawMessage(appendJSON(nil, an))
	}
	s.buf.Reset()
	if err := s.enc.Encode(m); err != nil {
		return err
	}
	_, err := s.gz.Write(s.buf.Bytes())
	return err
}

func (s *jsonSink) flush() error { return nil }
