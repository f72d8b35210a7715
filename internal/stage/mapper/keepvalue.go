package mapper

import (
	"fmt"
	"strconv"
	"time"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/formats"
)

// rankValue is the value the keep rule ranks a document by, from its
// record's value of the rule's field: a number (a date as Unix seconds)
// or a string, or neither and why not (a rule that ranks by no field has
// none, and no problem).
func rankValue(rule job.KeepRule, v formats.Value) (num *float64, str *string, problem string) {
	if !rule.Ranked() {
		return nil, nil, ""
	}
	seconds := func(t time.Time) *float64 {
		s := float64(t.Unix()) + float64(t.Nanosecond())/1e9
		return &s
	}
	switch v.Kind {
	case formats.ValueNone:
		return nil, nil, "has no value (missing or null)"
	case formats.ValueOther:
		return nil, nil, fmt.Sprintf("is %s, not a number, string or date", v.Str)
	case formats.ValueTime:
		return seconds(v.Time), nil, ""
	case formats.ValueNumber:
		return &v.Num, nil, ""
	}
	if rule.Kind == job.KeepByField {
		return nil, &v.Str, ""
	}
	t, ok := parseDate(v.Str)
	if !ok {
		return nil, nil, fmt.Sprintf("is %s, not a date in a known format", strconv.Quote(clip(v.Str, 40)))
	}
	return seconds(t), nil, ""
}

// unranked says why document d of piece has no value of field to rank by.
func unranked(piece formats.Piece, field string, d formats.Doc, problem string) string {
	where := fmt.Sprintf("%s at offset %d", piece.Path, d.Offset)
	if d.Line > 0 {
		where += fmt.Sprintf(" (line %d)", d.Line)
	}
	if field == "" {
		return where + ": a text file's documents have no fields"
	}
	return fmt.Sprintf("%s: %s %s", where, strconv.Quote(field), problem)
}

// dateLayouts are the layouts of the dates the newest rule reads: RFC
// 3339 and ISO 8601 date-times (WARC-Date), with T or a space, with or
// without fractional seconds and a zone (UTC if none), dates alone, HTTP
// dates (RFC 1123) and 14-digit timestamps (CDX, ARC: 20261128103000).
var dateLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02",
	time.RFC1123,
	time.RFC1123Z,
	"20060102150405",
}

// parseDate parses s in one of dateLayouts, in UTC unless it says its
// zone.
func parseDate(s string) (time.Time, bool) {
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// clip shortens s to at most n bytes for a message.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
