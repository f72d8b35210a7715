package benchtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitDocs(t *testing.T) {
	text := strings.Repeat("one two  three\nfour ", 50) // 200 words
	docs := SplitDocs(text, 3, 7, 1)
	var joined strings.Builder
	words := 0
	for i, d := range docs {
		joined.Write(d)
		n := len(strings.Fields(string(d)))
		words += n
		if i < len(docs)-1 && (n < 3 || n > 7) {
			t.Fatalf("doc %d has %d words, want 3..7", i, n)
		}
	}
	if joined.String() != text || words != 200 {
		t.Fatalf("documents do not add up to the text (%d words)", words)
	}
}

func TestSplitBytes(t *testing.T) {
	tests := []struct {
		name string
		text string
		size int
	}{
		{"han without spaces", strings.Repeat("東京タワーは高い。", 100), 100},
		{"thai with sentence spaces", strings.Repeat("สวัสดีครับ ", 80), 50},
		{"shorter than one document", "abc", 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			docs := SplitBytes(tc.text, tc.size)
			var joined strings.Builder
			for i, d := range docs {
				joined.Write(d)
				if !utf8.Valid(d) {
					t.Fatalf("doc %d is cut inside a rune", i)
				}
				if i < len(docs)-1 && (len(d) < tc.size || len(d) > tc.size+64+utf8.UTFMax) {
					t.Fatalf("doc %d has %d bytes, want %d..%d", i, len(d), tc.size, tc.size+64+utf8.UTFMax)
				}
			}
			if joined.String() != tc.text {
				t.Fatal("documents do not add up to the text")
			}
		})
	}
}
