package shingle

import (
	"math/bits"
	"unicode/utf8"
)

// Constants of the hash. Changing any of them changes every hash value;
// wordSeed, wordMul1 and wordMul2 are repeated in scan_amd64.s.
const (
	wordSeed  = 0x243f6a8885a308d3 // start state of a unit hash
	wordMul1  = 0xa0761d6478bd642f // multiplier for full 8-byte chunks
	wordMul2  = 0xe7037ed1a0b428db // multiplier for the last (partial) chunk
	polyP     = 0x3898d190f9ebdacd // polynomial base, chosen for small 2-adic valuations (see doc.go)
	lengthTag = 0xd6e8feb86659fd93 // multiplied by the number of units of a shingle
	fin1      = 0xbf58476d1ce4e5b9 // splitmix64 finaliser
	fin2      = 0x94d049bb133111eb
)

// mum is the folded multiply: the xor of the two halves of the 128-bit product.
func mum(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// finish turns the polynomial S of a shingle of m units into its hash with
// the splitmix64 finaliser (a bijection), so distinct S of the same m never
// collide.
func finish(s uint64, m int) uint64 {
	return finishTagged(s ^ uint64(m)*lengthTag)
}

// finishTagged is the splitmix64 finaliser.
func finishTagged(z uint64) uint64 {
	z = (z ^ (z >> 30)) * fin1
	z = (z ^ (z >> 27)) * fin2
	return z ^ (z >> 31)
}

// unitHash hashes the lower-cased UTF-8 bytes of one unit (a word, or a
// rune in character mode).
func unitHash[T string | []byte](b T) uint64 {
	h := uint64(wordSeed)
	n := len(b)
	for len(b) >= 8 {
		h = mum(h^le64(b), wordMul1)
		b = b[8:]
	}
	var t uint64
	for i := 0; i < len(b); i++ {
		t |= uint64(b[i]) << (8 * i)
	}
	return mum(h^t^uint64(n)<<56, wordMul2)
}

// shortHash is unitHash of a unit of n <= 7 bytes packed little-endian in t.
func shortHash(t uint64, n int) uint64 {
	return mum(wordSeed^t^uint64(n)<<56, wordMul2)
}

// le64 reads 8 bytes little-endian.
func le64[T string | []byte](b T) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// runeHash is unitHash of the UTF-8 encoding of r.
func runeHash(r rune) uint64 {
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	var t uint64
	for i := 0; i < n; i++ {
		t |= uint64(buf[i]) << (8 * i)
	}
	return shortHash(t, n)
}

// HashString returns the 64-bit hash of one shingle given as a string, as
// produced by [Shingles] with the same options (tokens joined by one space,
// or n runes in character mode). It equals the value [Shingler.Hashes]
// produces for that shingle. It does not allocate.
func HashString(shingle string, o Options) uint64 {
	var s uint64
	m := 0
	if o.CharGrams > 0 {
		for _, r := range shingle {
			s = s*polyP + runeHash(r)
			m++
		}
		return finish(s, m)
	}
	for {
		i := 0
		for i < len(shingle) && shingle[i] != ' ' {
			i++
		}
		s = s*polyP + unitHash(shingle[:i])
		m++
		if i == len(shingle) {
			break
		}
		shingle = shingle[i+1:]
	}
	return finish(s, m)
}
