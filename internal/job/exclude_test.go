package job

import (
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/storage"
)

// TestExpandInputsExcludesJobOutputs walks an input directory that holds
// the job's own output (named by InputOptions.Exclude, not yet marked),
// a finished job's output, an unfinished one's, an interrupted one's (its
// lock only), a corpus written by write-kept and a Spark output (both
// with _SUCCESS, both inputs): the job outputs are passed over whole, each
// listed once with why, wherever they are met.
func TestExpandInputsExcludesJobOutputs(t *testing.T) {
	dir := tree(t, map[string]string{
		"a.jsonl":                             "{}\n",
		"out/pairs/chunk-000000.parquet":      "x",
		"done/manifest.json":                  "{}",
		"done/_SUCCESS":                       "",
		"done/docs/chunk-000000.parquet":      "x",
		"partial/manifest.json":               "{}",
		"partial/_PARTIAL":                    "",
		"partial/docs/chunk-000000.parquet":   "x",
		"deep/er/unfinished/_work/job.json":   "{}",
		"deep/er/unfinished/docs/c.parquet":   "x",
		"deep/er/b.jsonl":                     "{}\n",
		"locked/.neardup.lock":                "",
		"locked/rejects/chunk-000000.parquet": "x",
		"kept/_SUCCESS":                       "",
		"kept/kept.json":                      "summary",
		"kept/part-00000.jsonl":               "{}\n",
		"spark/_SUCCESS":                      "",
		"spark/part-00000.parquet":            "x",
		"manifests/manifest.json":             "a list",
		"manifests/c.jsonl":                   "{}\n",
	})
	p := func(name string) string { return dir + "/" + name }
	exclude := map[string]string{p("out"): "the job's output directory (--out)", p("nowhere"): "a store not made yet"}
	wantInputs := []string{"a.jsonl", "deep/er/b.jsonl", "kept/part-00000.jsonl", "manifests/c.jsonl", "spark/part-00000.parquet"}
	wantDirs := map[string]string{
		"out":                "the job's output directory (--out): not an input",
		"done":               "a neardup job's output (it holds manifest.json and _SUCCESS): not an input",
		"partial":            "a neardup job's output (it holds manifest.json and _PARTIAL): not an input",
		"deep/er/unfinished": "a neardup job's output (it holds _work/job.json): not an input",
		"locked":             "a neardup job's output (it holds .neardup.lock): not an input",
	}
	for _, args := range [][]string{{dir}, {p("*")}} {
		inputs, skipped, err := ExpandInputs(t.Context(), args, InputOptions{Exclude: exclude})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, in := range inputs {
			got = append(got, strings.TrimPrefix(in.Path, dir+"/"))
		}
		if strings.Join(got, " ") != strings.Join(wantInputs, " ") {
			t.Errorf("%v: inputs %v, want %v", args, got, wantInputs)
		}
		dirs := map[string]string{}
		for _, sk := range skipped {
			if sk.Dir {
				dirs[strings.TrimPrefix(sk.Path, dir+"/")] = sk.Reason
			}
		}
		for d, why := range wantDirs {
			if dirs[d] != why {
				t.Errorf("%v: %s passed over as %q, want %q", args, d, dirs[d], why)
			}
		}
		if len(dirs) != len(wantDirs) {
			t.Errorf("%v: passed over %v, want %v", args, dirs, wantDirs)
		}
	}
	// A job's output named as the input: nothing to read, and the error
	// says why.
	_, _, err := ExpandInputs(t.Context(), []string{p("done")}, InputOptions{})
	if err == nil || !strings.Contains(err.Error(), "a neardup job's output") {
		t.Errorf("an output named as input: err = %v", err)
	}
}

// TestExclusionsObjects checks which objects listed under an input
// prefix lie under an excluded output prefix: those under the output,
// when the output lies under (or is) the prefix listed; an input listed
// under the output is read, as a local walk reads a directory below the
// output.
func TestExclusionsObjects(t *testing.T) {
	x := newExclusions(map[string]string{"s3://b/in/out": "the job's output directory (--out)"})
	tests := []struct {
		arg, url string
		excluded bool
	}{
		{"s3://b/in", "s3://b/in/out/pairs/chunk-000000.parquet", true},
		{"s3://b/in", "s3://b/in/a.jsonl", false},
		{"s3://b/in", "s3://b/in/outer/a.jsonl", false},
		{"s3://b", "s3://b/in/out/docs/chunk-000000.parquet", true},
		{"s3://b/in/out", "s3://b/in/out/docs/chunk-000000.parquet", true},
		{"s3://b/in/out/sub", "s3://b/in/out/sub/a.jsonl", false},
		{"s3://c/in", "s3://c/in/out/a.jsonl", false},
		{"s3://b/in?endpoint=http://other:9000", "s3://b/in/out/a.jsonl?endpoint=http://other:9000", false}, // another store's bucket b
	}
	for _, tt := range tests {
		arg, err := storage.ParseLocation(tt.arg)
		if err != nil {
			t.Fatal(err)
		}
		why, prefix := x.object(arg, tt.url)
		if (why != "") != tt.excluded || tt.excluded && (prefix != "s3://b/in/out" || why != "the job's output directory (--out): not an input") {
			t.Errorf("%s under %s: passed over %q (prefix %q), want %v", tt.url, tt.arg, why, prefix, tt.excluded)
		}
	}
}
