package job

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/pkg/formats"
)

// TestExpandInputsByContent expands a directory whose file names do not
// all tell their kind: the content decides, files of no known kind are
// listed as skipped (an error under --strict), and --input-format gives
// every file its kind.
func TestExpandInputsByContent(t *testing.T) {
	wet := "WARC/1.0\r\nWARC-Type: conversion\r\nWARC-Record-ID: <urn:uuid:1>\r\nContent-Length: 9\r\n\r\nSome text\r\n\r\n"
	dir := tree(t, map[string]string{
		"crawl/a.jsonl":       `{"id":"a","text":"named"}` + "\n",
		"crawl/x.wet.gz":      gzipped(t, wet),
		"crawl/lines.json.gz": gzipped(t, `{"id":"l","text":"by content"}`+"\n"),
		"crawl/array.json.gz": gzipped(t, `[{"id":"j","text":"an array"}]`),
		"crawl/table.csv":     "id,text\nc,a table\n",
	})
	p := func(name string) string { return filepath.Join(dir, "crawl", name) }
	tests := []struct {
		name    string
		args    []string
		opts    InputOptions
		want    string // "name:kind:compression ..."
		skipped string // "name ..."
		err     string
	}{
		{name: "auto", args: []string{p("")},
			want:    "a.jsonl:jsonl: lines.json.gz:jsonl:gzip x.wet.gz:wet:gzip",
			skipped: "array.json.gz table.csv"},
		{name: "strict", args: []string{p("")}, opts: InputOptions{Strict: true},
			err: p("array.json.gz") + " is not read (--strict)"},
		{name: "a file named directly", args: []string{p("x.wet.gz")}, want: "x.wet.gz:wet:gzip"},
		{name: "a directory twice", args: []string{p(""), p("")},
			want:    "a.jsonl:jsonl: lines.json.gz:jsonl:gzip x.wet.gz:wet:gzip",
			skipped: "array.json.gz table.csv"},
		{name: "an unknown file skipped, then named", args: []string{p(""), p("table.csv")}, err: p("table.csv") + ": unknown input kind"},
		{name: "an unknown file named directly", args: []string{p("table.csv")}, err: p("table.csv") + `: unknown input kind: content starts with "id,text`},
		{name: "input format", args: []string{p("")}, opts: InputOptions{Format: formats.KindJSONL},
			want: "a.jsonl:jsonl:none array.json.gz:jsonl: lines.json.gz:jsonl: table.csv:jsonl:none x.wet.gz:jsonl:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inputs, skipped, err := ExpandInputs(context.Background(), tt.args, tt.opts)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got, gotSkipped []string
			for _, in := range inputs {
				got = append(got, fmt.Sprintf("%s:%s:%s", filepath.Base(in.Path), in.Kind, in.Compression))
			}
			for _, s := range skipped {
				gotSkipped = append(gotSkipped, filepath.Base(s.Path))
				if !strings.HasPrefix(s.Reason, "unknown kind: ") {
					t.Errorf("%s skipped because %q", s.Path, s.Reason)
				}
			}
			if g := strings.Join(got, " "); g != tt.want {
				t.Errorf("inputs %s, want %s", g, tt.want)
			}
			if g := strings.Join(gotSkipped, " "); g != tt.skipped {
				t.Errorf("skipped %s, want %s", g, tt.skipped)
			}
		})
	}
}

// TestPlanByContent plans and reads inputs recognised by their content:
// a gzip-compressed file whose name does not say so is one whole piece,
// read decompressed.
func TestPlanByContent(t *testing.T) {
	var lines strings.Builder
	for i := range 200 {
		fmt.Fprintf(&lines, `{"id":"d%d","text":"document number %d"}`+"\n", i, i)
	}
	dir := tree(t, map[string]string{"lines.json": gzipped(t, lines.String())})
	ctx := context.Background()
	inputs, _, err := ExpandInputs(ctx, []string{dir}, InputOptions{})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := MakePlan(ctx, inputs, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Chunks) != 1 || len(plan.Chunks[0].Pieces) != 1 {
		t.Fatalf("plan %+v: want one whole piece", plan.Chunks)
	}
	pc := plan.Chunks[0].Pieces[0]
	if pc.End != -1 || pc.Compression != "gzip" || plan.Chunks[0].Text != inputs[0].Size*compressionEstimate {
		t.Errorf("piece %+v, text %d", pc, plan.Chunks[0].Text)
	}
	docs := 0
	err = formats.Read(ctx, pc, formats.Options{}, func(formats.Doc) error { docs++; return nil },
		func(r formats.Reject) error { return fmt.Errorf("reject %+v", r) })
	if err != nil || docs != 200 {
		t.Errorf("read %d documents, err %v", docs, err)
	}
}
