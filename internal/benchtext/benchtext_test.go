package benchtext

import (
	"strings"
	"testing"
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
