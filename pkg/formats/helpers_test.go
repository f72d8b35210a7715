package formats

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// result is everything one Read call produced.
type result struct {
	docs    []Doc
	rejects []Reject
	err     error
}

// readAll reads a piece and keeps copies of what it emits.
func readAll(t testing.TB, p Piece, o Options) result {
	t.Helper()
	var res result
	res.err = Read(context.Background(), p, o, func(d Doc) error {
		d.Text = bytes.Clone(d.Text)
		res.docs = append(res.docs, d)
		return nil
	}, func(r Reject) error {
		res.rejects = append(res.rejects, r)
		return nil
	})
	return res
}

// readFile reads a whole file of the kind its name tells.
func readFile(t testing.TB, path string, o Options) result {
	t.Helper()
	kind, err := DetectKind(path)
	if err != nil {
		t.Fatal(err)
	}
	return readAll(t, Piece{Path: path, Kind: kind, End: -1, StartLine: 1}, o)
}

// writeFile writes data to name in dir and returns the path.
func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// warcRecord builds one WARC record with the given header fields (in
// order, "Name: value") and block.
func warcRecord(block string, fields ...string) string {
	var b strings.Builder
	b.WriteString("WARC/1.0\r\n")
	for _, f := range fields {
		b.WriteString(f + "\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s\r\n\r\n", len(block), block)
	return b.String()
}

// conversion builds a WET conversion record.
func conversion(id, uri, text string) string {
	return warcRecord(text, "WARC-Type: conversion", "WARC-Target-URI: "+uri,
		"WARC-Record-ID: "+id, "Content-Type: text/plain")
}

// warcinfo builds a warcinfo record.
func warcinfo() string {
	return warcRecord("software: neardup-test\r\nformat: WARC File Format 1.0\r\n",
		"WARC-Type: warcinfo", "WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000000>",
		"Content-Type: application/warc-fields")
}

// response builds a WARC response record around an HTTP head and body.
func response(id, uri, head, body string) string {
	return warcRecord(head+"\r\n"+body, "WARC-Type: response", "WARC-Target-URI: "+uri,
		"WARC-Record-ID: "+id, "Content-Type: application/http; msgtype=response")
}

// gzipMembers compresses each part as its own gzip member.
func gzipMembers(t testing.TB, parts ...string) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, p := range parts {
		zw := gzip.NewWriter(&out)
		if _, err := zw.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

// zstdBytes compresses data as one zstd stream.
func zstdBytes(t testing.TB, data []byte) []byte {
	t.Helper()
	zw, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer zw.Close()
	return zw.EncodeAll(data, nil)
}

// docSummary is a comparable view of a document.
type docSummary struct {
	ID, URL, Text string
	Offset, Line  int64
}

func summarize(docs []Doc) []docSummary {
	out := make([]docSummary, len(docs))
	for i, d := range docs {
		out[i] = docSummary{d.ID, d.URL, string(d.Text), d.Offset, d.Line}
	}
	return out
}

// reasons lists the reasons of rejects.
func reasons(rs []Reject) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Reason)
	}
	return out
}
