package corpus

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Limits on the sentences kept in a Pool.
const (
	// MinSentenceWords is the fewest whitespace-separated words a sentence
	// needs to enter the pool.
	MinSentenceWords = 6
	// MaxSentenceWords is the most words a pooled sentence may have.
	MaxSentenceWords = 80
	// MinPoolSize is the fewest distinct sentences a Pool must hold to keep
	// unrelated generated documents dissimilar.
	MinPoolSize = 2000
)

// Pool is a de-duplicated set of English sentences, each split into words,
// plus the vocabulary used for word substitutions and insertions. A Pool is
// read-only after construction and safe for concurrent use.
type Pool struct {
	sentences [][]string
	vocab     []string
}

// bundled holds the prose that ships with neardup (see prose/README.md),
// built into every program that imports this package, so that cmd/gencorpus
// needs no files beside it (in a container image, say).
//
//go:embed prose/*.txt
var bundled embed.FS

// BundledProseDir is the directory, relative to this package, that the
// bundled prose is embedded from. LoadPool of it builds the same Pool as
// BundledPool.
const BundledProseDir = "prose"

// bundledPool builds the Pool of the bundled prose once.
var bundledPool = sync.OnceValues(func() (*Pool, error) {
	sub, err := fs.Sub(bundled, BundledProseDir)
	if err != nil {
		return nil, fmt.Errorf("bundled prose: %w", err)
	}
	return loadPool(sub, "(bundled)")
})

// BundledPool returns the Pool of the prose built into this package: the
// same sentences, in the same order, as LoadPool of BundledProseDir, so a
// corpus generated from either is byte-identical. The Pool is built on the
// first call and shared (a Pool is read-only).
func BundledPool() (*Pool, error) { return bundledPool() }

// PoolFrom returns LoadPool(dir), or BundledPool when dir is empty: what a
// command's -prose flag means.
func PoolFrom(dir string) (*Pool, error) {
	if dir == "" {
		return BundledPool()
	}
	return LoadPool(dir)
}

// LoadPool reads every *.txt file in dir, in lexical file-name order, and
// builds a Pool from their sentences. The order matters: it makes the pool,
// and therefore every generated corpus, a pure function of the files.
func LoadPool(dir string) (*Pool, error) { return loadPool(os.DirFS(dir), dir) }

// loadPool builds a Pool from the *.txt files at the root of fsys, in
// lexical file-name order; dir names fsys in errors.
func loadPool(fsys fs.FS, dir string) (*Pool, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read prose directory %q: %w", dir, err)
	}
	var texts []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".txt") {
			continue
		}
		b, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, fmt.Errorf("read prose file %q in %q: %w", e.Name(), dir, err)
		}
		texts = append(texts, string(b))
	}
	if len(texts) == 0 {
		return nil, fmt.Errorf("prose directory %q has no .txt files", dir)
	}
	p := NewPool(texts)
	if p.Len() < MinPoolSize {
		return nil, fmt.Errorf("prose directory %q yields %d distinct sentences, need at least %d", dir, p.Len(), MinPoolSize)
	}
	return p, nil
}

// NewPool builds a Pool from raw texts. Sentences that are too short, too
// long, or not mostly letters are dropped, and repeated sentences (compared
// case-insensitively on their words) are kept once.
func NewPool(texts []string) *Pool {
	p := &Pool{}
	seen := make(map[string]struct{})
	vocab := make(map[string]struct{})
	for _, text := range texts {
		for _, s := range SplitSentences(text) {
			if !proseLike(s) {
				continue
			}
			words := strings.Fields(s)
			if len(words) < MinSentenceWords || len(words) > MaxSentenceWords {
				continue
			}
			key := strings.ToLower(strings.Join(words, " "))
			if _, dup := seen[key]; dup {
				continue
			}
			seen[key] = struct{}{}
			p.sentences = append(p.sentences, words)
			for _, w := range words {
				addVocab(vocab, w)
			}
		}
	}
	p.vocab = make([]string, 0, len(vocab))
	for w := range vocab {
		p.vocab = append(p.vocab, w)
	}
	slices.Sort(p.vocab)
	return p
}

