// Package benchtext cuts real text into documents for benchmarks and
// statistical tests.
package benchtext

import (
	"math/rand/v2"
	"unicode"
)

// SplitDocs cuts text into documents of lo..hi whitespace-separated words
// (uniformly drawn with the seed), keeping the original bytes.
func SplitDocs(text string, lo, hi int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 0))
	var docs [][]byte
	start, words, want := 0, 0, lo+r.IntN(hi-lo+1)
	inWord := false
	for i, c := range text {
		space := unicode.IsSpace(c)
		if !space && !inWord {
			if words == want {
				docs = append(docs, []byte(text[start:i]))
				start, words, want = i, 0, lo+r.IntN(hi-lo+1)
			}
			words++
		}
		inWord = !space
	}
	if start < len(text) {
		docs = append(docs, []byte(text[start:]))
	}
	return docs
}

// SplitBytes cuts text into documents of about size bytes each, for
// scripts written without spaces: each document ends at the first
// whitespace at or after size bytes, or at the first rune boundary after
// size+64 bytes when there is none, and keeps the original bytes.
func SplitBytes(text string, size int) [][]byte {
	var docs [][]byte
	start := 0
	for i, c := range text {
		if n := i - start; n >= size && (unicode.IsSpace(c) || n >= size+64) {
			docs = append(docs, []byte(text[start:i]))
			start = i
		}
	}
	if start < len(text) {
		docs = append(docs, []byte(text[start:]))
	}
	return docs
}
