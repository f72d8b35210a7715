package shingle

import (
	"unicode"
	"unicode/utf8"
)

// exception is a run with non-ASCII bytes, left for unicodeRun: its index m
// among the runs and its bytes text[i:j].
type exception struct{ m, i, j int }

// anyHigh reports whether a byte in text[i:j] is >= 0x80.
func (s *Shingler) anyHigh(i, j int) bool {
	for i < j {
		w := s.high[i>>6] >> (i & 63)
		span := 64 - i&63
		if j-i < span {
			w &= 1<<uint(j-i) - 1
		}
		if w != 0 {
			return true
		}
		i += span
	}
	return false
}

// unicodeRun appends the unit hashes of the tokens of a run that contains
// non-ASCII bytes; low is the run's lower-cased copy (valid for its ASCII
// bytes). It follows [Tokens].
func (s *Shingler) unicodeRun(words []uint64, run, low []byte) []uint64 {
	wb := s.word[:0]
	single := false // wb is a token of one character (and its marks)
	for i := 0; i < len(run); {
		if run[i] < utf8.RuneSelf { // an ASCII letter or digit: runs hold no other ASCII
			if single {
				words = s.token(words, wb, true)
				wb, single = wb[:0], false
			}
			wb = append(wb, low[i])
			i++
			continue
		}
		class, size := s.decodeClass(run, i)
		i += size
		switch {
		case class < 0:
			if class == separator && len(wb) > 0 {
				words = s.token(words, wb, single)
				wb, single = wb[:0], false
			}
		case class&charFlag != 0:
			if len(wb) > 0 {
				words = s.token(words, wb, single)
			}
			wb, single = utf8.AppendRune(wb[:0], class&^charFlag), true
		case class&extendFlag != 0:
			if len(wb) > 0 {
				wb = utf8.AppendRune(wb, class&^extendFlag)
			}
		default:
			if single {
				words = s.token(words, wb, true)
				wb, single = wb[:0], false
			}
			wb = utf8.AppendRune(wb, class)
		}
	}
	if len(wb) > 0 {
		words = s.token(words, wb, single)
	}
	s.word = wb[:0]
	return words
}

// token appends the unit hash of the token wb to words, and notes its
// index if it is a token of one character.
func (s *Shingler) token(words []uint64, wb []byte, single bool) []uint64 {
	if single {
		i := len(words)
		for len(s.chars) <= i>>6 {
			s.chars = append(s.chars, 0)
		}
		s.chars[i>>6] |= 1 << (i & 63)
		s.anyChar = true
	}
	return append(words, unitHash(wb))
}

// winnow keeps, of the shingle hashes sh of a text of ntok tokens, those
// [Shingles] keeps (see winnowed): all but the shingles made only of
// one-character tokens, of which it keeps the least of every window of
// CharWindow. It moves the kept ones to the front, in order, and returns
// their number.
func (s *Shingler) winnow(sh []uint64, ntok int) int {
	k := s.k
	flags := s.flags[:0]
	run := 0 // one-character tokens ending at token t
	for t := range ntok {
		if t>>6 < len(s.chars) && s.chars[t>>6]>>(t&63)&1 != 0 {
			run++
		} else {
			run = 0
		}
		if t >= k-1 {
			flags = append(flags, run >= k)
		}
	}
	s.flags = flags
	n := 0
	for i := 0; i < len(sh); {
		if !flags[i] {
			sh[n] = sh[i]
			n++
			i++
			continue
		}
		j := i
		for j < len(sh) && flags[j] {
			j++
		}
		r := append(s.win[:0], sh[i:j]...) // n <= i: copy before writing
		s.win = r
		last := -1
		for w := 0; w == 0 || w+CharWindow <= len(r); w++ {
			least := w
			for p := w; p < min(w+CharWindow, len(r)); p++ {
				if r[p] <= r[least] {
					least = p
				}
			}
			if least != last { // the least moves right only
				sh[n] = r[least]
				n++
				last = least
			}
		}
		i = j
	}
	return n
}

// classify returns the class of r: the token rune r becomes (lower-cased
// and normalised) with the flag of its kind, or separator, or deleted.
func (s *Shingler) classify(r rune) int32 {
	low := unicode.ToLower(r)
	r = s.o.mapLowered(low)
	if r < 0 {
		return deleted
	}
	switch s.o.kindOf(low) { // as in tokenize: before DigitsToZero
	case kindWord:
		return r
	case kindChar:
		return r | charFlag
	case kindExtend:
		return r | extendFlag
	}
	return separator
}

// decodeClass returns the class of the rune starting at text[i], which is
// not ASCII, and its size; invalid UTF-8 is a one-byte separator.
func (s *Shingler) decodeClass(text []byte, i int) (int32, int) {
	if c := text[i]; c >= 0xc2 && c <= 0xdf && i+1 < len(text) {
		if d := text[i+1]; d >= 0x80 && d <= 0xbf { // 2 bytes: cached
			return s.small[rune(c&0x1f)<<6|rune(d&0x3f)], 2
		}
	}
	r, size := utf8.DecodeRune(text[i:])
	if r == utf8.RuneError && size == 1 {
		return separator, 1
	}
	if r > 0xffff {
		return s.classify(r), size
	}
	// The Basic Multilingual Plane: classified once per Shingler, on
	// first use (0 is no class: U+0000 is a separator, never looked up
	// here).
	if s.bmp == nil {
		s.bmp = make([]int32, 0x10000)
	}
	c := s.bmp[r]
	if c == 0 {
		c = s.classify(r)
		s.bmp[r] = c
	}
	return c, size
}

// charHashes is Hashes in character mode; it returns dst and the number
// of tokens.
func (s *Shingler) charHashes(dst []uint64, text []byte) ([]uint64, int) {
	tokens := 0
	inToken := false
	space := s.ascii[' ']
	for i := 0; i < len(text); {
		var class int32
		if c := text[i]; c < utf8.RuneSelf {
			class = s.small[c]
			i++
		} else {
			var size int
			class, size = s.decodeClass(text, i)
			i += size
		}
		if class == deleted {
			continue
		}
		if class == separator {
			inToken = false
			continue
		}
		if class&extendFlag != 0 {
			if !inToken {
				continue // a mark with no token to continue
			}
			class &^= extendFlag
		}
		if !inToken {
			inToken = true
			tokens++
			if tokens > 1 {
				dst = s.push(dst, space)
			}
		}
		if class < utf8.RuneSelf {
			dst = s.push(dst, s.ascii[class])
		} else {
			dst = s.push(dst, runeHash(class))
		}
	}
	return dst, tokens
}
