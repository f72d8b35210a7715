package shingle

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// SWAR constants: every byte of the word set to the given value.
const (
	bytes7f = 0x7f7f7f7f7f7f7f7f
	bytes80 = 0x8080808080808080
	bytes20 = 0x2020202020202020
	bytes1f = 0x1f1f1f1f1f1f1f1f // 0x80-'a'
	bytes05 = 0x0505050505050505 // 0x7f-'z'
	bytes50 = 0x5050505050505050 // 0x80-'0'
	bytes46 = 0x4646464646464646 // 0x7f-'9'
	bytes01 = 0x0101010101010101
	gather  = 0x0102040810204080 // moves bit 0 of byte i to bit 56+i
)

// classify8 returns, for the 8 bytes of x, 0x80 in each byte that is an
// ASCII letter, resp. an ASCII digit, resp. >= 0x80.
func classify8(x uint64) (letters, digits, high uint64) {
	high = x & bytes80
	y := x & bytes7f
	y2 := y | bytes20
	letters = (y2 + bytes1f) &^ (y2 + bytes05) & bytes80 &^ high
	digits = (y + bytes50) &^ (y + bytes46) & bytes80 &^ high
	return letters, digits, high
}

// movemask packs the top bit of each byte of m (other bits zero) into 8 bits.
func movemask(m uint64) uint64 {
	return ((m >> 7) * gather) >> 56
}

// Shingler computes shingle hashes fast. It keeps reusable buffers, so a
// Shingler must not be used by several goroutines at once; after a few
// documents it allocates nothing but the growth of dst.
type Shingler struct {
	o     Options
	k     int    // units per shingle
	pk    uint64 // polyP^k
	pk1   uint64 // polyP^(k-1)
	ring  [MaxGrams]uint64
	low   []byte   // lower-cased copy of the text plus lowPad zero bytes
	runs  []uint64 // bit i set: byte i is an ASCII letter or digit or >= 0x80
	high  []uint64 // bit i set: byte i >= 0x80
	word  []byte   // the current word on the Unicode path
	words []uint64 // the word hashes of the current text
	spare []uint64 // second buffer for words
	exc   []exception
	masks [8]uint64 // masks[r] has the low r bytes set
	ascii [128]uint64
	small [0x800]int32 // classify of every rune below U+0800
	bmp   []int32      // classify of runes below U+10000 met so far (0: not yet), made on first use

	// One-character tokens of the current text: bit i of chars is set
	// when words[i] is one (anyChar: some bit is set); flags and win are
	// the winnowing's buffers.
	chars   []uint64
	anyChar bool
	flags   []bool
	win     []uint64

	avx2       bool   // use scanBlocksAVX2, runBoundsBMI and hashBoundsBMI
	zeroDigits uint64 // 0x0f if DigitsToZero

	// rolling state, shared with the Unicode paths
	s   uint64
	cnt int
}

// NewShingler returns a Shingler for o.
func NewShingler(o Options) (*Shingler, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	s := &Shingler{o: o, k: o.grams(), pk: 1}
	for i := 0; i < s.k; i++ {
		s.pk1 = s.pk
		s.pk *= polyP
	}
	for c := range s.ascii {
		s.ascii[c] = shortHash(uint64(c), 1)
	}
	for r := range s.masks {
		s.masks[r] = 1<<(8*r) - 1
	}
	s.avx2 = hasAVX2()
	if o.DigitsToZero {
		s.zeroDigits = 0x0f
	}
	for r := range s.small {
		s.small[r] = s.classify(rune(r))
	}
	return s, nil
}

// Options returns the options of s.
func (s *Shingler) Options() Options { return s.o }

// push adds the hash w of the next unit and appends a shingle hash once k
// units are known.
func (s *Shingler) push(dst []uint64, w uint64) []uint64 {
	old := s.ring[(s.cnt-s.k)&(MaxGrams-1)]
	s.ring[s.cnt&(MaxGrams-1)] = w
	s.s = s.s*polyP + w - old*s.pk
	s.cnt++
	if s.cnt >= s.k {
		dst = append(dst, finish(s.s, s.k))
	}
	return dst
}

// Hashes appends to dst the hash of every shingle of text in document order
// (repeats kept) and returns it together with the number of tokens of
// text. For every text the set of appended values equals
// {HashString(sh, o) : sh in Shingles(string(text), o)}.
//
// Texts longer than 4 GiB - 1 byte are not supported (Hashes panics).
func (s *Shingler) Hashes(dst []uint64, text []byte) ([]uint64, int) {
	if uint64(len(text)) > maxText {
		panic("shingle: text longer than 4 GiB - 1")
	}
	s.s, s.cnt = 0, 0
	var tokens int
	if s.o.CharGrams > 0 {
		s.ring = [MaxGrams]uint64{}
		dst, tokens = s.charHashes(dst, text)
	} else {
		dst = s.wordHashes(dst, text)
		tokens = s.cnt
	}
	if s.cnt > 0 && s.cnt < s.k {
		dst = append(dst, finish(s.s, s.cnt))
	}
	return dst, tokens
}

