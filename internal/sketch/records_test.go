package sketch

import (
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/textstore"
)

// TestResketcherEntry checks that a document sketched again for
// verification (Entry) has the record Record gives it, but for the set's
// bytes, and the set those bytes encode, for every kind of signature; and
// that both refuse a text without shingles alike.
func TestResketcherEntry(t *testing.T) {
	docs := []textstore.Doc{
		{ID: "a", URL: "http://a.example/", Text: []byte("the quick brown fox jumps over the lazy dog and the quick brown fox sleeps")},
		{ID: "b", Text: []byte("один два три четыре пять шесть семь восемь девять десять один два")},
		{ID: "c", Text: []byte("短い日本語の文書ですがシングルはいくつかあります。")},
	}
	for _, tt := range []struct {
		name string
		set  func(*job.Params)
	}{
		{"minhash exact", func(p *job.Params) {}},
		{"minhash estimate", func(p *job.Params) { p.Verify = job.VerifyEstimate }},
		{"simhash tf", func(p *job.Params) { p.Method, p.SimHashWeights = job.MethodSimHash, job.WeightsTF }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := resolved(t, tt.set)
			rs, err := NewResketcher(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range docs {
				rec, err := rs.Record(d)
				if err != nil {
					t.Fatal(err)
				}
				want, err := DecodeSet(rec.Shingles)
				if err != nil {
					t.Fatal(err)
				}
				got, set, err := rs.Entry(d)
				if err != nil {
					t.Fatal(err)
				}
				if got.ID != rec.ID || got.URL != rec.URL || !slices.Equal(got.Sig, rec.Sig) || got.Shingles != nil {
					t.Errorf("%s: Entry's record %+v, want %+v without Shingles", d.ID, got, rec)
				}
				if !slices.Equal(set, want) || (p.Verify == job.VerifyExact) != (set != nil) {
					t.Errorf("%s: Entry's set of %d, Record's of %d (verify %s)", d.ID, len(set), len(want), p.Verify)
				}
			}
			empty := textstore.Doc{ID: "e", Text: []byte("   ")}
			if _, err := rs.Record(empty); err == nil {
				t.Error("Record took a text without shingles")
			}
			if _, _, err := rs.Entry(empty); err == nil {
				t.Error("Entry took a text without shingles")
			}
		})
	}
}
