package job

import (
	"testing"

	"github.com/neardup/neardup/pkg/formats"
)

// TestKeepRule checks what each --keep means: its kind, field and
// direction, and the field the map stage reads of each kind of input.
func TestKeepRule(t *testing.T) {
	for _, tc := range []struct {
		keep                  Keep
		want                  KeepRule
		jsonl, warc, wet, txt string // FieldFor
	}{
		{"first", KeepRule{Kind: KeepByOrder}, "", "", "", ""},
		{"longest", KeepRule{Kind: KeepByTokens}, "", "", "", ""},
		{"newest", KeepRule{Kind: KeepByDate, Desc: true}, "date", "WARC-Date", "WARC-Date", ""},
		{"newest:crawled", KeepRule{Kind: KeepByDate, Field: "crawled", Desc: true}, "crawled", "crawled", "crawled", ""},
		{"field:quality", KeepRule{Kind: KeepByField, Field: "quality", Desc: true}, "quality", "quality", "quality", ""},
		{"field:quality:desc", KeepRule{Kind: KeepByField, Field: "quality", Desc: true}, "quality", "quality", "quality", ""},
		{"field:rank:asc", KeepRule{Kind: KeepByField, Field: "rank"}, "rank", "rank", "rank", ""},
		{"field:a:b", KeepRule{Kind: KeepByField, Field: "a:b", Desc: true}, "a:b", "a:b", "a:b", ""},
		{"field:WARC-Date:asc", KeepRule{Kind: KeepByField, Field: "WARC-Date"}, "WARC-Date", "WARC-Date", "WARC-Date", ""},
	} {
		got, err := tc.keep.Rule()
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v %v, want %+v", tc.keep, got, err, tc.want)
		}
		for kind, want := range map[formats.Kind]string{formats.KindJSONL: tc.jsonl, formats.KindParquet: tc.jsonl,
			formats.KindWARC: tc.warc, formats.KindWET: tc.wet, formats.KindText: tc.txt} {
			if f := got.FieldFor(kind); f != want {
				t.Errorf("%q: the field of a %s input is %q, want %q", tc.keep, kind, f, want)
			}
		}
	}
}
