package shingle

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/neardup/neardup/internal/benchtext"
)

type corpus struct {
	name string
	docs [][]byte
}

func benchCorpora(b *testing.B) []corpus {
	opticks := readTestdata(b, "Isaac.Newton-Opticks.txt")
	nonASCII := readTestdata(b, "tutor.ru.utf-8") + readTestdata(b, "tutor.el.utf-8") + readTestdata(b, "tutor.fr.utf-8")
	// Scripts written without spaces, and Hindi, in documents of about
	// the bytes of a 300-word English one (1,900).
	perScript := func(name string, copies int) [][]byte {
		return benchtext.SplitBytes(strings.Repeat(readTestdata(b, name)+"\n", copies), 1900)
	}
	return []corpus{
		{"english-300w", benchtext.SplitDocs(opticks, 300, 300, 1)},
		{"short-10-50w", benchtext.SplitDocs(opticks, 10, 50, 2)},
		{"nonascii-300w", benchtext.SplitDocs(nonASCII, 300, 300, 3)},
		{"chinese-1900B", perScript("tutor.zh_cn.utf-8", 1)},
		{"japanese-1900B", perScript("tutor.ja.utf-8", 1)},
		{"korean-1900B", perScript("tutor.ko.utf-8", 1)},
		{"thai-1900B", perScript("prose.th.txt", 6)},
		{"hindi-1900B", perScript("prose.hi.txt", 6)},
	}
}

func totalBytes(docs [][]byte) int64 {
	n := 0
	for _, d := range docs {
		n += len(d)
	}
	return int64(n)
}

// reportPerShingle reports ns/shingle and shingles/s given the shingles
// produced per iteration.
func reportPerShingle(b *testing.B, shingles int) {
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(shingles)
	b.ReportMetric(ns, "ns/shingle")
	b.ReportMetric(1e9/ns, "shingles/s")
}

// BenchmarkTokensModel is the reference model (strings.ToLower + rune loop),
// for comparison with the fast path.
func BenchmarkTokensModel(b *testing.B) {
	for _, c := range benchCorpora(b) {
		b.Run(c.name, func(b *testing.B) {
			strs := make([]string, len(c.docs))
			for i, d := range c.docs {
				strs[i] = string(d)
			}
			b.SetBytes(totalBytes(c.docs))
			b.ReportAllocs()
			for b.Loop() {
				for _, s := range strs {
					Tokens(s, Options{})
				}
			}
		})
	}
}

// BenchmarkTokenise is the first pass of the fast path: SWAR classification
// and lower-casing into the run bitmap.
func BenchmarkTokenise(b *testing.B) {
	for _, c := range benchCorpora(b) {
		b.Run(c.name, func(b *testing.B) {
			s, _ := NewShingler(Options{})
			b.SetBytes(totalBytes(c.docs))
			b.ReportAllocs()
			for b.Loop() {
				for _, d := range c.docs {
					s.scan(d)
				}
			}
		})
	}
}

// BenchmarkHashes is the whole shingle-hashing fast path.
func BenchmarkHashes(b *testing.B) {
	for _, c := range benchCorpora(b) {
		for _, o := range []struct {
			name string
			o    Options
		}{{"words5", Options{}}, {"words5-wordsonly", Options{Tokenizer: TokenizeWordsOnly}}, {"chars4", Options{CharGrams: 4}}} {
			b.Run(c.name+"/"+o.name, func(b *testing.B) {
				s, _ := NewShingler(o.o)
				var dst []uint64
				shingles := 0
				for _, d := range c.docs {
					dst, _ = s.Hashes(dst[:0], d)
					shingles += len(dst)
				}
				b.SetBytes(totalBytes(c.docs))
				b.ReportAllocs()
				for b.Loop() {
					for _, d := range c.docs {
						dst, _ = s.Hashes(dst[:0], d)
					}
				}
				reportPerShingle(b, shingles)
			})
		}
	}
}

// BenchmarkHashString hashes shingle strings one by one (the slow API).
func BenchmarkHashString(b *testing.B) {
	shingles := Shingles(string(benchCorpora(b)[0].docs[0]), Options{})
	n := 0
	for _, s := range shingles {
		n += len(s)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range shingles {
			HashString(s, Options{})
		}
	}
	reportPerShingle(b, len(shingles))
	_ = utf8.RuneError
}

// BenchmarkDominantScript is the per-document cost of naming its script.
func BenchmarkDominantScript(b *testing.B) {
	for _, c := range benchCorpora(b) {
		b.Run(c.name, func(b *testing.B) {
			s := NewScripts()
			b.SetBytes(totalBytes(c.docs))
			b.ReportAllocs()
			for b.Loop() {
				for _, d := range c.docs {
					s.Dominant(d)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(c.docs)), "ns/doc")
		})
	}
}
