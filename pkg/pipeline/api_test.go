package pipeline

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestPublicTypesOnly type-checks the package and fails if its exported
// API (exported functions, variables, constants, types, the exported
// fields and methods of its types, transitively through its own types)
// names a type of an internal package, which a user cannot name.
func TestPublicTypesOnly(t *testing.T) {
	pkg := checkThisPackage(t)
	for _, s := range internalInAPI(pkg) {
		t.Errorf("the exported API uses an internal type: %s", s)
	}
}

// TestInternalInAPI checks the check on a small package that exposes
// internal types in every way it looks for, and hides one.
func TestInternalInAPI(t *testing.T) {
	fset := token.NewFileSet()
	check := func(path, src string, imp types.Importer) *types.Package {
		f, err := parser.ParseFile(fset, path+".go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		pkg, err := (&types.Config{Importer: imp}).Check(path, fset, []*ast.File{f}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return pkg
	}
	secret := check("example.com/m/internal/secret", "package secret\ntype Config struct{}\ntype Mode string\n", nil)
	api := check("example.com/m", `package m
import "example.com/m/internal/secret"
type Options struct {
	Conf   *secret.Config
	hidden secret.Config
	Ok     int
}
func F(m []secret.Mode) {}
func g(c secret.Config) {}
type Public struct{ N int }
func (Public) M() map[string]secret.Config { return nil }
func (Public) m() secret.Config { return secret.Config{} }
type A = secret.Config
var V func() (int, secret.Mode)
type result struct{ Field secret.Mode }
func R() result { return result{} }
`, importerFunc(func(string) (*types.Package, error) { return secret, nil }))
	got := internalInAPI(api)
	want := []string{
		"A names example.com/m/internal/secret.Config",
		"F names example.com/m/internal/secret.Mode",
		"Options.Conf names example.com/m/internal/secret.Config",
		"Public.M names example.com/m/internal/secret.Config",
		"V names example.com/m/internal/secret.Mode",
		"result.Field names example.com/m/internal/secret.Mode",
	}
	if !slices.Equal(got, want) {
		t.Errorf("found\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// internalInAPI lists the places of pkg's exported API that name a type of
// an internal package, sorted.
func internalInAPI(pkg *types.Package) []string {
	w := &apiWalker{pkg: pkg, seen: map[*types.TypeName]bool{}}
	for _, name := range pkg.Scope().Names() {
		if obj := pkg.Scope().Lookup(name); obj.Exported() {
			w.visit(name, obj.Type())
		}
	}
	slices.Sort(w.found)
	return slices.Compact(w.found)
}

// apiWalker walks the types an exported API names.
type apiWalker struct {
	pkg   *types.Package
	seen  map[*types.TypeName]bool // pkg's own named types walked
	found []string
}

// visit walks t, named where in the API.
func (w *apiWalker) visit(where string, t types.Type) {
	switch t := t.(type) {
	case *types.Alias:
		w.visit(where, t.Rhs())
	case *types.Named:
		obj := t.Obj()
		if obj.Pkg() != nil && strings.Contains("/"+obj.Pkg().Path()+"/", "/internal/") {
			w.found = append(w.found, fmt.Sprintf("%s names %s.%s", where, obj.Pkg().Path(), obj.Name()))
		}
		for a := range t.TypeArgs().Types() {
			w.visit(where, a)
		}
		if obj.Pkg() != w.pkg || w.seen[obj] {
			return // another package's type is that package's API
		}
		w.seen[obj] = true
		if s, ok := t.Underlying().(*types.Struct); ok {
			for f := range s.Fields() {
				if f.Exported() {
					w.visit(obj.Name()+"."+f.Name(), f.Type())
				}
			}
		} else {
			w.visit(obj.Name(), t.Underlying())
		}
		for m := range t.Methods() {
			if m.Exported() {
				w.visit(obj.Name()+"."+m.Name(), m.Type())
			}
		}
	case *types.Pointer:
		w.visit(where, t.Elem())
	case *types.Slice:
		w.visit(where, t.Elem())
	case *types.Array:
		w.visit(where, t.Elem())
	case *types.Chan:
		w.visit(where, t.Elem())
	case *types.Map:
		w.visit(where, t.Key())
		w.visit(where, t.Elem())
	case *types.Signature:
		for v := range t.Params().Variables() {
			w.visit(where, v.Type())
		}
		for v := range t.Results().Variables() {
			w.visit(where, v.Type())
		}
	case *types.Struct:
		for f := range t.Fields() {
			if f.Exported() || f.Embedded() {
				w.visit(where+"."+f.Name(), f.Type())
			}
		}
	case *types.Interface:
		for m := range t.Methods() {
			w.visit(where+"."+m.Name(), m.Type())
		}
	case *types.TypeParam:
		w.visit(where, t.Constraint())
	}
}

// checkThisPackage type-checks the package in this directory (its files
// other than tests), importing its dependencies from the export data that
// go list -export builds.
func checkThisPackage(t *testing.T) *types.Package {
	t.Helper()
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goCmd); err != nil {
		goCmd = "go"
	}
	var stderr bytes.Buffer
	cmd := exec.Command(goCmd, "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.Bytes())
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	bp, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("go list gave no export data for %s", path)
		}
		return os.Open(file)
	})
	pkg, err := (&types.Config{Importer: imp}).Check(bp.ImportPath, fset, files, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}