// maxText is the longest text Hashes accepts: run bounds are packed as two
// 32-bit offsets.
const maxText = 1<<32 - 1

// lowPad is the number of zero bytes after the lower-cased copy, so that
// 16-byte loads at any text position stay in bounds.
const lowPad = 16

// scan fills s.low, s.runs and s.high for text (plus a zero word after
// the last block) and reports whether text has a byte >= 0x80.
func (s *Shingler) scan(text []byte) bool {
	n := len(text)
	nb := (n + 63) >> 6
	if cap(s.low) < n+lowPad {
		s.low = make([]byte, n+lowPad, n+n/4+64)
	}
	low := s.low[:n+lowPad]
	s.low = low
	if cap(s.runs) < nb+1 {
		s.runs = make([]uint64, nb+1, nb+nb/4+4)
		s.high = make([]uint64, nb+1, nb+nb/4+4)
	}
	// runs and high get one more, zero, word: a block past the text.
	runs, high := s.runs[:nb+1], s.high[:nb+1]
	s.runs, s.high = runs, high
	runs[nb], high[nb] = 0, 0
	full := n >> 6
	var all uint64
	if full > 0 {
		all = s.scanBlocks(text[:full*64], low[:full*64], runs[:full], high[:full])
	}
	if full < nb { // the last, partial block, via a zero-padded copy
		var buf, lowBuf [64]byte
		copy(buf[:], text[full*64:])
		all |= s.scanBlocks(buf[:], lowBuf[:], runs[full:nb], high[full:nb])
		copy(low[full*64:], lowBuf[:n-full*64])
	}
	clear(low[n:])
	return all != 0
}

// scanBlocks classifies len(runs) whole 64-byte blocks of text (see
// scanBlocksGo) and returns the OR of the high words.
func (s *Shingler) scanBlocks(text, low []byte, runs, high []uint64) uint64 {
	if s.avx2 {
		return scanBlocksAVX2(&text[0], &low[0], &runs[0], &high[0], len(runs), s.zeroDigits)
	}
	return scanBlocksGo(text, low, runs, high, s.zeroDigits)
}

// scanBlocksGo is the portable block scanner: for each 64-byte block i of
// text, bit j of runs[i] is set if byte j is an ASCII letter or digit or is
// >= 0x80, bit j of high[i] if it is >= 0x80; low receives the text with
// ASCII letters lower-cased and, if zeroDigits is 0x0f, ASCII digits
// replaced by '0' (other bytes unchanged). It returns the OR of the high
// words. scanBlocksAVX2 computes exactly the same.
func scanBlocksGo(text, low []byte, runs, high []uint64, zeroDigits uint64) uint64 {
	var all uint64
	for blk := range runs {
		var rw, hw uint64
		for j := range 8 {
			x := binary.LittleEndian.Uint64(text[blk*64+j*8:])
			l, d, h := classify8(x)
			binary.LittleEndian.PutUint64(low[blk*64+j*8:], (x|l>>2)&^(d>>7*zeroDigits))
			rw |= movemask(l|d|h) << (8 * j)
			hw |= movemask(h) << (8 * j)
		}
		runs[blk], high[blk] = rw, hw
		all |= hw
	}
	return all
}

// wordHashes is Hashes in word mode: it hashes every word into s.words,
// then rolls the shingle hashes over them.
func (s *Shingler) wordHashes(dst []uint64, text []byte) []uint64 {
	words := s.hashWords(text)
	s.words = words
	k := s.k
	if len(words) < k {
		// 0 words: no shingle; 1..k-1 words: one shingle of all of them.
		for _, w := range words {
			s.s = s.s*polyP + w
		}
		s.cnt = len(words)
		return dst
	}
	n := len(dst)
	dst = slices.Grow(dst, len(words)-k+1)[:n+len(words)-k+1]
	roll(dst[n:], words, k, s.pk)
	s.cnt = len(words)
	if s.anyChar {
		dst = dst[:n+s.winnow(dst[n:], len(words))]
	}
	return dst
}

// roll stores in out the hashes of the len(out) = len(words)-k+1 shingles
// of k words, rolling S_(i+1) = S_i*P + (w_(i+k) - w_i*P^k), pk = P^k, so
// that the loop-carried chain is one multiply and one add. It calls
// nothing, so that its state stays in registers.
func roll(out, words []uint64, k int, pk uint64) {
	var st uint64
	for _, w := range words[:k] {
		st = st*polyP + w
	}
	tag := uint64(k) * lengthTag
	out[0] = finishTagged(st ^ tag)
	out = out[1:]
	old := words[:len(out)]
	next := words[k:]
	next = next[:len(out)]
	for i := range out {
		st = st*polyP + (next[i] - old[i]*pk)
		out[i] = finishTagged(st ^ tag)
	}
}

