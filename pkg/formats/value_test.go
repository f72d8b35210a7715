package formats

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// valueRow is a Parquet file's row with a column of each kind a field
// value may come from.
type valueRow struct {
	ID      string     `parquet:"id"`
	Text    string     `parquet:"text"`
	Quality *float64   `parquet:"quality,optional"`
	Rank    int32      `parquet:"rank"`
	Label   string     `parquet:"label"`
	Crawled *time.Time `parquet:"crawled,optional,timestamp(millisecond)"`
	Day     int32      `parquet:"day,date"` // days since 1970-01-01
	Good    bool       `parquet:"good"`
	Tags    []string   `parquet:"tags"`
}

// TestFieldValue reads Options.Field from each kind of input: a JSONL
// member of each JSON type, a Parquet column of each type, a WARC or
// WET header (its name in any case), and none when the record has no
// such field or Field is "".
func TestFieldValue(t *testing.T) {
	dir := t.TempDir()
	jsonl := writeFile(t, dir, "docs.jsonl", []byte(strings.Join([]string{
		`{"id":"s","text":"a b","date":"2026-11-28T10:00:00Z"}`,
		`{"id":"n","text":"a b","date":-1.5e3}`,
		`{"id":"null","text":"a b","date":null}`,
		`{"id":"missing","text":"a b"}`,
		`{"id":"bool","text":"a b","date":true}`,
		`{"id":"obj","text":"a b","date":{"y":2026}}`,
		`{"id":"esc","text":"a b","d\u0061te":"x\"y"}`,
		`{"id":"nested","text":"a b","meta":{"date":"2020"}}`,
	}, "\n")))
	q := 0.75
	at := time.Date(2026, 11, 28, 10, 30, 0, 0, time.UTC)
	day := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	pq := filepath.Join(dir, "docs.parquet")
	writeParquet(t, pq, []valueRow{
		{ID: "r0", Text: "a b", Quality: &q, Rank: 7, Label: "x", Crawled: &at, Day: int32(day.Unix() / 86400), Good: true, Tags: []string{"t"}},
		{ID: "r1", Text: "a b", Rank: -2, Label: ""},
	}, 10)
	wet := writeFile(t, dir, "docs.warc.wet", []byte(warcRecord("a b", "WARC-Type: conversion", "WARC-Target-URI: http://x/",
		"WARC-Record-ID: <urn:1>", "warc-date: 2026-11-28T10:00:00Z", "Content-Type: text/plain")+
		conversion("<urn:2>", "http://y/", "c d")))
	warc := writeFile(t, dir, "docs.warc", []byte(warcRecord("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>a b</p>",
		"WARC-Type: response", "WARC-Target-URI: http://x/", "WARC-Record-ID: <urn:3>", "WARC-Date: 2026-11-29T00:00:00Z",
		"Content-Type: application/http; msgtype=response")))

	none := Value{}
	str := func(s string) Value { return Value{Kind: ValueString, Str: s} }
	num := func(f float64) Value { return Value{Kind: ValueNumber, Num: f} }
	tm := func(t time.Time) Value { return Value{Kind: ValueTime, Time: t} }
	other := func(s string) Value { return Value{Kind: ValueOther, Str: s} }
	for _, tc := range []struct {
		path, field string
		want        []Value
	}{
		{jsonl, "date", []Value{str("2026-11-28T10:00:00Z"), num(-1500), none, none, other("a boolean"), other("an object"), str(`x"y`), none}},
		{jsonl, "", []Value{none, none, none, none, none, none, none, none}},
		{jsonl, "id", []Value{str("s"), str("n"), str("null"), str("missing"), str("bool"), str("obj"), str("esc"), str("nested")}},
		{pq, "quality", []Value{num(0.75), none}},
		{pq, "rank", []Value{num(7), num(-2)}},
		{pq, "label", []Value{str("x"), str("")}},
		{pq, "crawled", []Value{tm(at), none}},
		{pq, "day", []Value{tm(day), tm(time.Unix(0, 0).UTC())}},
		{pq, "good", []Value{other("a BOOLEAN column"), other("a BOOLEAN column")}},
		{pq, "tags", []Value{other("a repeated column"), other("a repeated column")}},
		{pq, "absent", []Value{none, none}},
		{wet, "WARC-Date", []Value{str("2026-11-28T10:00:00Z"), none}},
		{warc, "warc-date", []Value{str("2026-11-29T00:00:00Z")}},
		{warc, "", []Value{none}},
	} {
		res := readFile(t, tc.path, Options{Field: tc.field})
		if res.err != nil || len(res.rejects) > 0 {
			t.Fatalf("%s: %v %v", tc.path, res.err, res.rejects)
		}
		var got []Value
		for _, d := range res.docs {
			got = append(got, d.Value)
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s field %q: %d documents, want %d", filepath.Base(tc.path), tc.field, len(got), len(tc.want))
			continue
		}
		for i := range got {
			g, w := got[i], tc.want[i]
			if g.Kind != w.Kind || g.Num != w.Num || g.Str != w.Str || !g.Time.Equal(w.Time) {
				t.Errorf("%s field %q, document %d: %+v, want %+v", filepath.Base(tc.path), tc.field, i, g, w)
			}
		}
	}
}
