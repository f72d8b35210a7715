package kept_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/internal/manifest"
)

// wetRecord is a WET conversion record; length, when not -1, is the
// Content-Length it claims instead of the block's.
func wetRecord(id, text string, length int) string {
	if length < 0 {
		length = len(text)
	}
	return fmt.Sprintf("WARC/1.0\r\nWARC-Type: conversion\r\nWARC-Record-ID: <urn:uuid:%s>\r\nWARC-Target-URI: https://example.org/%s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n",
		id, id, length, text)
}

// words is a text of n words drawn from a made-up vocabulary.
func words(r *rand.Rand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = fmt.Sprintf("w%03d", r.IntN(1000))
	}
	return strings.Join(w, " ")
}

// TestBrokenFraming writes the corpus of an uncompressed WET file whose
// framing is broken in places (garbage between records, a Content-Length
// too short), which the job rejects: everything but the duplicates'
// records is copied, the broken bytes included, and every document's
// record is a gzip member of its own.
func TestBrokenFraming(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	ta, tc, te := words(r, 80), words(r, 80), words(r, 80)
	pieces := []struct {
		data string
		drop bool
	}{
		{"WARC/1.0\r\nWARC-Type: warcinfo\r\nWARC-Record-ID: <urn:uuid:info>\r\nContent-Length: 4\r\n\r\nx: y\r\n\r\n", false},
		{wetRecord("a", ta, -1), false},
		{"garbage between records\r\n", false},
		{wetRecord("b", ta, -1), true}, // a copy of a
		{wetRecord("c", tc, -1), false},
		{wetRecord("broken", words(r, 80), 10), false},
		{wetRecord("d", tc, -1), true}, // a copy of c
		{wetRecord("e", te, -1), false},
	}
	var in, want bytes.Buffer
	for _, p := range pieces {
		in.WriteString(p.data)
		if !p.drop {
			want.WriteString(p.data)
		}
	}
	path := filepath.Join(t.TempDir(), "broken.warc.wet")
	if err := os.WriteFile(path, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	jobDir := runJob(t, 32<<20, path)
	if rejects := readCountsOf(t, jobDir).Rejected; rejects < 2 {
		t.Fatalf("the job rejected %d records; the test wants the broken framing rejected", rejects)
	}
	dir, sum := writeCorpus(t, jobDir, kept.Options{})
	if sum.Dropped != 2 {
		t.Fatalf("%d documents dropped, want b and d", sum.Dropped)
	}
	outs := outputsOf(t, dir, sum, "broken.warc.wet")
	if got := concat(t, outs); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("the output holds\n%q\nwant the input without b and d\n%q", got, want.Bytes())
	}
	members := gzipMembers(t, outs[0])
	for _, p := range pieces {
		if strings.Contains(p.data, "conversion") && !p.drop && !strings.Contains(p.data, "broken") &&
			!slices.ContainsFunc(members, func(m []byte) bool { return string(m) == p.data }) {
			t.Errorf("record %.60q is not a gzip member of its own", p.data[60:])
		}
	}
}

// readCountsOf reads the counts of a job's manifest.
func readCountsOf(t *testing.T, jobDir string) manifest.Counts {
	t.Helper()
	return readManifestOf(t, jobDir).Counts
}

// readManifestOf reads a job's manifest.
func readManifestOf(t *testing.T, jobDir string) *manifest.Manifest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(jobDir, job.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	man, err := manifest.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return man
}
