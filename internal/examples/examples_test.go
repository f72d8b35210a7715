package examples

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/report"
	"github.com/neardup/neardup/internal/stage/mapper"
	"github.com/neardup/neardup/internal/storage"
	rec "github.com/neardup/neardup/pkg/records"
)

// TestExampleTexts maps inputs of every way readText reads a record again
// (uncompressed JSONL cut into pieces, read from the record's offset;
// gzipped JSONL and Parquet, read up to it; a WET file of one gzip member
// per record, read from its member) and checks that every document's text
// comes back, then that a changed input is said so, not read wrong.
func TestExampleTexts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	want := map[string]string{} // id -> text
	text := func(prefix string, i int) string {
		return fmt.Sprintf("%s document %d: light is refracted by the prism into colours, ray %d", prefix, i, i*i)
	}
	var jsonl bytes.Buffer
	for i := range 40 {
		id := fmt.Sprintf("j%d", i)
		want[id] = text("plain", i)
		fmt.Fprintf(&jsonl, "{\"id\":%q,\"text\":%q}\n", id, want[id])
	}
	write(t, filepath.Join(dir, "a.jsonl"), jsonl.Bytes())
	var gz bytes.Buffer
	// records writes n JSONL records of ids "<letter><i>" to w.
	records := func(w io.WriteCloser, letter, prefix string, n int) {
		for i := range n {
			id := fmt.Sprintf("%s%d", letter, i)
			want[id] = text(prefix, i)
			fmt.Fprintf(w, "{\"id\":%q,\"text\":%q}\n", id, want[id])
		}
		w.Close()
	}
	records(gzip.NewWriter(&gz), "g", "gzipped", 5)
	write(t, filepath.Join(dir, "b.jsonl.gz"), gz.Bytes())
	// Read in one pass by offset (skimTexts): a zstd file, and a gzip file
	// of several members whose records without an id are named by their
	// line.
	var zst bytes.Buffer
	zsw, err := zstd.NewWriter(&zst)
	if err != nil {
		t.Fatal(err)
	}
	records(zsw, "z", "zstd", 6)
	write(t, filepath.Join(dir, "e.jsonl.zst"), zst.Bytes())
	gz.Reset()
	for i := range 3 {
		zw := gzip.NewWriter(&gz)
		for j := range 2 {
			id := fmt.Sprintf("m%d", 2*i+j)
			want[id] = text("members", 2*i+j)
			if j == 1 {
				fmt.Fprintf(zw, "\n{\"text\":%q}\n", want[id]) // a blank line, and no id
				want[filepath.Join(dir, "f.jsonl.gz")+":"+fmt.Sprint(3*i+3)] = want[id]
				delete(want, id)
				continue
			}
			fmt.Fprintf(zw, "{\"id\":%q,\"text\":%q}\n", id, want[id])
		}
		zw.Close()
	}
	write(t, filepath.Join(dir, "f.jsonl.gz"), gz.Bytes())
	var wet bytes.Buffer
	for i := range 4 {
		id := fmt.Sprintf("<urn:uuid:%d>", i)
		want[id] = text("wet", i)
		block := want[id]
		rec := fmt.Sprintf("WARC/1.0\r\nWARC-Type: conversion\r\nWARC-Target-URI: https://example.com/%d\r\nWARC-Record-ID: %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n", i, id, len(block), block)
		zw := gzip.NewWriter(&wet)
		zw.Write([]byte(rec))
		zw.Close()
	}
	write(t, filepath.Join(dir, "c.warc.wet.gz"), wet.Bytes())
	type row struct {
		ID   string `parquet:"id"`
		Text string `parquet:"text"`
	}
	var rows []row
	for i := range 3 {
		id := fmt.Sprintf("p%d", i)
		want[id] = text("parquet", i)
		rows = append(rows, row{id, want[id]})
	}
	if err := parquet.WriteFile(filepath.Join(dir, "d.parquet"), rows); err != nil {
		t.Fatal(err)
	}

	st, err := storage.NewDir(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	p := job.DefaultParams()
	if err := p.Resolve(); err != nil {
		t.Fatal(err)
	}
	inputs, _, err := job.ExpandInputs(ctx, []string{dir}, job.InputOptions{})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := job.MakePlan(ctx, inputs, 1024) // the JSONL file in pieces
	if err != nil {
		t.Fatal(err)
	}
	all := map[int64]bool{}
	stored := map[int]fileinfo.Info{} // each chunk's text store
	for _, ch := range plan.Chunks {
		mr, err := mapper.Map(ctx, st, &job.Spec{Params: p}, ch)
		if err != nil {
			t.Fatal(err)
		}
		stored[ch.Index] = mr.SigFile
		for i := range mr.Docs {
			all[job.Ordinal(ch.Index, int(i))] = true
		}
	}
	if len(all) != len(want) {
		t.Fatalf("%d documents mapped, want %d", len(all), len(want))
	}
	discard := slog.New(slog.DiscardHandler)
	docs, err := exampleDocs(ctx, st, &job.Spec{Params: p}, &plan, nil, all, discard)
	if err != nil {
		t.Fatal(err)
	}
	pieces, members, skimmed := map[string]bool{}, 0, 0
	for d, e := range docs {
		if e.Row.CompressedLength != nil {
			members++
		}
		if e.Err != "" || e.Text != want[e.Row.ID] {
			t.Errorf("document %d (%s): text %q, error %q; want %q", d, e.Row.ID, e.Text, e.Err, want[e.Row.ID])
		}
		pieces[fmt.Sprint(job.ChunkOf(d), e.Row.File)] = true
		// A compressed JSONL file's text is found by skimming, not by
		// readText after skimming failed.
		if pc := skimmable(&plan.Chunks[job.ChunkOf(d)], e.Row); pc != nil {
			skimmed++
			if got := skimTexts(ctx, p.ReadOptions(), *pc, []rec.DocRecord{e.Row}); got[0] == nil || *got[0] != want[e.Row.ID] {
				t.Errorf("document %d (%s) skimmed: %v", d, e.Row.ID, got[0])
			}
		}
	}
	if skimmed != 17 {
		t.Errorf("%d documents of compressed JSONL files, want 17", skimmed)
	}
	if len(pieces) < 5 || members != 4 {
		t.Errorf("the documents come from %d pieces, %d from their own gzip member: the JSONL file was not cut, or the WET file not read by member", len(pieces), members)
	}

	// Where a record is read alone from an input as it was planned (the
	// JSONL file's pieces), its chunk's text store is not read: damaged,
	// it is not even said so.
	inPlace := job.ChunkOf(firstDoc(t, docs, "a.jsonl"))
	damaged := map[int]fileinfo.Info{inPlace: stored[inPlace]}
	if err := os.WriteFile(filepath.Join(dir, "out", stored[inPlace].Name), []byte("not a text store"), 0o644); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	docs, err = exampleDocs(ctx, st, &job.Spec{Params: p}, &plan, damaged, all, slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for d, e := range docs {
		if e.Err != "" || e.Text != want[e.Row.ID] {
			t.Errorf("document %d (%s), its input unchanged: text %q, error %q; want %q", d, e.Row.ID, e.Text, e.Err, want[e.Row.ID])
		}
	}
	if logged.Len() > 0 {
		t.Errorf("the text store of chunk %d was read for texts its inputs hold as planned:\n%s", inPlace, logged.String())
	}
	for _, ch := range plan.Chunks { // the stores again, as map wrote them
		if _, err := mapper.Map(ctx, st, &job.Spec{Params: p}, ch); err != nil {
			t.Fatal(err)
		}
	}

	// The inputs changed since: a record that is not there any more, or
	// another record at its offset, is an error on the page, not a text.
	jsonl.Reset()
	fmt.Fprintf(&jsonl, "{\"id\":\"other\",\"text\":\"x\"}\n")
	write(t, filepath.Join(dir, "a.jsonl"), jsonl.Bytes())
	os.Remove(filepath.Join(dir, "d.parquet"))
	docs, err = exampleDocs(ctx, st, &job.Spec{Params: p}, &plan, nil, all, discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range docs {
		changed := strings.HasSuffix(e.Row.File, "a.jsonl") || strings.HasSuffix(e.Row.File, "d.parquet")
		if changed && (e.Err == "" || e.Text != "" || !strings.Contains(e.Err, e.Row.File)) {
			t.Errorf("%s at offset %d, changed: text %q, error %q", e.Row.File, e.Row.Offset, e.Text, e.Err)
		}
	}

	// From the text stores the texts are those the job read, whatever
	// the inputs became; where a chunk's store is gone, its texts are
	// read from the inputs, and said to have changed.
	gone := job.ChunkOf(firstDoc(t, docs, "a.jsonl"))
	if err := os.Remove(filepath.Join(dir, "out", stored[gone].Name)); err != nil {
		t.Fatal(err)
	}
	docs, err = exampleDocs(ctx, st, &job.Spec{Params: p}, &plan, stored, all, discard)
	if err != nil {
		t.Fatal(err)
	}
	for d, e := range docs {
		fromInput := job.ChunkOf(d) == gone
		if ok := e.Err == "" && e.Text == want[e.Row.ID]; ok == fromInput {
			t.Errorf("document %d (%s), its chunk's text store removed %v: text %q, error %q; want %q", d, e.Row.ID, fromInput, e.Text, e.Err, want[e.Row.ID])
		}
	}

	// The page: every example is shown, with its highlighted words.
	examples := []manifest.Example{{A: 0, B: 1, AID: "j0", BID: "j1", Similarity: 0.5}}
	if err := WritePairsPage(ctx, st, &job.Spec{Params: p}, &plan, nil, examples, discard); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "out", report.PairsFile))
	if err != nil || !bytes.Contains(page, []byte(`id="pair-1"`)) || !bytes.Contains(page, []byte("could not be read again")) {
		t.Errorf("%s: %v, or the example is not shown with its error", report.PairsFile, err)
	}
}

// firstDoc returns the first document read from a file whose name ends
// in suffix.
func firstDoc(t *testing.T, docs map[int64]report.ExampleDoc, suffix string) int64 {
	t.Helper()
	for _, d := range slices.Sorted(maps.Keys(docs)) {
		if strings.HasSuffix(docs[d].Row.File, suffix) {
			return d
		}
	}
	t.Fatalf("no document of a file named *%s", suffix)
	return 0
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
