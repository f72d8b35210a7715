package kept

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/storage"
)

// The columns --annotate adds to a Parquet input's, after them, in this
// order; all optional (null for a row that is not a document).
var annotationColumns = []struct {
	name string
	node parquet.Node
}{
	{"neardup_doc", parquet.Int(64)},
	{"neardup_cluster", parquet.Int(64)},
	{"neardup_cluster_size", parquet.Int(32)},
	{"neardup_keep", parquet.Leaf(parquet.BooleanType)},
	{"neardup_best_match_id", parquet.String()},
	{"neardup_best_similarity", parquet.Leaf(parquet.DoubleType)},
}

// parquetRowGroup bounds the rows an output file's writer holds in memory:
// a few thousand rows of text, tens of MB.
const parquetRowGroup = 8 << 10

// parquet copies the rows of a Parquet file, every column, except those of
// the documents dropped: as Parquet with the input's schema (and, when
// annotating, the annotationColumns after its own), or with FormatJSONL
// as JSON lines.
func (f *fileJob) parquet(file storage.File) (err error) {
	defer func() {
		if p := recover(); p != nil { // parquet-go may panic on a corrupt file
			err = fmt.Errorf("%s: parquet reader failed: %v", f.in.Path, p)
		}
	}()
	pf, err := parquet.OpenFile(file, file.Size())
	if err != nil {
		return fmt.Errorf("%s: not a readable parquet file: %w", f.in.Path, err)
	}
	var sink rowSink
	if f.w.format == FormatJSONL {
		sink = newJSONSink(f, pf.Schema())
	} else {
		sink = newParquetSink(f, pf.Schema())
	}
	buf := make([]parquet.Row, 256)
	var row int64
	for g, rg := range pf.RowGroups() {
		rows := rg.Rows()
		err := f.rowGroup(rows, buf, &row, sink)
		rows.Close()
		if err != nil {
			return fmt.Errorf("%s: row group %d: %w", f.in.Path, g, err)
		}
	}
	return nil
}

// rowGroup copies the rows of one row group to sink; row counts the rows
// of the file.
func (f *fileJob) rowGroup(rows parquet.Rows, buf []parquet.Row, row *int64, sink rowSink) error {
	for {
		if err := f.ctx.Err(); err != nil {
			return fmt.Errorf("row %d: %w", *row, err)
		}
		n, rerr := rows.ReadRows(buf)
		for _, r := range buf[:n] {
			d, isDoc, err := f.docs.at(*row)
			*row++
			write := true
			if err == nil && isDoc {
				write, err = f.write(d)
			} else if err == nil {
				err = f.out.ensure()
			}
			if err == nil && write {
				var an *Annotation
				if isDoc && f.w.ann != nil {
					an = &f.an
				}
				err = sink.add(r, an)
			}
			if err != nil {
				return err
			}
		}
		// The rows are buf's, which the next read overwrites.
		if err := sink.flush(); err != nil {
			return err
		}
		if errors.Is(rerr, io.EOF) {
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("row %d: %w", *row, rerr)
		}
	}
}

// appendAnnotation appends to r, a row of a file whose schema has base
// leaf columns, the values of the annotation columns: an's, or nulls for
// a row that is not a document (an nil).
func appendAnnotation(r parquet.Row, base int, an *Annotation) parquet.Row {
	vals := make([]parquet.Value, len(annotationColumns))
	if an != nil {
		vals[0] = parquet.ValueOf(an.Doc)
		vals[1] = parquet.ValueOf(an.Cluster)
		vals[2] = parquet.ValueOf(an.ClusterSize)
		vals[3] = parquet.ValueOf(an.Keep)
		if an.BestMatchID != nil {
			vals[4] = parquet.ValueOf(*an.BestMatchID)
			vals[5] = parquet.ValueOf(*an.BestSimilarity)
		}
	}
	r = slices.Clone(r)
	for i, v := range vals {
		def := 1
		if v.IsNull() {
			def = 0
		}
		r = append(r, v.Level(0, def, base+i))
	}
	return r
}

// annotatedSchema is schema with the annotation columns after its own.
func annotatedSchema(schema *parquet.Schema) *parquet.Schema {
	g := appendedGroup{Node: schema}
	for _, c := range annotationColumns {
		g.extra = append(g.extra, namedField{Node: parquet.Optional(c.node), name: c.name})
	}
	return parquet.NewSchema(schema.Name(), g)
}

// appendedGroup is a group node with more fields after its own, in order
// (parquet.Group sorts its fields by name).
type appendedGroup struct {
	parquet.Node
	extra []parquet.Field
}

func (g appendedGroup) Fields() []parquet.Field {
	return append(slices.Clone(g.Node.Fields()), g.extra...)
}

// namedField is a node with a name, a field of appendedGroup; rows are
// written as parquet.Row, never from Go values.
type namedField struct {
	parquet.Node
	name string
}

func (f namedField) Name() string { return f.name }

func (f namedField) Value(reflect.Value) reflect.Value { return reflect.Value{} }
