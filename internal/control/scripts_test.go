package control

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/job"
)

// readJSONL reads the ids and texts of a JSONL file.
func readJSONL(t testing.TB, path string) []struct{ ID, Text string } {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs []struct{ ID, Text string }
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var d struct{ ID, Text string }
		if err := json.Unmarshal(line, &d); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	return docs
}

// TestScripts runs jobs on testdata/scripts.jsonl (see testdata/README.md): paragraphs of Chinese,
// Japanese, Korean, Thai, Hindi, English and Russian text, three of each
// with a near copy that has 1% of its characters (1% of its words in the
// spaced scripts) replaced. With the default
// tokenizer every planted pair is listed and the manifest counts the
// documents by script; with --tokenizer words-only the pairs of the
// scripts written without spaces are lost, and the job says so.
func TestScripts(t *testing.T) {
	langs := []string{"zh", "ja", "ko", "th", "hi", "en", "ru"}
	// Words-only loses them in the scripts written without spaces, and in
	// Korean, whose words are short: 1% of syllables edited leaves a
	// Jaccard of about 0.73 between words, 0.83-0.85 between syllables.
	unspaced := []string{"zh", "ja", "ko", "th"}
	tests := []struct {
		tokenizer job.Tokenizer
		missing   []string // languages whose planted pairs are not all found
		warning   string   // a substring of a warning, or ""
	}{
		{"scripts", nil, ""},
		{"words-only", unspaced, "--tokenizer words-only makes one token of each run of letters"},
	}
	for _, tc := range tests {
		t.Run(tc.tokenizer.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cfg := testConfig(t, filepath.Join("testdata", "scripts.jsonl"), out, 1)
			cfg.Params.Tokenizer = tc.tokenizer
			man, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			listed := map[string]bool{}
			for _, p := range readPairs(t, out) {
				listed[p.AID+" "+p.BID] = true
			}
			var missing []string
			for _, lang := range langs {
				found := 0
				for k := range 3 {
					a, b := fmt.Sprintf("%s-%d", lang, k), fmt.Sprintf("%s-%d-near", lang, k)
					if listed[a+" "+b] || listed[b+" "+a] {
						found++
					}
				}
				if found < 3 {
					missing = append(missing, lang)
				}
			}
			if !slices.Equal(missing, tc.missing) {
				t.Errorf("languages with planted pairs not listed: %v, want %v", missing, tc.missing)
			}
			hasWarning := slices.ContainsFunc(man.Warnings, func(w string) bool { return tc.warning != "" && strings.Contains(w, tc.warning) })
			if (tc.warning != "") != hasWarning {
				t.Errorf("warnings %q: want one containing %q", man.Warnings, tc.warning)
			}
			got := map[string]int64{}
			for _, s := range man.Scripts {
				got[s.Script] = s.Docs
				if s.MedianShingles < job.ThinShingles || s.Thin != 0 {
					t.Errorf("script %s: median %d shingles, %d thin: want no thin documents", s.Script, s.MedianShingles, s.Thin)
				}
			}
			scriptOf := map[string]string{"zh": "Han", "ja": "Kana", "ko": "Hangul", "th": "Thai", "hi": "Devanagari", "en": "Latin", "ru": "Cyrillic"}
			want := map[string]int64{}
			for _, d := range readJSONL(t, filepath.Join("testdata", "scripts.jsonl")) {
				want[scriptOf[strings.SplitN(d.ID, "-", 2)[0]]]++
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("documents by script %v, want %v", got, want)
			}
			if man.Params.Tokenizer != tc.tokenizer {
				t.Errorf("manifest tokenizer %q, want %q", man.Params.Tokenizer, tc.tokenizer)
			}
		})
	}
}

// TestScriptWarnings checks when the job warns about thin documents, about
// scripts with no rule of their own, and about --tokenizer words-only on
// scripts written without spaces.
func TestScriptWarnings(t *testing.T) {
	tests := []struct {
		name      string
		tokenizer string
		docs      int64
		scripts   []job.ScriptSummary
		want      []string // substrings, one warning each
	}{
		{"none", "scripts", 100, []job.ScriptSummary{{Script: "Latin", Docs: 100, Thin: 20}}, nil},
		{"thin", "scripts", 100, []job.ScriptSummary{{Script: "Latin", Docs: 70, Thin: 15}, {Script: "Han", Docs: 30, Thin: 6}},
			[]string{"21 of 100 documents (21%) are thin, with fewer than 5 shingles (Latin 15 of 70, Han 6 of 30)"}},
		{"other", "scripts", 100, []job.ScriptSummary{{Script: "Latin", Docs: 98}, {Script: "other", Docs: 2}},
			[]string{"2 documents (2.0%) are mostly in scripts neardup has no rule for"}},
		{"words-only on Thai", "words-only", 100, []job.ScriptSummary{{Script: "Latin", Docs: 90}, {Script: "Thai", Docs: 10}},
			[]string{"10 documents (10.0%) are mostly in scripts written without spaces (Thai), but --tokenizer words-only"}},
		{"scripts on Thai", "scripts", 100, []job.ScriptSummary{{Script: "Latin", Docs: 90}, {Script: "Thai", Docs: 10}}, nil},
		{"words-only character grams on Thai", "words-only char-grams", 100, []job.ScriptSummary{{Script: "Thai", Docs: 100}}, nil},
		{"thin character grams", "scripts char-grams", 10, []job.ScriptSummary{{Script: "Han", Docs: 10, Thin: 5}}, []string{"a shorter --char-grams gives them more"}},
		{"no documents", "scripts", 0, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := job.DefaultParams()
			tokenizer, chars := strings.CutSuffix(tc.tokenizer, " char-grams")
			p.Tokenizer = job.Tokenizer(tokenizer)
			if chars {
				p.CharGrams = 5
			}
			man := &Manifest{Scripts: tc.scripts}
			man.Counts.Docs = tc.docs
			for _, s := range tc.scripts {
				man.Counts.Thin += s.Thin
			}
			got := scriptWarnings(man, p)
			if len(got) != len(tc.want) {
				t.Fatalf("warnings %q, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %q, want it to say %q", got[i], w)
				}
			}
		})
	}
}
