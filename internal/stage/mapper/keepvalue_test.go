package mapper

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/worktest"
	"github.com/neardup/neardup/pkg/formats"
	"github.com/neardup/neardup/pkg/records"
)

// TestRankValue checks what each rule ranks a record's value by: dates
// in each layout the newest rule reads (as Unix seconds), numbers and
// strings for field rules, and no value, with why, for the others.
func TestRankValue(t *testing.T) {
	newest, field, first := job.KeepRule{Kind: job.KeepByDate, Desc: true}, job.KeepRule{Kind: job.KeepByField, Field: "q"}, job.KeepRule{}
	str := func(s string) formats.Value { return formats.Value{Kind: formats.ValueString, Str: s} }
	noon := float64(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC).Unix())
	for _, tc := range []struct {
		rule    job.KeepRule
		v       formats.Value
		num     float64 // when hasNum
		hasNum  bool
		str     string // when hasStr
		hasStr  bool
		problem string // a prefix
	}{
		{newest, str("2026-11-28T12:00:00Z"), noon, true, "", false, ""},
		{newest, str("2026-11-28T12:00:00.5Z"), noon + 0.5, true, "", false, ""},
		{newest, str("2026-11-28T13:00:00+01:00"), noon, true, "", false, ""},
		{newest, str("2026-11-28T12:00:00"), noon, true, "", false, ""},
		{newest, str("2026-11-28 12:00:00"), noon, true, "", false, ""},
		{newest, str("2026-11-28 12:00:00Z"), noon, true, "", false, ""},
		{newest, str("2026-11-28T12:00Z"), noon, true, "", false, ""},
		{newest, str("2026-11-28"), noon - 12*3600, true, "", false, ""},
		{newest, str("Sat, 28 Nov 2026 12:00:00 GMT"), noon, true, "", false, ""},
		{newest, str("Sat, 28 Nov 2026 13:00:00 +0100"), noon, true, "", false, ""},
		{newest, str("20261128120000"), noon, true, "", false, ""},
		{newest, formats.Value{Kind: formats.ValueNumber, Num: noon}, noon, true, "", false, ""},
		{newest, formats.Value{Kind: formats.ValueTime, Time: time.Unix(int64(noon), 250e6)}, noon + 0.25, true, "", false, ""},
		{newest, str("yesterday"), 0, false, "", false, `is "yesterday", not a date in a known format`},
		{newest, str("28/11/2026"), 0, false, "", false, `is "28/11/2026", not a date`},
		{newest, formats.Value{}, 0, false, "", false, "has no value"},
		{newest, formats.Value{Kind: formats.ValueOther, Str: "a boolean"}, 0, false, "", false, "is a boolean, not a number, string or date"},
		{field, formats.Value{Kind: formats.ValueNumber, Num: 0.75}, 0.75, true, "", false, ""},
		{field, str("2026-11-28"), 0, false, "2026-11-28", true, ""},
		{field, str(""), 0, false, "", true, ""},
		{field, formats.Value{Kind: formats.ValueTime, Time: time.Unix(int64(noon), 0)}, noon, true, "", false, ""},
		{field, formats.Value{}, 0, false, "", false, "has no value"},
		{first, str("2026-11-28"), 0, false, "", false, ""},
	} {
		num, s, problem := rankValue(tc.rule, tc.v)
		ok := (num != nil) == tc.hasNum && (!tc.hasNum || *num == tc.num) &&
			(s != nil) == tc.hasStr && (!tc.hasStr || *s == tc.str) &&
			strings.HasPrefix(problem, tc.problem) && (problem == "") == (tc.problem == "")
		if !ok {
			t.Errorf("%+v of %+v: %v %v %q, want %v %q %q", tc.rule, tc.v, deref(num), deref(s), problem, tc.num, tc.str, tc.problem)
		}
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestMapKeepValues maps a JSONL chunk under a field rule and the newest
// rule and checks that each document's row of docs/ carries the value
// its record holds, and that the documents without one are counted,
// the first named by its file, offset and line.
func TestMapKeepValues(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "docs.jsonl")
	lines := []string{
		`{"id":"a","text":"one two three four five six","quality":0.5,"date":"2026-11-01T00:00:00Z"}`,
		`{"id":"b","text":"one two three four five seven","quality":"high","date":"2026-11-02"}`,
		`{"id":"c","text":"one two three four five eight","date":"soon"}`,
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nov := func(d int) float64 { return float64(time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC).Unix()) }
	for _, tc := range []struct {
		keep     job.Keep
		want     []string // per document: its keep_num or keep_str, or "-"
		unranked int64
		firstWhy string
	}{
		{"field:quality", []string{"0.5", "high", "-"}, 1, `docs.jsonl at offset 179 (line 3): "quality" has no value`},
		{"newest", []string{ftoa(nov(1)), ftoa(nov(2)), "-"}, 1, `docs.jsonl at offset 179 (line 3): "date" is "soon", not a date`},
		{"first", []string{"-", "-", "-"}, 0, ""},
	} {
		p := worktest.Resolved(t, func(p *job.Params) { p.Partitions = 2; p.Keep = tc.keep })
		st := worktest.NewStore(t)
		res, err := Map(ctx, st, &job.Spec{Params: p}, worktest.WholeChunk(0, path))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := pqfile.Read[records.DocRecord](ctx, st, res.DocFile.Name, &res.DocFile)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows {
			switch {
			case r.KeepNum != nil && r.KeepStr != nil:
				got = append(got, "both")
			case r.KeepNum != nil:
				got = append(got, ftoa(*r.KeepNum))
			case r.KeepStr != nil:
				got = append(got, *r.KeepStr)
			default:
				got = append(got, "-")
			}
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("--keep %s: docs/ values %q, want %q", tc.keep, got, tc.want)
		}
		if res.KeepUnranked != tc.unranked || !strings.Contains(res.KeepProblem, tc.firstWhy) || (tc.firstWhy == "") != (res.KeepProblem == "") {
			t.Errorf("--keep %s: %d unranked (%q), want %d (%q)", tc.keep, res.KeepUnranked, res.KeepProblem, tc.unranked, tc.firstWhy)
		}
	}
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
