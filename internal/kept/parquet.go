package kept

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/buildinfo"
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

// parquetRowGroup bounds the rows an output file's writer holds.
const parquetRowGroup = 64 << 10

// parquet copies the rows of a Parquet file, with the input's schema and
// every column, except those of the documents dropped; annotating, every
// row gets the annotationColumns too.
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
	schema := pf.Schema()
	base := len(schema.Columns())
	if f.w.ann != nil {
		schema = annotatedSchema(schema)
	}
	var pw *parquet.Writer
	f.out.begin = func(w io.Writer) error {
		pw = parquet.NewWriter(w, schema, parquet.Compression(&parquet.Zstd),
			parquet.MaxRowsPerRowGroup(parquetRowGroup),
			&parquet.WriterConfig{CreatedBy: buildinfo.Read().CreatedBy()})
		return nil
	}
	f.out.end = func() error { return pw.Close() }
	buf := make([]parquet.Row, 256)
	var row int64
	for g, rg := range pf.RowGroups() {
		rows := rg.Rows()
		for {
			if err := f.ctx.Err(); err != nil {
				rows.Close()
				return fmt.Errorf("%s: row %d: %w", f.in.Path, row, err)
			}
			n, rerr := rows.ReadRows(buf)
			out := buf[:0:0]
			flush := func() error {
				if len(out) == 0 {
					return nil
				}
				_, err := pw.WriteRows(out)
				out = out[:0]
				if err != nil {
					return fmt.Errorf("%s: %s: %w", f.in.Path, f.out.name, err)
				}
				return nil
			}
			for _, r := range buf[:n] {
				d, isDoc, err := f.docs.at(row)
				row++
				if err == nil && isDoc && f.out.full() {
					err = flush() // the rows before d go to the file d does not
				}
				write := true
				if err == nil && isDoc {
					write, err = f.write(d)
				} else if err == nil {
					err = f.out.ensure()
				}
				if err != nil {
					rows.Close()
					return err
				}
				if !write {
					continue
				}
				if f.w.ann != nil {
					r = appendAnnotation(r, base, isDoc, &f.an)
				}
				out = append(out, r)
			}
			if err := flush(); err != nil {
				rows.Close()
				return err
			}
			if errors.Is(rerr, io.EOF) {
				break
			}
			if rerr != nil {
				rows.Close()
				return fmt.Errorf("%s: row group %d, row %d: %w", f.in.Path, g, row, rerr)
			}
		}
		rows.Close()
	}
	return nil
}

// appendAnnotation appends to r, a row of a file whose schema has base
// leaf columns, the values of the annotation columns: an's, or nulls for
// a row that is not a document.
func appendAnnotation(r parquet.Row, base int, isDoc bool, an *Annotation) parquet.Row {
	vals := make([]parquet.Value, len(annotationColumns))
	if isDoc {
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