// Len returns the number of sentences in the pool.
func (p *Pool) Len() int { return len(p.sentences) }

// VocabularySize returns the number of distinct vocabulary words.
func (p *Pool) VocabularySize() int { return len(p.vocab) }

// Sentence returns sentence i as a string.
func (p *Pool) Sentence(i int) string { return strings.Join(p.sentences[i], " ") }

// addVocab records the lowercase letter core of w if it is a plain word of
// three or more letters.
func addVocab(vocab map[string]struct{}, w string) {
	w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) })
	if utf8.RuneCountInString(w) < 3 {
		return
	}
	for _, r := range w {
		if r > unicode.MaxASCII || !unicode.IsLetter(r) {
			return
		}
	}
	vocab[strings.ToLower(w)] = struct{}{}
}

// proseLike reports whether s looks like running prose: no editorial
// markup and at least 80% letters among its non-space characters.
func proseLike(s string) bool {
	if strings.ContainsAny(s, "[]{}|*=<>#\\") {
		return false
	}
	letters, other := 0, 0
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			letters++
		case unicode.IsSpace(r):
		default:
			other++
		}
	}
	return letters > 0 && letters*5 >= (letters+other)*4
}

// SplitSentences splits text into sentences. Paragraphs are separated by
// blank lines; within a paragraph, lines are joined, whitespace is
// collapsed and Gutenberg italics markers ("_") are dropped. A sentence ends
// at '.', '!' or '?' (plus any closing quotes or brackets) followed by a
// space and an upper-case letter or opening quote, unless the word before
// the period is a known abbreviation or a single initial.
func SplitSentences(text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	var out []string
	for _, para := range strings.Split(text, "\n\n") {
		p := strings.Join(strings.Fields(strings.ReplaceAll(para, "_", "")), " ")
		if p == "" {
			continue
		}
		out = appendSentences(out, p)
	}
	return out
}

// appendSentences appends the sentences of the whitespace-normalised
// paragraph p to out.
func appendSentences(out []string, p string) []string {
	start := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		j := i + 1
		for j < len(p) {
			r, size := utf8.DecodeRuneInString(p[j:])
			if !strings.ContainsRune("\"')’”", r) {
				break
			}
			j += size
		}
		if j >= len(p) || p[j] != ' ' || j+1 >= len(p) {
			continue
		}
		next, _ := utf8.DecodeRuneInString(p[j+1:])
		if !unicode.IsUpper(next) && !strings.ContainsRune("\"'‘“(", next) {
			continue
		}
		if c == '.' && isAbbreviation(p[start:i]) {
			continue
		}
		if s := strings.TrimSpace(p[start:j]); s != "" {
			out = append(out, s)
		}
		start = j + 1
		i = j
	}
	if s := strings.TrimSpace(p[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// isAbbreviation reports whether the text before a period ends in a known
// abbreviation or a single letter (an initial).
func isAbbreviation(before string) bool {
	word := before
	if k := strings.LastIndexFunc(before, func(r rune) bool {
		return r == ' ' || strings.ContainsRune("(\"'‘“", r)
	}); k >= 0 {
		_, size := utf8.DecodeRuneInString(before[k:])
		word = before[k+size:]
	}
	if utf8.RuneCountInString(word) == 1 {
		return true
	}
	switch strings.ToLower(word) {
	case "mr", "mrs", "dr", "st", "messrs", "viz", "vol", "fig", "no",
		"prop", "exper", "ch", "jun", "sen", "capt", "col", "gen", "rev",
		"lib", "co", "i.e", "e.g", "ibid", "vid", "cap":
		return true
	}
	return false
}
