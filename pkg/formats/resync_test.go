package formats

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// skippedRe parses the skipped byte range at the end of a resync reject.
var skippedRe = regexp.MustCompile(`skipped (\d+) bytes from offset (\d+) to (the next record header|the end of the file)$`)

// resyncRecords is a small WET file: n conversion records with ids
// <urn:uuid:0>.. and multi-line text.
func resyncRecords(n int) []string {
	var records []string
	for i := range n {
		records = append(records, conversion(fmt.Sprintf("<urn:uuid:%d>", i), fmt.Sprintf("http://x.example/%d", i),
			fmt.Sprintf("Document %d, first line.\nSecond line of document %d.\n", i, i)))
	}
	return records
}

// withLength replaces the Content-Length of a record built by warcRecord.
func withLength(record string, length func(n int64) int64) string {
	re := regexp.MustCompile(`Content-Length: (\d+)\r\n`)
	return re.ReplaceAllStringFunc(record, func(m string) string {
		n, _ := strconv.ParseInt(re.FindStringSubmatch(m)[1], 10, 64)
		return fmt.Sprintf("Content-Length: %d\r\n", length(n))
	})
}

func TestReadWARCResync(t *testing.T) {
	const n = 6
	tests := []struct {
		name string
		// parts makes the file from the records: the plain file is their
		// concatenation, and each part is a gzip member of the
		// gzip-per-record file.
		parts func(records []string) []string
		// damage, when set, changes the gzip-per-record file only (the
		// plain and single-stream files are not read).
		damage func(t *testing.T, records []string) []byte
		lost   []int // records rejected; the others are read
		// garbage is the number of rejects for bytes that are no record.
		garbage int
		// to is the end of each reject's skipped range: "header" or "eof".
		to []string
	}{
		{name: "Content-Length 10 too long",
			parts: func(rs []string) []string {
				rs[2] = withLength(rs[2], func(n int64) int64 { return n + 10 })
				return rs
			},
			lost: []int{2}, to: []string{"header"}},
		{name: "Content-Length 10 too short",
			parts: func(rs []string) []string {
				rs[2] = withLength(rs[2], func(n int64) int64 { return n - 10 })
				return rs
			},
			lost: []int{2}, to: []string{"header"}},
		{name: "Content-Length 0, block has text",
			parts: func(rs []string) []string { rs[2] = withLength(rs[2], func(int64) int64 { return 0 }); return rs },
			lost:  []int{2}, to: []string{"header"}},
		{name: "Content-Length past the end of the file, last record",
			parts: func(rs []string) []string {
				rs[n-1] = withLength(rs[n-1], func(n int64) int64 { return n + 1000 })
				return rs
			},
			lost: []int{n - 1}, to: []string{"eof"}},
		{name: "Content-Length past the end of the file, middle record",
			parts: func(rs []string) []string {
				rs[2] = withLength(rs[2], func(int64) int64 { return 1 << 40 })
				return rs
			},
			lost: []int{2}, to: []string{"header"}},
		{name: "Content-Length too long in a record that is not a document",
			parts: func(rs []string) []string {
				meta := withLength(warcRecord("metadata", "WARC-Type: metadata", "WARC-Record-ID: <urn:uuid:m>"), func(n int64) int64 { return n + 40 })
				return append(rs[:2:2], append([]string{meta}, rs[2:]...)...)
			},
			lost: nil, garbage: 1, to: []string{"header"}},
		{name: "garbled version line",
			parts: func(rs []string) []string { rs[2] = strings.Replace(rs[2], "WARC/1.0", "WARX/1.0", 1); return rs },
			lost:  []int{2}, to: []string{"header"}},
		{name: "header without Content-Length",
			parts: func(rs []string) []string { rs[2] = withoutLength(rs[2]); return rs },
			lost:  []int{2}, to: []string{"header"}},
		{name: "garbage between records",
			parts: func(rs []string) []string {
				return append(rs[:3:3], append([]string{"garbage \x00\xff bytes\r\nWARC/0.9 and more\r\n\r\n"}, rs[3:]...)...)
			},
			lost: nil, garbage: 1, to: []string{"header"}},
		{name: "WARC/1.0 line in a text with the right Content-Length",
			parts: func(rs []string) []string {
				rs[2] = conversion("<urn:uuid:2>", "http://x.example/2", "Intro.\nWARC/1.0\r\nWARC-Type: conversion\r\nContent-Length: 3\r\n\r\nnot a record\n")
				return rs
			}},
		{name: "corrupt gzip member data",
			damage: func(t *testing.T, rs []string) []byte {
				return damageMember(t, rs, 2, func(m []byte) { copy(m[len(m)/2:], bytes.Repeat([]byte{0xff}, 8)) })
			},
			lost: []int{2}, to: []string{"header"}},
		{name: "corrupt gzip member header",
			damage: func(t *testing.T, rs []string) []byte {
				return damageMember(t, rs, 2, func(m []byte) { m[0] = 'X' })
			},
			lost: []int{2}, to: []string{"header"}},
		{name: "garbage between gzip members",
			damage: func(t *testing.T, rs []string) []byte {
				return bytes.Join([][]byte{gzipMembers(t, rs[:3]...), []byte("not gzip \x1f\x8b at all"), gzipMembers(t, rs[3:]...)}, nil)
			},
			lost: nil, garbage: 1, to: []string{"header"}},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		files := map[string][]byte{}
		var plain string
		if tt.damage != nil {
			files["members.warc.wet.gz"] = tt.damage(t, resyncRecords(n))
		} else {
			parts := tt.parts(resyncRecords(n))
			plain = strings.Join(parts, "")
			files["a.warc.wet"] = []byte(plain)
			files["members.warc.wet.gz"] = gzipMembers(t, parts...)
			files["single.warc.wet.gz"] = gzipMembers(t, plain)
		}
		for name, data := range files {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				path := writeFile(t, dir, name, data)
				res := readFile(t, path, Options{})
				if res.err != nil {
					t.Fatal(res.err)
				}
				// Exactly the records not lost are read, each once.
				var want, got []string
				lost := map[string]bool{}
				for i := range n {
					id := fmt.Sprintf("<urn:uuid:%d>", i)
					if slices.Contains(tt.lost, i) {
						lost[id] = true
					} else {
						want = append(want, id)
					}
				}
				for _, d := range res.docs {
					got = append(got, d.ID)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("docs %q, want %q", got, want)
				}
				if len(res.rejects) != len(tt.lost)+tt.garbage || len(res.rejects) != len(tt.to) {
					t.Fatalf("rejects %+v, want %d", res.rejects, len(tt.to))
				}
				// Each reject names its skipped range, which ends where
				// the next document (or the file) begins, and starts at
				// the lost record.
				for i, rj := range res.rejects {
					m := skippedRe.FindStringSubmatch(rj.Reason)
					if m == nil {
						t.Fatalf("reject %q: no skipped range", rj.Reason)
					}
					length, _ := strconv.ParseInt(m[1], 10, 64)
					from, _ := strconv.ParseInt(m[2], 10, 64)
					if rj.Skipped != length {
						t.Errorf("reject %+v: Skipped %d, the reason says %d bytes", rj, rj.Skipped, length)
					}
					if from != rj.Offset || (m[3] == "the next record header") != (tt.to[i] == "header") {
						t.Errorf("reject %+v: range from %s to %s, want from its offset to %s", rj, m[2], m[3], tt.to[i])
					}
					end := rj.Offset + length
					var next *Doc
					for j := range res.docs {
						if res.docs[j].Offset >= rj.Offset {
							next = &res.docs[j]
							break
						}
					}
					switch {
					case tt.to[i] == "eof" && next != nil:
						t.Errorf("reject %+v to the end of the file, but doc %s at %d follows", rj, next.ID, next.Offset)
					case tt.to[i] == "header" && (next == nil || next.Offset != end):
						t.Errorf("reject %+v: range ends at %d, next doc %+v", rj, end, next)
					}
					if plain != "" && i < len(tt.lost) {
						// Its offset is the lost record's.
						id := fmt.Sprintf("<urn:uuid:%d>", tt.lost[i])
						if at := recordStart(plain, id); rj.Offset != at {
							t.Errorf("reject %+v at %d, want %d (record %s)", rj, rj.Offset, at, id)
						}
					}
					if tt.damage != nil && !strings.Contains(rj.Reason, "compressed bytes from compressed byte") {
						t.Errorf("reject %q does not name the compressed range", rj.Reason)
					}
				}
				// Offsets of documents in the plain file are their records'.
				if plain != "" {
					for _, d := range res.docs {
						if at := recordStart(plain, d.ID); d.Offset != at {
							t.Errorf("doc %s at %d, want %d", d.ID, d.Offset, at)
						}
					}
				}
				t.Logf("rejects %q", reasons(res.rejects))
			})
		}
	}
}

// recordStart is the offset in plain of the record with the given id: of
// its version line, good or garbled.
func recordStart(plain, id string) int64 {
	return int64(strings.LastIndex(plain[:strings.Index(plain, id)], "/1.0\r\n") - len("WARC"))
}

// withoutLength removes the Content-Length line of a record.
func withoutLength(record string) string {
	return regexp.MustCompile(`Content-Length: \d+\r\n`).ReplaceAllString(record, "")
}

// damageMember compresses each record as a gzip member and damages member
// i with damage.
func damageMember(t *testing.T, records []string, i int, damage func(member []byte)) []byte {
	t.Helper()
	var out []byte
	for j, r := range records {
		m := gzipMembers(t, r)
		if j == i {
			damage(m)
		}
		out = append(out, m...)
	}
	return out
}
