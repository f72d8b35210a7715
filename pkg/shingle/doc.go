// Package shingle turns text into tokens, shingles and 64-bit shingle hashes.
//
// # Reference model
//
// [Tokens] and [Shingles] define the semantics and are written for clarity:
// the text is lower-cased rune by rune (as strings.ToLower does; invalid
// UTF-8 is U+FFFD, a separator) and cut into tokens by the rule
// Options.Tokenizer names. The default, [TokenizeScripts], cuts by script,
// with no language identification:
//
//   - in scripts written with spaces between words, a token is a word: a
//     run of letters and digits (unicode.IsLetter, unicode.IsDigit) with
//     the combining marks (Mn, Mc, Me) and joiners (ZWNJ, ZWJ) inside and
//     after it, so Devanagari, Bengali, Tamil or vowelled Arabic words stay
//     whole;
//   - in the scripts written without spaces (Han, Hiragana, Katakana with
//     its prolonged sound mark, Bopomofo, Thai, Lao, Khmer, Myanmar,
//     Tibetan), and in Hangul, whose words are short, every letter or digit
//     is a token of its own, together with the combining marks that follow
//     it (a Thai consonant with the vowel and tone marks written above or
//     below it, not the vowels written before or after it, which are
//     letters; a conjoining Hangul syllable), so a 5-token shingle is 5
//     characters there; of the shingles made only of such tokens,
//     winnowing keeps the least hash of every CharWindow consecutive ones;
//   - a mark with no token before it is dropped; anything else separates
//     tokens. A text mixing scripts gets both kinds of tokens in reading
//     order.
//
// [TokenizeWordsOnly] is the earlier rule: tokens are the maximal runs of
// letters and digits, whatever the script. Shingles are word k-grams, the
// k tokens joined by one space; a text with 1..k-1 tokens has one shingle
// made of all its tokens and a text with no token has no shingle. Options
// can map digits to '0', strip diacritics, or switch to character n-grams
// (of the tokens joined by spaces; there, scripts without spaces are not
// cut into characters first). [DominantScript] names the script of most
// of a text's letters, for counting documents by script.
//
// # Fast path
//
// [Shingler.Hashes] computes, without materialising strings, the hash of
// every shingle. For every text the set of its values equals
// {[HashString](s) : s in [Shingles](text)}; the tests and FuzzHashes check
// this against the reference model.
//
// Hash design (constants in hash.go; changing them changes every hash):
//
//   - Each unit (a word, or a rune in character mode) is hashed once from
//     its lower-cased, normalised UTF-8 bytes: a wyhash-style folded
//     64x64->128-bit multiply ("mum") per 8-byte chunk, the last partial
//     chunk xor the length<<56 folded with a second constant.
//   - The k unit hashes u_0..u_(k-1) of a shingle are combined by the
//     polynomial S = sum u_i * P^(k-1-i) mod 2^64. Two distinct shingles
//     collide only if sum_w c_w*u_w = 0 mod 2^64, where each c_w is a
//     signed sum of distinct powers P^i; if c_w has 2-adic valuation v,
//     that happens with probability 2^(v-64) for random unit hashes. P was
//     chosen (by search) to keep v small: at most 3 for k<=3, 5 for k<=5
//     and 9 for k<=8, so a worst-case pair of distinct 5-word shingles
//     (repeated or swapped words) collides with probability <= 2^-59,
//     typical pairs with 2^-64. The fast path keeps S rolling, O(1) per
//     shingle: S' = (S - u_0*P^(k-1))*P + u_k.
//   - S xor (m * tag), m being the number of units (k, or fewer for a short
//     text), goes through the splitmix64 finaliser, a bijection with full
//     avalanche: shingles of equal length collide only if their S collide,
//     and the output bits are well mixed even for highly structured text
//     (see TestHashQuality).
//
// Tokenising: the text is classified 64 bytes at a time (AVX2 assembly on
// amd64 when the CPU has it, SWAR in portable Go otherwise; both are tested
// to agree bit for bit) into a lower-cased copy and a bitmap of "run" bytes:
// ASCII letters and digits and every byte >= 0x80. Every token lies inside
// one run. Runs of ASCII bytes are words; their bounds come from the
// bitmaps of run starts and ends, and their hashes are computed from 8-byte
// loads of the lower-cased copy. Runs that contain a byte >= 0x80 are split
// into tokens rune by rune (utf8.DecodeRune, then the class of the rune:
// unicode.ToLower, the normalisations and its kind under the tokenizer,
// cached per Shingler for every rune below U+0800 and, once met, every
// rune of the Basic Multilingual Plane), so the result is identical to the
// reference model. ASCII text never takes that path, so English runs at
// the same speed under either tokenizer.
package shingle
