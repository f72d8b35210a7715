package records_test

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/pkg/records"
)

// datasets are the row types of every Parquet dataset a job writes, by
// where it writes them.
var datasets = []struct {
	where string
	row   any
}{
	{"docs/", records.DocRecord{}},
	{"bands/", records.Band{}},
	{"bands/ of index versions before 3", records.BandRecord{}},
	{"candidates/", records.Candidate{}},
	{"pairs/", records.Pair{}},
	{"exact.parquet", records.ExactRecord{}},
	{"clusters.parquet", records.ClusterRecord{}},
	{"duplicates.parquet and index/dropped.parquet", records.Duplicate{}},
	{"rejects/", records.RejectRecord{}},
	{"paragraphs/ (--paragraphs)", records.Paragraph{}},
	{"index/units/ (--paragraphs with --index)", records.Unit{}},
	{"the kept corpus's annotations (--annotate)", kept.Annotation{}},
}

// notDatasets are the row types of package records that no dataset of a
// job has, and why.
var notDatasets = map[string]string{
	"ExactMember": "a work-area row, written in verified files of their own format; its Parquet tags read the verified files of builds before 2026-11-27",
}

// TestColumnsNotReserved checks that no column of any dataset a job
// writes is a reserved word of DuckDB or Spark SQL (testdata/*-reserved.txt,
// each naming its source), so that any SQL names every column unquoted.
// It also checks that every row type of package records is either a
// dataset's, and checked, or listed with the reason it is not.
func TestColumnsNotReserved(t *testing.T) {
	lists := map[string]map[string]bool{
		"DuckDB":    readKeywords(t, "testdata/duckdb-reserved.txt"),
		"Spark SQL": readKeywords(t, "testdata/spark-reserved.txt"),
	}
	checked := map[string]bool{}
	for _, ds := range datasets {
		typ := reflect.TypeOf(ds.row)
		if typ.PkgPath() == reflect.TypeFor[records.Pair]().PkgPath() {
			checked[typ.Name()] = true
		}
		cols := columns(parquet.SchemaOf(ds.row))
		if len(cols) == 0 {
			t.Errorf("%s (%s): no columns", ds.where, typ)
		}
		for _, col := range cols {
			for _, name := range slices.Sorted(maps.Keys(lists)) {
				if lists[name][strings.ToLower(col)] {
					t.Errorf("%s (%s): column %q is a reserved word of %s", ds.where, typ, col, name)
				}
			}
		}
	}
	for _, name := range structTypes(t, "records.go") {
		_, skipped := notDatasets[name]
		switch {
		case checked[name] && skipped:
			t.Errorf("records.%s is both checked and listed as no dataset's", name)
		case !checked[name] && !skipped:
			t.Errorf("records.%s is neither checked here nor listed as no dataset's: add it to datasets or notDatasets", name)
		}
	}
}

// columns are the names of a schema's leaf columns, dotted paths for
// nested ones.
func columns(s *parquet.Schema) []string {
	var out []string
	for _, path := range s.Columns() {
		out = append(out, strings.Join(path, "."))
	}
	return out
}

// readKeywords reads a list of keywords, one a line, # starting a comment.
func readKeywords(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	words := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		words[strings.ToLower(line)] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(words) < 20 {
		t.Fatalf("%s: %d keywords: not a list of reserved words", path, len(words))
	}
	return words
}

// structTypes are the names of the struct types a Go file declares.
func structTypes(t *testing.T, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE {
			continue
		}
		for _, s := range g.Specs {
			ts := s.(*ast.TypeSpec)
			if _, ok := ts.Type.(*ast.StructType); ok {
				names = append(names, ts.Name.Name)
			}
		}
	}
	return names
}
