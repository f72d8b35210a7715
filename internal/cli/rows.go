package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"iter"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/neardup/neardup/pkg/pipeline"
)

// rowsSetup registers the flags of `coordinator rows` and returns its
// Prepare: it writes the rows of a dataset of a complete job as JSON
// Lines, one object a row whose members are the dataset's Parquet columns,
// read by pkg/pipeline's readers (so a program without a Parquet reader,
// the Python package, reads what a Go program reads).
func rowsSetup(fs *flag.FlagSet) Prepare {
	columns := fs.Bool("columns", false, "print the dataset's columns (name, type, nullable) as one JSON line instead of its rows; OUT is then not read")
	return func(args []string, out Streams) (Run, error) {
		if len(args) == 0 || len(args) > 2 || (len(args) == 1 && !*columns) {
			return nil, fmt.Errorf("want DATASET OUT (DATASET one of %s), not %d arguments", strings.Join(rowDatasetNames(), ", "), len(args))
		}
		ds, ok := rowDatasets()[args[0]]
		if !ok {
			return nil, fmt.Errorf("dataset %q: want one of %s", args[0], strings.Join(rowDatasetNames(), ", "))
		}
		return func(ctx context.Context) int {
			w := bufio.NewWriterSize(out.Stdout, 1<<16)
			var err error
			if *columns {
				err = json.NewEncoder(w).Encode(ds.columns())
			} else {
				err = ds.write(ctx, w, args[1])
			}
			if ferr := w.Flush(); err == nil {
				err = ferr
			}
			if err != nil {
				fmt.Fprintln(out.Stderr, "coordinator rows:", oneLine(err))
				return 1
			}
			return 0
		}, nil
	}
}

// rowDataset is a dataset `coordinator rows` reads.
type rowDataset struct {
	columns func() []rowColumn
	write   func(ctx context.Context, w io.Writer, out string) error
}

// rowDatasets returns the datasets of pkg/pipeline's readers, by the
// name the command takes.
func rowDatasets() map[string]rowDataset {
	return map[string]rowDataset{
		"pairs":      datasetOf(pipeline.Pairs),
		"clusters":   datasetOf(pipeline.Clusters),
		"duplicates": datasetOf(pipeline.Duplicates),
		"rejects":    datasetOf(pipeline.Rejects),
		"paragraphs": datasetOf(pipeline.Paragraphs),
	}
}

func rowDatasetNames() []string {
	return slices.Sorted(maps.Keys(rowDatasets()))
}

// datasetOf is the dataset that the reader read yields.
func datasetOf[T any](read func(context.Context, string) iter.Seq2[T, error]) rowDataset {
	return rowDataset{
		columns: func() []rowColumn { return columnsOf(reflect.TypeFor[T]()) },
		write: func(ctx context.Context, w io.Writer, out string) error {
			return writeRows(w, read(ctx, out))
		},
	}
}

// rowColumn is a column of a dataset, as `coordinator rows --columns`
// prints it.
type rowColumn struct {
	Name string `json:"name"`
	// Type is int32, int64, double, string or bool.
	Type     string `json:"type"`
	Nullable bool   `json:"nullable"`
}

// columnType returns the Parquet type of a row field's Go kind, or "".
func columnType(k reflect.Kind) string {
	switch k {
	case reflect.Int32:
		return "int32"
	case reflect.Int64:
		return "int64"
	case reflect.Float64:
		return "double"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	}
	return ""
}

// columnsOf returns the columns of the row type t, a struct whose fields
// carry their Parquet names in their parquet tags (a pointer: nullable),
// in the order of its fields, which is the files' order.
func columnsOf(t reflect.Type) []rowColumn {
	cols := make([]rowColumn, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			panic(fmt.Sprintf("rows: %s.%s has no Parquet column name", t, f.Name))
		}
		ft, nullable := f.Type, false
		if ft.Kind() == reflect.Pointer {
			ft, nullable = ft.Elem(), true
		}
		typ := columnType(ft.Kind())
		if typ == "" {
			panic(fmt.Sprintf("rows: %s.%s is a %s, which has no column type here", t, f.Name, ft))
		}
		cols = append(cols, rowColumn{Name: name, Type: typ, Nullable: nullable})
	}
	return cols
}

// jsonRowType returns a struct type with the fields of the row type t
// whose JSON names are its Parquet columns: a value of t converts to it
// (struct types that differ only in their tags), and a nil pointer is
// JSON's null.
func jsonRowType(t reflect.Type) reflect.Type {
	cols := columnsOf(t)
	fields := make([]reflect.StructField, t.NumField())
	for i := range fields {
		f := t.Field(i)
		fields[i] = reflect.StructField{Name: f.Name, Type: f.Type, Tag: reflect.StructTag(`json:"` + cols[i].Name + `"`)}
	}
	return reflect.StructOf(fields)
}

// writeRows writes the rows rows yields on w, one JSON object a line, and
// stops at the first error.
func writeRows[T any](w io.Writer, rows iter.Seq2[T, error]) error {
	jt := jsonRowType(reflect.TypeFor[T]())
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	n := 0
	for row, err := range rows {
		if err != nil {
			return err
		}
		if err := enc.Encode(reflect.ValueOf(row).Convert(jt).Interface()); err != nil {
			return fmt.Errorf("row %d: %w", n+1, err)
		}
		n++
	}
	return nil
}