// hashWords returns the unit hashes of the words of text, in order, in
// s.words's storage. Runs made of ASCII letters and digits are words and
// are hashed by the fast loops; runs with bytes >= 0x80 are split into
// words by unicodeRun.
func (s *Shingler) hashWords(text []byte) []uint64 {
	n := len(text)
	if s.anyChar {
		clear(s.chars)
		s.anyChar = false
	}
	hasHigh := s.scan(text)
	maxRuns := n/2 + 1 // runs are separated by at least one byte
	if cap(s.words) < maxRuns {
		s.words = make([]uint64, maxRuns+maxRuns/4)
	}
	words := s.words[:cap(s.words)]
	words = words[:s.runBounds(s.runs, words)]
	var exc []exception
	if hasHigh {
		exc = s.exc[:0]
		high := s.high
		for m, b := range words {
			i, j := int(b>>32), int(uint32(b))
			if high[i>>6]|high[(j-1)>>6] == 0 && (j-1)>>6-i>>6 <= 1 {
				continue // the blocks of the run have no byte >= 0x80
			}
			if s.anyHigh(i, j) {
				exc = append(exc, exception{m, i, j})
			}
		}
		s.exc = exc[:0]
	}
	s.hashBounds(s.low, words)
	if len(exc) == 0 {
		return words
	}
	// Replace the hash of each run with non-ASCII bytes by the hashes of
	// its words.
	out := s.spare[:0]
	prev := 0
	for _, e := range exc {
		out = append(out, words[prev:e.m]...)
		out = s.unicodeRun(out, text[e.i:e.j], s.low[e.i:e.j])
		prev = e.m + 1
	}
	out = append(out, words[prev:]...)
	s.words, s.spare = out, words
	return out
}

// runBounds stores in words the bounds of every run as i<<32 | j (the run
// is text[i:j]) and returns their number. runs must end with a zero word (a
// block past the text), and words must have room for every run.
func (s *Shingler) runBounds(runs []uint64, words []uint64) int {
	if s.avx2 && len(runs) > 1 {
		return runBoundsBMI(&runs[0], len(runs)-1, &words[0])
	}
	return runBoundsGo(runs, words)
}

// runBoundsGo is the portable runBounds.
func runBoundsGo(runs []uint64, words []uint64) (m int) {
	var carry uint64
	pend := -1 // start of a run that goes on past the current block
	for blk := 0; blk+1 < len(runs); blk++ {
		rw := runs[blk]
		starts := rw &^ (rw<<1 | carry)
		ends := rw &^ (rw>>1 | runs[blk+1]<<63) // the last byte of each run
		carry = rw >> 63
		base := blk << 6
		for ends != 0 {
			i := pend
			if i < 0 {
				i = base + bits.TrailingZeros64(starts)
				starts &= starts - 1
			}
			pend = -1
			j := base + bits.TrailingZeros64(ends) + 1
			ends &= ends - 1
			words[m] = uint64(i)<<32 | uint64(j)
			m++
		}
		if starts != 0 { // a run that ends in a later block
			pend = base + bits.TrailingZeros64(starts)
		}
	}
	return m
}

// hashBounds replaces each i<<32 | j in words by unitHash(low[i:j]) (for
// ASCII runs; low must have 16 readable bytes after every j).
func (s *Shingler) hashBounds(low []byte, words []uint64) {
	if !s.avx2 {
		hashBoundsGo(low, &s.masks, words)
		return
	}
	for len(words) > 0 {
		done := hashBoundsBMI(&low[0], &words[0], len(words))
		if done == len(words) {
			return
		}
		hashBoundsGo(low, &s.masks, words[done:done+1]) // a long word
		words = words[done+1:]
	}
}

// hashBoundsGo is the portable hashBounds. It calls nothing, so that its
// state stays in registers.
func hashBoundsGo(low []byte, masks *[8]uint64, words []uint64) {
	for m, b := range words {
		i, j := int(b>>32), int(uint32(b))
		l := j - i
		if l >= 16 { // rare
			h := uint64(wordSeed)
			k := i
			for ; k+8 <= j; k += 8 {
				h = mum(h^binary.LittleEndian.Uint64(low[k:k+8]), wordMul1)
			}
			t := binary.LittleEndian.Uint64(low[k:k+8]) & masks[(j-k)&7]
			words[m] = mum(h^t^uint64(l)<<56, wordMul2)
			continue
		}
		c1 := binary.LittleEndian.Uint64(low[i : i+8])
		if l < 8 {
			words[m] = mum(wordSeed^c1&masks[l&7]^uint64(l)<<56, wordMul2)
			continue
		}
		c2 := binary.LittleEndian.Uint64(low[i+8 : i+16])
		words[m] = mum(mum(wordSeed^c1, wordMul1)^c2&masks[(l-8)&7]^uint64(l)<<56, wordMul2)
	}
}

// Classes of a rune besides a token rune (its lower-cased, normalised
// value, with charFlag or extendFlag for those kinds).
const (
	separator = -1 // ends a token
	deleted   = -2 // removed by StripDiacritics

	charFlag   = 1 << 29 // the rune is a token of its own (kindChar)
	extendFlag = 1 << 30 // the rune continues the current token (kindExtend)
)
