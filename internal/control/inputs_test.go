package control

import (
	"bytes"
	"compress/gzip"
	"context"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/pkg/records"
)

// TestInputsByContent runs a job on a directory holding a JSONL file, a
// gzip-per-record WET file whose name does not say WET, and a CSV file:
// the WET file is read by its content (its document located by its gzip
// member in docs/), the CSV file is listed in the manifest as skipped with
// a WARN log line, and --strict refuses the job, naming it. A README.md
// and a LICENSE beside them are listed as documentation (doc), counted in
// one INFO line, with no WARN.
func TestInputsByContent(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.jsonl", []byte(`{"id":"a","text":"a short document of a few words"}`+"\n"))
	var wet bytes.Buffer
	for _, rec := range []string{
		"WARC/1.0\r\nWARC-Type: warcinfo\r\nWARC-Record-ID: <urn:uuid:0>\r\nContent-Length: 9\r\n\r\nsoftware:\r\n\r\n",
		"WARC/1.0\r\nWARC-Type: conversion\r\nWARC-Record-ID: <urn:uuid:1>\r\nWARC-Target-URI: http://a.example/\r\nContent-Length: 24\r\n\r\nthe text of a crawl page\r\n\r\n",
	} {
		zw := gzip.NewWriter(&wet)
		zw.Write([]byte(rec))
		zw.Close()
	}
	write("crawl.wet.gz", wet.Bytes())
	write("table.csv", []byte("id,text\na,one\n"))
	write("README.md", []byte("# A crawl\n\nThe files of a crawl.\n"))
	write("LICENSE", []byte("Any use.\n"))

	out := filepath.Join(t.TempDir(), "out")
	cfg := testConfig(t, dir, out, 1)
	var logs bytes.Buffer
	cfg.Log = slog.New(slog.NewTextHandler(&logs, nil))
	m, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	csv := filepath.Join(dir, "table.csv")
	var unknown, docFiles []string
	for _, sk := range m.SkippedInputs {
		switch {
		case sk.Doc:
			docFiles = append(docFiles, filepath.Base(sk.Path))
		case strings.Contains(sk.Reason, "unknown kind"):
			unknown = append(unknown, sk.Path)
		}
	}
	if len(m.SkippedInputs) != 3 || len(unknown) != 1 || unknown[0] != csv || strings.Join(docFiles, " ") != "LICENSE README.md" {
		t.Errorf("skipped inputs %+v, want %s of unknown kind and LICENSE, README.md as documentation", m.SkippedInputs, csv)
	}
	if !strings.Contains(logs.String(), "level=WARN msg=\"input file skipped\" path="+csv) {
		t.Errorf("no WARN line for the skipped file in\n%s", logs.String())
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "level=WARN") && (strings.Contains(line, "README.md") || strings.Contains(line, "LICENSE")) {
			t.Errorf("a WARN line for documentation: %s", line)
		}
	}
	if !strings.Contains(logs.String(), `level=INFO msg="documentation beside the inputs not read" files=2`) {
		t.Errorf("no INFO line counting the documentation files in\n%s", logs.String())
	}
	var kinds []string
	for _, in := range m.Inputs {
		kinds = append(kinds, filepath.Base(in.Path)+":"+string(in.Kind))
	}
	if got := strings.Join(kinds, " "); got != "a.jsonl:jsonl crawl.wet.gz:wet" {
		t.Errorf("inputs %s", got)
	}
	docs := readDataset[records.DocRecord](t, out, "docs")
	if len(docs) != 2 || docs[0].CompressedOffset != nil || docs[1].ID != "<urn:uuid:1>" ||
		docs[1].CompressedOffset == nil || docs[1].CompressedLength == nil {
		t.Fatalf("docs %+v", docs)
	}
	if off, n := *docs[1].CompressedOffset, *docs[1].CompressedLength; off <= 0 || off+n != int64(wet.Len()) {
		t.Errorf("the WET record's member at %d, %d bytes; want the file's last member, ending at %d", off, n, wet.Len())
	}

	strict := cfg
	strict.Overwrite = true
	strict.Params.Strict = true
	if _, err := Run(context.Background(), strict); err == nil || !strings.Contains(err.Error(), csv) || !strings.Contains(err.Error(), "--strict") {
		t.Errorf("--strict: err %v, want one naming %s", err, csv)
	}
	if _, err := os.Stat(filepath.Join(out, "_SUCCESS")); err != nil {
		t.Errorf("--strict refused the job but the complete output was removed: %v", err)
	}

	var man struct {
		Skipped []job.Skipped `json:"skipped_inputs"`
	}
	if err := readJSONFile(filepath.Join(out, "manifest.json"), &man); err != nil || len(man.Skipped) != 3 {
		t.Errorf("manifest.json skipped_inputs %+v, err %v", man.Skipped, err)
	}
}

