package job

import (
	"encoding/json"
	"testing"

	"github.com/neardup/neardup/pkg/shingle"
)

func TestShingleBins(t *testing.T) {
	prev := -1
	for n := int64(0); n < 1<<20; n++ {
		b := ShingleBin(n)
		if b < prev || b > prev+1 {
			t.Fatalf("ShingleBin(%d) = %d after %d: bins must be consecutive", n, b, prev)
		}
		if low := ShingleBinLow(b); low > n || float64(n-low) > float64(low)/8 {
			t.Fatalf("ShingleBin(%d) = %d, whose lower bound is %d: not within 1/8", n, b, low)
		}
		if b != prev {
			if low := ShingleBinLow(b); low != n {
				t.Fatalf("bin %d starts at %d, ShingleBinLow says %d", b, n, low)
			}
		}
		prev = b
	}
	if b := ShingleBin(1 << 40); b != shingleBins-1 {
		t.Fatalf("ShingleBin(2^40) = %d, want the last bin %d", b, shingleBins-1)
	}
}

func TestScriptStats(t *testing.T) {
	tests := []struct {
		name       string
		counts     []int64
		thin       int64
		median     int64
		mergeFirst int // documents counted in a first map, merged
	}{
		{"one", []int64{7}, 0, 7, 0},
		{"thin ones", []int64{1, 2, 4, 5, 0}, 3, 2, 2},
		{"long", []int64{100, 200, 300, 400, 500}, 0, 288, 3}, // 300 is in the bin [288, 320)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := map[string]*ScriptStats{}, map[string]*ScriptStats{}
			for i, n := range tc.counts {
				m := b
				if i < tc.mergeFirst {
					m = a
				}
				AddDoc(m, shingle.ScriptThai, n)
			}
			st := b["Thai"]
			if x := a["Thai"]; x != nil {
				x.Merge(st)
				st = x
			}
			if st.Docs != int64(len(tc.counts)) || st.Thin != tc.thin || st.MedianShingles() != tc.median {
				t.Fatalf("docs %d thin %d median %d, want %d, %d, %d", st.Docs, st.Thin, st.MedianShingles(), len(tc.counts), tc.thin, tc.median)
			}
		})
	}
	sum := SummariseScripts(map[string]*ScriptStats{"other": {Docs: 1}, "Han": {Docs: 3}, "Latin": {Docs: 3}})
	if len(sum) != 3 || sum[0].Script != "Han" || sum[1].Script != "Latin" || sum[2].Covered {
		t.Fatalf("SummariseScripts = %+v: want Han, Latin, then other (not covered)", sum)
	}
}

// TestParamsTokenizerJSON checks that params without a tokenizer (made
// before it was one) read as words-only, and that an unknown tokenizer
// makes the document model invalid rather than some other rule.
func TestParamsTokenizerJSON(t *testing.T) {
	tests := []struct {
		json string
		want Tokenizer
		ok   bool
	}{
		{`{"method":"minhash","words":5}`, "words-only", true},
		{`{"tokenizer":"scripts"}`, "scripts", true},
		{`{"tokenizer":"words-only"}`, "words-only", true},
		{`{"tokenizer":"scripts-v9"}`, "scripts-v9", false},
	}
	for _, tc := range tests {
		var p Params
		if err := json.Unmarshal([]byte(tc.json), &p); err != nil {
			t.Fatal(err)
		}
		if p.Tokenizer != tc.want {
			t.Errorf("%s: tokenizer %q, want %q", tc.json, p.Tokenizer, tc.want)
		}
		if err := p.ShingleOptions().Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: shingle options error %v, want ok=%v", tc.json, err, tc.ok)
		}
	}
	// A spec holds its params by value: the same rule applies inside it.
	var s Spec
	if err := json.Unmarshal([]byte(`{"job":"j","params":{"words":5}}`), &s); err != nil || s.Params.Tokenizer != "words-only" {
		t.Errorf("spec params: tokenizer %q (err %v), want words-only", s.Params.Tokenizer, err)
	}
}
