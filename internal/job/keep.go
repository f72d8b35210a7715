package job

import (
	"fmt"
	"strings"

	"github.com/neardup/neardup/pkg/formats"
)

// Keep is which document of a cluster is kept, as --keep takes it: first,
// longest, newest, newest:FIELD, or field:NAME with an optional :asc or
// :desc (see KeepRule).
type Keep string

// The rules without a field.
const (
	// KeepFirst keeps the first in input order.
	KeepFirst Keep = "first"
	// KeepLongest keeps the one with the most tokens, the first of those
	// that tie.
	KeepLongest Keep = "longest"
	// KeepNewest keeps the one with the latest date: a WARC or WET
	// record's WARC-Date, a JSONL or Parquet record's "date" field.
	KeepNewest Keep = "newest"
)

// String returns k as --keep takes it.
func (k Keep) String() string { return string(k) }

// Set sets k to the rule s names.
func (k *Keep) Set(s string) error { return set(k, s) }

// Check reports whether k is a rule.
func (k Keep) Check() error {
	_, err := k.Rule()
	return err
}

// KeepKind is the kind of a keep rule.
type KeepKind uint8

// The kinds of keep rules.
const (
	KeepByOrder  KeepKind = iota // first
	KeepByTokens                 // longest
	KeepByDate                   // newest
	KeepByField                  // field:NAME
)

// KeepRule is a parsed --keep: a kind, and for newest and field rules the
// field the map stage reads of each record and the direction. Ties, and
// documents without a value (ranked after every one with a value), go
// to the smallest ordinal: input order.
type KeepRule struct {
	Kind KeepKind
	// Field is the record field ranked by: a JSONL member, a top-level
	// Parquet column, a WARC or WET header (formats.Options.Field). For
	// newest without a field it is "" (see FieldFor).
	Field string
	// Desc keeps the largest value (newest; field rules unless :asc).
	Desc bool
}

// Rule parses k.
func (k Keep) Rule() (KeepRule, error) {
	s := string(k)
	switch {
	case k == KeepFirst:
		return KeepRule{Kind: KeepByOrder}, nil
	case k == KeepLongest:
		return KeepRule{Kind: KeepByTokens}, nil
	case k == KeepNewest:
		return KeepRule{Kind: KeepByDate, Desc: true}, nil
	case strings.HasPrefix(s, "newest:") && len(s) > len("newest:"):
		return KeepRule{Kind: KeepByDate, Field: s[len("newest:"):], Desc: true}, nil
	case strings.HasPrefix(s, "field:"):
		name, desc := s[len("field:"):], true
		if n, ok := strings.CutSuffix(name, ":asc"); ok {
			name, desc = n, false
		} else if n, ok := strings.CutSuffix(name, ":desc"); ok {
			name = n
		}
		if name != "" {
			return KeepRule{Kind: KeepByField, Field: name, Desc: desc}, nil
		}
	}
	return KeepRule{}, fmt.Errorf(`--keep must be first, longest, newest, newest:FIELD or field:NAME[:asc|:desc], not %q`, s)
}

// Ranked reports whether the rule ranks documents by a value read from
// their records.
func (r KeepRule) Ranked() bool { return r.Kind == KeepByDate || r.Kind == KeepByField }

// FieldFor is the field the map stage reads of the records of an input
// of kind kind: the rule's field, or for newest without one, WARC-Date
// of WARC and WET records and "date" of JSONL and Parquet ones; "" for a
// rule that ranks by no field, or a text file, which has none.
func (r KeepRule) FieldFor(kind formats.Kind) string {
	switch {
	case !r.Ranked() || kind == formats.KindText:
		return ""
	case r.Field != "":
		return r.Field
	case kind == formats.KindWARC || kind == formats.KindWET:
		return "WARC-Date"
	}
	return "date"
}