// TestInputsNotRegular runs a job on a directory holding a JSONL file
// beside a named pipe, a socket, and links to /dev/zero and /dev/urandom:
// none of them is opened (a FIFO's open would wait for a writer for
// ever), each is listed in rejects/ with its type and in the manifest's
// skipped inputs and rejects, with a WARN line and a warning, and the job
// completes.
func TestInputsNotRegular(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(p("a.jsonl"), []byte(`{"id":"a","text":"a short document of a few words"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p("pipe.jsonl"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", p("sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for link, target := range map[string]string{"zero.jsonl": "/dev/zero", "urandom.txt": "/dev/urandom"} {
		if err := os.Symlink(target, p(link)); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{
		p("pipe.jsonl"): "not a regular file: named pipe (FIFO)", p("sock"): "not a regular file: socket",
		p("zero.jsonl"): "not a regular file: character device", p("urandom.txt"): "not a regular file: character device",
	}

	out := filepath.Join(t.TempDir(), "out")
	cfg := testConfig(t, dir, out, 1)
	var logs bytes.Buffer
	cfg.Log = slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	var m *manifest.Manifest
	go func() {
		var err error
		m, err = Run(ctx, cfg)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("the job blocked")
	}
	if _, err := os.Stat(filepath.Join(out, job.SuccessFile)); err != nil {
		t.Fatal("no _SUCCESS")
	}
	if m.Counts.Docs != 1 || m.Counts.Rejected != 4 || len(m.Inputs) != 1 {
		t.Errorf("docs %d, rejected %d, inputs %d: want 1, 4, 1", m.Counts.Docs, m.Counts.Rejected, len(m.Inputs))
	}
	if len(m.RejectReasons) != 1 || m.RejectReasons[0] != (manifest.ReasonCount{Reason: "not a regular file", Count: 4}) {
		t.Errorf("reject reasons %+v", m.RejectReasons)
	}
	rejects := readDataset[records.RejectRecord](t, out, "rejects")
	got := map[string]string{}
	for _, r := range rejects {
		got[r.File] = r.Reason
		if r.Chunk != -1 || r.Offset != -1 {
			t.Errorf("reject %+v: want chunk -1, offset -1", r)
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("rejects/ %v, want %v", got, want)
	}
	if len(m.SkippedInputs) != 4 {
		t.Errorf("skipped inputs %+v", m.SkippedInputs)
	}
	for path := range want {
		if !strings.Contains(logs.String(), "level=WARN msg=\"input file rejected: not read, listed in rejects/\" path="+path) {
			t.Errorf("no WARN line for %s in\n%s", path, logs.String())
		}
	}
	if !slices.ContainsFunc(m.Warnings, func(w string) bool { return strings.HasPrefix(w, "4 files under the inputs are not regular files") }) {
		t.Errorf("warnings %q", m.Warnings)
	}
}

// TestOutputInsideInput runs a job whose output directory lies inside its
// input directory, then the same command again with --overwrite: the
// rerun does not read the first run's output (its Parquet files were
// planned as inputs, then deleted, and listed as unreadable rejects) but
// passes the directory over, saying so, and reads what the first run
// read.
func TestOutputInsideInput(t *testing.T) {
	in, _ := genCorpus(t, 200, 3, 2)
	out := filepath.Join(in, "out")
	cfg := testConfig(t, in, out, 1)
	first, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Overwrite = true
	var logs bytes.Buffer
	cfg.Log = slog.New(slog.NewTextHandler(&logs, nil))
	again, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if again.Counts.Rejected != first.Counts.Rejected || again.Counts.UnreadFiles != 0 || again.Counts.Docs != first.Counts.Docs ||
		len(again.Inputs) != len(first.Inputs) {
		t.Errorf("rerun: %d docs, %d rejects, %d unread files, %d inputs; the first run: %d, %d, 0, %d",
			again.Counts.Docs, again.Counts.Rejected, again.Counts.UnreadFiles, len(again.Inputs), first.Counts.Docs, first.Counts.Rejected, len(first.Inputs))
	}
	want := job.Skipped{Path: out, Reason: "the job's output directory (--out): not an input", Dir: true}
	if !slices.Contains(again.SkippedInputs, want) {
		t.Errorf("skipped inputs %+v, want %+v among them", again.SkippedInputs, want)
	}
	if !strings.Contains(logs.String(), `level=WARN msg="input directory passed over: its files are not read" path=`+out) {
		t.Errorf("no WARN line for the output directory in\n%s", logs.String())
	}
	if _, err := os.Stat(filepath.Join(out, job.SuccessFile)); err != nil {
		t.Error("the rerun did not complete")
	}
}
