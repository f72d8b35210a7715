package shingle

import (
	"strings"
	"testing"
)

// TestAppendNormalized checks that the normalised text is the tokens of
// the reference model joined by single spaces, whatever the options.
func TestAppendNormalized(t *testing.T) {
	tests := []struct {
		text string
		o    Options
		want string
	}{
		{"  Hello,   WORLD!  ", Options{}, "hello world"},
		{"Call 555-1234 now", Options{DigitsToZero: true}, "call 000 0000 now"},
		{"Café crème", Options{StripDiacritics: true}, "cafe creme"},
		{"---", Options{}, ""},
		{"", Options{}, ""},
		{"中文 text", Options{}, "中 文 text"},
		{"中文 text", Options{Tokenizer: TokenizeWordsOnly}, "中文 text"},
	}
	for _, tc := range tests {
		got := string(AppendNormalized([]byte("x:"), tc.text, tc.o))
		if got != "x:"+tc.want {
			t.Errorf("AppendNormalized(%q, %+v) = %q, want %q", tc.text, tc.o, got, "x:"+tc.want)
		}
		if ref := strings.Join(Tokens(tc.text, tc.o), " "); ref != tc.want {
			t.Errorf("Tokens(%q) joined = %q, want %q", tc.text, ref, tc.want)
		}
	}
}
