// Package shingle turns text into tokens, shingles and 64-bit shingle hashes.
//
// # Reference model
//
// [Tokens] and [Shingles] define the semantics and are written for clarity:
// the text is lower-cased with strings.ToLower; tokens are the maximal runs
// of runes for which unicode.IsLetter or unicode.IsDigit holds (invalid
// UTF-8 therefore separates tokens, because strings.ToLower turns it into
// U+FFFD); shingles are word k-grams, the k tokens joined by one space; a
// text with 1..k-1 tokens has one shingle made of all its tokens and a text
// with no token has no shingle. Options can map digits to '0', strip
// diacritics, or switch to character n-grams.
//
// # Fast path
//
// [Shingler.Hashes] computes, without materialising strings, the hash of
// every shingle. For every text the set of its values equals
// {[HashString](s) : s in [Shingles](text)}; the tests and FuzzHashes check
// this against the reference model.
//
// Hash design: each token (word, or rune in character mode) is hashed once
// from its lower-cased UTF-8 bytes (a wyhash-style folded 64x64->128-bit
// multiply over 8-byte chunks, the length mixed into the last chunk). The k
// unit hashes of a shingle are combined by the polynomial
// S = sum u_i * P^(k-1-i) mod 2^64, which the fast path maintains as a rolling
// value in O(1) per shingle, and S (xor a tag for the shingle length) goes
// through the splitmix64 finaliser, a bijection with full avalanche, so the
// output bits are well mixed even for highly structured input.
//
// ASCII text is tokenised with SWAR (8 bytes per step) into a bitmap of
// candidate runs (ASCII letters and digits, plus every byte >= 0x80); runs
// that contain non-ASCII bytes are re-scanned rune by rune with
// utf8.DecodeRune, unicode.ToLower, unicode.IsLetter and unicode.IsDigit, so
// the result is identical to the reference model.
package shingle
