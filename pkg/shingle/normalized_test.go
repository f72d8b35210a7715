package shingle

import (
	"math/rand/v2"
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

// TestAppendNormalizedASCII checks the ASCII path of AppendNormalized
// against the reference model, Tokens, on random ASCII texts of every
// byte under every option that could change them.
func TestAppendNormalizedASCII(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := "aZ09 \t\n\r.,-_'|›" // › is not ASCII: those texts take the other path
	for n := range 5000 {
		b := make([]byte, 0, 40)
		for range r.IntN(40) {
			if n%2 == 0 {
				b = append(b, byte(r.IntN(128)))
			} else {
				b = append(b, alphabet[r.IntN(len(alphabet))])
			}
		}
		text := string(b)
		for _, o := range []Options{{}, {DigitsToZero: true}, {StripDiacritics: true}, {Tokenizer: TokenizeWordsOnly}, {CharGrams: 3}} {
			want := strings.Join(Tokens(text, o), " ")
			if got := string(AppendNormalized(nil, text, o)); got != want {
				t.Fatalf("AppendNormalized(%q, %+v) = %q, want %q", text, o, got, want)
			}
		}
	}
}
