package shingle

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		ok   bool
	}{
		{"zero", Options{}, true},
		{"words 1", Options{Words: 1}, true},
		{"words max", Options{Words: MaxGrams}, true},
		{"words negative", Options{Words: -1}, false},
		{"words too big", Options{Words: MaxGrams + 1}, false},
		{"chars 3", Options{CharGrams: 3}, true},
		{"chars negative", Options{CharGrams: -2}, false},
		{"chars too big", Options{CharGrams: MaxGrams + 1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Validate()
			if (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidOptions) {
				t.Fatalf("error %v does not wrap ErrInvalidOptions", err)
			}
			if _, err := NewShingler(tc.o); (err == nil) != tc.ok {
				t.Fatalf("NewShingler error = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestTokens(t *testing.T) {
	tests := []struct {
		name string
		text string
		o    Options
		want []string
	}{
		{"empty", "", Options{}, nil},
		{"only separators", " \t\n.,;!? -- ", Options{}, nil},
		{"simple", "Jack London traveled to Oakland.", Options{}, []string{"jack", "london", "traveled", "to", "oakland"}},
		{"punctuation inside", "don't e-mail x@y.z", Options{}, []string{"don", "t", "e", "mail", "x", "y", "z"}},
		{"digits", "Route 66, 3.14 and 1st", Options{}, []string{"route", "66", "3", "14", "and", "1st"}},
		{"non-ascii letters", "Straße Ünïcödé 東京 123", Options{}, []string{"straße", "ünïcödé", "東", "京", "123"}},
		{"words-only: a clause of Han is one token", "Straße 東京タワー 123", Options{Tokenizer: TokenizeWordsOnly}, []string{"straße", "東京タワー", "123"}},
		{"han and kana: one token per character", "東京タワーは高い。", Options{}, []string{"東", "京", "タ", "ワ", "ー", "は", "高", "い"}},
		{"mixed scripts in reading order", "iPhone手机好用2024年", Options{}, []string{"iphone", "手", "机", "好", "用", "2024", "年"}},
		{"latin letters next to han end at the han", "abc東def", Options{}, []string{"abc", "東", "def"}},
		{"devanagari marks stay in the word", "नमस्ते दुनिया", Options{}, []string{"नमस्ते", "दुनिया"}},
		{"words-only: devanagari cut at marks", "नमस्ते दुनिया", Options{Tokenizer: TokenizeWordsOnly}, []string{"नमस", "त", "द", "न", "य"}},
		{"thai: a character and its marks", "สวัสดีครับ", Options{}, []string{"ส", "วั", "ส", "ดี", "ค", "รั", "บ"}},
		{"thai leading vowel is its own token", "เมือง", Options{}, []string{"เ", "มื", "อ", "ง"}},
		{"hangul syllables", "안녕 하세요", Options{}, []string{"안", "녕", "하", "세", "요"}},
		{"conjoining jamo make one syllable", "각나", Options{}, []string{"각", "나"}},
		{"arabic harakat stay in the word", "كَتَبَ الوَلَدُ", Options{}, []string{"كَتَبَ", "الوَلَدُ"}},
		{"zero-width joiner and non-joiner continue", "می‌خواهم", Options{}, []string{"می‌خواهم"}},
		{"a mark with nothing before it is dropped", " ́abc ि", Options{}, []string{"abc"}},
		{"bengali and tamil marks", "বাংলা தமிழ்", Options{}, []string{"বাংলা", "தமிழ்"}},
		{"cyrillic greek", "Привет, ΜΈΓΑ мир", Options{}, []string{"привет", "μέγα", "мир"}},
		{"invalid utf-8 separates", "ab\xffcd\xc3(ef", Options{}, []string{"ab", "cd", "ef"}},
		{"replacement char separates", "ab\uFFFDcd", Options{}, []string{"ab", "cd"}},
		{"kelvin sign", "\u212Aelvin 5\u212A", Options{}, []string{"kelvin", "5k"}},
		{"dotted capital I", "İSTANBUL", Options{}, []string{"istanbul"}},
		{"dotless i kept", "ıi", Options{}, []string{"ıi"}},
		{"em dash and quotes", "word\u2014word \u201cquoted\u201d", Options{}, []string{"word", "word", "quoted"}},
		{"combining mark continues the word", "cafe\u0301s", Options{}, []string{"cafe\u0301s"}},
		{"words-only: combining mark separates", "cafe\u0301s", Options{Tokenizer: TokenizeWordsOnly}, []string{"cafe", "s"}},
		{"nbsp separates", "a\u00a0b", Options{}, []string{"a", "b"}},
		{"roman numeral is not a letter", "Ⅻ x", Options{}, []string{"x"}},
		{"arabic-indic digits", "٣٤ apples", Options{}, []string{"٣٤", "apples"}},
		{"digits to zero", "Route 66, 3.14 ٣٤ 1st", Options{DigitsToZero: true}, []string{"route", "00", "0", "00", "00", "0st"}},
		{"ideographic zero and suzhou numerals are characters", "二〇二四年〆〥", Options{}, []string{"二", "〇", "二", "四", "年", "〆", "〥"}},
		{"words-only: ideographic zero separates", "二〇二四年", Options{Tokenizer: TokenizeWordsOnly}, []string{"二", "二四年"}},
		{"thai digits are characters", "ปี๒๕๖๗", Options{}, []string{"ปี", "๒", "๕", "๖", "๗"}},
		{"thai digits to zero stay characters", "ปี๒๕๖๗", Options{DigitsToZero: true}, []string{"ปี", "0", "0", "0", "0"}},
		{"strip diacritics", "Ünïcödé Café naïve Ærø ŁÓDŹ", Options{StripDiacritics: true}, []string{"unicode", "cafe", "naive", "ærø", "łodz"}},
		{"strip combining marks joins", "cafe\u0301s Ω\u0308", Options{StripDiacritics: true}, []string{"cafes", "ω"}},
		{"strip keeps cyrillic", "йога Ёж", Options{StripDiacritics: true}, []string{"йога", "ёж"}},
		{"strip with digits", "Ⅳ x²9", Options{StripDiacritics: true, DigitsToZero: true}, []string{"x", "0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Tokens(tc.text, tc.o)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Tokens(%q) = %q, want %q", tc.text, got, tc.want)
			}
			checkAgainstModel(t, tc.text, tc.o)
		})
	}
}

func TestShingles(t *testing.T) {
	tests := []struct {
		name string
		text string
		o    Options
		want []string
	}{
		{"empty", "", Options{}, nil},
		{"no tokens", "...", Options{Words: 2}, nil},
		{"one token", "Hello!", Options{}, []string{"hello"}},
		{"k-1 tokens", "a b c d", Options{}, []string{"a b c d"}},
		{"exactly k", "a b c d e", Options{}, []string{"a b c d e"}},
		{"k+1", "a b c d e f", Options{}, []string{"a b c d e", "b c d e f"}},
		{"bigrams", "Jack London traveled to Oakland", Options{Words: 2},
			[]string{"jack london", "london traveled", "traveled to", "to oakland"}},
		{"repeats kept", "a a a", Options{Words: 1}, []string{"a", "a", "a"}},
		{"char grams", "東京 タワー", Options{CharGrams: 2}, []string{"東京", "京 ", " タ", "タワ", "ワー"}},
		// 4 shingles of 5 characters, the least of each window of 2 kept.
		{"han: 5 characters a shingle, winnowed", "東京タワーは高い", Options{}, []string{"京 タ ワ ー は", "タ ワ ー は 高"}},
		{"words-only: one shingle of the clause", "東京タワーは高い", Options{Tokenizer: TokenizeWordsOnly}, []string{"東京タワーは高い"}},
		{"word shingles are all kept", "iPhone 東 京 x y z", Options{}, []string{"iphone 東 京 x y", "東 京 x y z"}},
		{"char grams keep thai marks", "ดี", Options{CharGrams: 1}, []string{"ด", "ี"}},
		{"char grams short", "Ab", Options{CharGrams: 3}, []string{"ab"}},
		{"char grams words joined by one space", "a, b", Options{CharGrams: 3}, []string{"a b"}},
		{"char grams none", " ! ", Options{CharGrams: 3}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Shingles(tc.text, tc.o)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Shingles(%q) = %q, want %q", tc.text, got, tc.want)
			}
			checkAgainstModel(t, tc.text, tc.o)
		})
	}
}

func hashSet(t testing.TB, text string, o Options) []uint64 {
	t.Helper()
	s, err := NewShingler(o)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := s.Hashes(nil, []byte(text))
	return SortUnique(h)
}

func TestJaccardWorkedExamples(t *testing.T) {
	o := Options{Words: 2}
	a := hashSet(t, "Jack London traveled to Oakland", o)
	tests := []struct {
		other string
		want  float64
	}{
		{"Jack London traveled to the city of Oakland", 3.0 / 8},
		{"Jack traveled from Oakland to London", 0},
		{"Jack London traveled to Oakland", 1},
	}
	for _, tc := range tests {
		b := hashSet(t, tc.other, o)
		if got := Jaccard(a, b); got != tc.want {
			t.Errorf("Jaccard(..., %q) = %v, want %v", tc.other, got, tc.want)
		}
	}
}

func TestJaccardAndSortUnique(t *testing.T) {
	tests := []struct {
		a, b []uint64
		want float64
	}{
		{nil, nil, 0},
		{[]uint64{1}, nil, 0},
		{[]uint64{3, 1, 2, 3}, []uint64{2, 3, 4, 4}, 2.0 / 4},
		{[]uint64{5, 5}, []uint64{5}, 1},
		{[]uint64{1, 2}, []uint64{3, 4}, 0},
	}
	for _, tc := range tests {
		a, b := SortUnique(slices.Clone(tc.a)), SortUnique(slices.Clone(tc.b))
		if !slices.IsSorted(a) || len(slices.Compact(slices.Clone(a))) != len(a) {
			t.Fatalf("SortUnique(%v) = %v", tc.a, a)
		}
		if got := Jaccard(a, b); got != tc.want {
			t.Errorf("Jaccard(%v, %v) = %v, want %v", a, b, got, tc.want)
		}
	}
}

// modelHashes is the reference: HashString of every shingle of Shingles.
func modelHashes(text string, o Options) []uint64 {
	var out []uint64
	for _, sh := range Shingles(text, o) {
		out = append(out, HashString(sh, o))
	}
	return out
}

var modelOptions = []Options{
	{},
	{Words: 1},
	{Words: 2},
	{Words: 3, DigitsToZero: true},
	{Words: 4, StripDiacritics: true},
	{Words: MaxGrams},
	{CharGrams: 1},
	{CharGrams: 3, StripDiacritics: true, DigitsToZero: true},
	{CharGrams: 5},
	{Tokenizer: TokenizeWordsOnly},
	{Words: 2, Tokenizer: TokenizeWordsOnly, StripDiacritics: true},
	{CharGrams: 2, Tokenizer: TokenizeWordsOnly},
}

// checkAgainstModel checks that Shingler.Hashes gives exactly the model's
// hashes in order, and the same token count, for text and every option set
// of modelOptions plus o.
func checkAgainstModel(t testing.TB, text string, o Options) {
	t.Helper()
	for _, opt := range append([]Options{o}, modelOptions...) {
		s, err := NewShingler(opt)
		if err != nil {
			t.Fatal(err)
		}
		// Hash twice with the same Shingler to catch stale state.
		for range 2 {
			got, ntok := s.Hashes([]uint64{42}, []byte(text))
			want := append([]uint64{42}, modelHashes(text, opt)...)
			if !slices.Equal(got, want) {
				t.Fatalf("options %+v text %q:\nHashes     %x\nmodel      %x\nshingles %q",
					opt, text, got, want, Shingles(text, opt))
			}
			if wt := len(Tokens(text, opt)); ntok != wt {
				t.Fatalf("options %+v text %q: %d tokens, model %d", opt, text, ntok, wt)
			}
		}
	}
}

// pieces are the building blocks of random texts.
var pieces = []string{
	"a", "B", "Zz", "the", "THE", "quick", "brown", "Fox", "jumps", "12", "0", "9x",
	"eightchr", "ninechars", "sixteencharacter", "seventeencharacter", "Refrangibility",
	" ", " ", " ", "  ", "\n", "\t", ".", ",", "-", "'", "\"", "@", "[", "`", "{", "~", "\x7f", "\x00",
	"é", "É", "Straße", "ÜNÏCÖDÉ", "東京", "タワー", "Привет", "ΜΈΓΑ", "ς", "\u212A", "İ", "ı",
	"\u0301", "\u0308", "\u2014", "\u201c", "\u00a0", "٣", "Ⅻ", "²", "ǅ", "ẞ", "\U0001F600", "\U00010400",
	"\xff", "\xc3", "\xe6\x9d", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\uFFFD",
	"高い", "は", "ー", "ｰ", "한국어", "\u1100\u1161", "\u11a8", "ด", "\u0e35", "เมือง", "ສະບາຍ", "ខ្មែរ",
	"မြန်မာ", "བོད", "नमस्ते", "\u093f", "বাংলা", "தமிழ்", "كَتَبَ", "\u064e", "\u200c", "\u200d", "ㄅㄆ", "𠀋",
}

func randomText(r *rand.Rand, maxPieces int) string {
	var b strings.Builder
	n := r.IntN(maxPieces + 1)
	for range n {
		b.WriteString(pieces[r.IntN(len(pieces))])
		if r.IntN(3) == 0 {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func TestHashesMatchModelRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 3000
	if testing.Short() {
		n = 500
	}
	for i := range n {
		max := 12
		if i%10 == 0 {
			max = 120 // spans several 64-byte blocks
		}
		checkAgainstModel(t, randomText(r, max), Options{Words: 1 + i%6})
	}
}

func TestHashesMatchModelFiles(t *testing.T) {
	for _, name := range []string{"Isaac.Newton-Opticks.txt", "tutor.ru.utf-8", "tutor.el.utf-8", "tutor.fr.utf-8"} {
		text := readTestdata(t, name)
		if testing.Short() {
			text = text[:min(len(text), 20000)]
		}
		// The whole file, and windows starting at odd offsets.
		checkAgainstModel(t, text, Options{})
		for off := 1; off < 64 && off < len(text); off += 13 {
			checkAgainstModel(t, text[off:min(len(text), off+3000)], Options{Words: 3})
		}
	}
}

func FuzzHashes(f *testing.F) {
	for _, s := range []string{"", "a", "Jack London traveled to Oakland", "Straße Ünïcödé 東京 123",
		"ab\xffcd\xc3(ef", "\u212Aelvin İ", "cafe\u0301s", strings.Repeat("Refrangibility of rays. ", 10),
		"東京タワーは高い。iPhone手机", "नमस्ते दुनिया", "สวัสดีครับ", "\u0301x\u200d"} {
		f.Add(s, "東京タワーは高い", uint8(0))
	}
	// prev is hashed first with the same Shingler, as production reuses
	// one for many documents: no state may leak into the next text.
	f.Fuzz(func(t *testing.T, text, prev string, sel uint8) {
		o := Options{
			Words:           int(sel%7) + 1,
			DigitsToZero:    sel&8 != 0,
			StripDiacritics: sel&16 != 0,
		}
		if sel&32 != 0 {
			o.CharGrams = int(sel%5) + 1
		}
		if sel&64 != 0 {
			o.Tokenizer = TokenizeWordsOnly
		}
		s, err := NewShingler(o)
		if err != nil {
			t.Fatal(err)
		}
		s.Hashes(nil, []byte(prev))
		got, ntok := s.Hashes(nil, []byte(text))
		want := modelHashes(text, o)
		if !slices.Equal(got, want) {
			t.Fatalf("options %+v text %q: Hashes %x, model %x", o, text, got, want)
		}
		if wt := len(Tokens(text, o)); ntok != wt {
			t.Fatalf("options %+v text %q: %d tokens, model %d", o, text, ntok, wt)
		}
	})
}

func TestMovemaskAndClassify(t *testing.T) {
	for m := range 256 {
		var x uint64
		for i := range 8 {
			if m>>i&1 != 0 {
				x |= 0x80 << (8 * i)
			}
		}
		if got := movemask(x); got != uint64(m) {
			t.Fatalf("movemask(%#x) = %#x, want %#x", x, got, m)
		}
	}
	// Every byte value in every position, with random neighbours.
	r := rand.New(rand.NewPCG(3, 4))
	for c := range 256 {
		for pos := range 8 {
			x := r.Uint64()&^(0xff<<(8*pos)) | uint64(c)<<(8*pos)
			l, d, h := classify8(x)
			get := func(m uint64) bool { return m>>(8*pos+7)&1 != 0 }
			isL := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
			isD := '0' <= c && c <= '9'
			if get(l) != isL || get(d) != isD || get(h) != (c >= 0x80) {
				t.Fatalf("classify8 byte %#x at %d: letter %v digit %v high %v", c, pos, get(l), get(d), get(h))
			}
		}
	}
}

func TestHashStringExamples(t *testing.T) {
	// Distinct shingles of the same words in another order, or split
	// differently, must hash differently.
	o := Options{}
	seen := map[uint64]string{}
	for _, s := range []string{"a b", "b a", "ab", "a", "b", "a b c", "a bc", "ab c", "abc", "", "a a", "aa"} {
		h := HashString(s, o)
		if prev, dup := seen[h]; dup {
			t.Fatalf("HashString(%q) == HashString(%q)", s, prev)
		}
		seen[h] = s
	}
	// Character mode differs from word mode for multi-rune shingles.
	if HashString("ab", Options{CharGrams: 2}) == HashString("ab", Options{}) {
		t.Fatal("char and word mode hashes of \"ab\" agree")
	}
}

// TestHashQuality checks that shingle hashes of highly structured text
// (numbered words) are collision-free and well mixed: each output bit is
// set with probability 1/2 within 5 standard errors, and the top 7 bits
// (an OPH bin for K=128) are uniform by a chi-square test.
func TestHashQuality(t *testing.T) {
	n := 400000
	if testing.Short() {
		n = 100000
	}
	var b strings.Builder
	for i := range n + 4 {
		fmt.Fprintf(&b, "w%d ", i/3) // every word repeats, 5-grams do not
	}
	s, _ := NewShingler(Options{})
	h, _ := s.Hashes(nil, []byte(b.String()))
	if len(h) != n {
		t.Fatalf("%d hashes, want %d", len(h), n)
	}
	var ones [64]int
	var buckets [128]int
	for _, v := range h {
		for bit := range 64 {
			ones[bit] += int(v >> bit & 1)
		}
		buckets[v>>57]++
	}
	sd := math.Sqrt(float64(n) / 4)
	for bit, c := range ones {
		if z := (float64(c) - float64(n)/2) / sd; math.Abs(z) > 5 {
			t.Errorf("bit %d set in %d of %d hashes (z=%.1f)", bit, c, n, z)
		}
	}
	exp := float64(n) / 128
	chi := 0.0
	for _, c := range buckets {
		chi += (float64(c) - exp) * (float64(c) - exp) / exp
	}
	// 127 degrees of freedom: mean 127, sd ~16; 127+5*16 = 207.
	if chi > 207 {
		t.Errorf("chi-square of top 7 bits = %.1f", chi)
	}
	u := SortUnique(slices.Clone(h))
	if len(u) != n {
		t.Errorf("%d collisions among %d distinct shingles", n-len(u), n)
	}
	// Avalanche: flipping one input bit of the finaliser changes ~32 bits.
	r := rand.New(rand.NewPCG(5, 6))
	total, trials := 0, 20000
	for range trials {
		x := r.Uint64()
		total += bits.OnesCount64(finish(x, 5) ^ finish(x^1<<r.IntN(64), 5))
	}
	if mean := float64(total) / float64(trials); math.Abs(mean-32) > 0.5 {
		t.Errorf("finaliser avalanche: mean %.2f bits flipped, want 32", mean)
	}
}

func TestHashesNoAllocs(t *testing.T) {
	text := []byte(readTestdata(t, "Isaac.Newton-Opticks.txt")[:20000] + " Ünïcödé")
	for _, o := range []Options{{}, {CharGrams: 3}} {
		s, _ := NewShingler(o)
		dst := make([]uint64, 0, len(text))
		allocs := testing.AllocsPerRun(20, func() {
			dst, _ = s.Hashes(dst[:0], text)
		})
		if allocs != 0 {
			t.Errorf("options %+v: %v allocations per Hashes", o, allocs)
		}
	}
}

func TestRunsAcrossBlocks(t *testing.T) {
	// Words that cross 64-byte block boundaries, long runs, and text
	// lengths around multiples of 8 and 64.
	for n := 0; n < 200; n++ {
		checkAgainstModel(t, strings.Repeat("x", n), Options{})
		checkAgainstModel(t, strings.Repeat("ab ", n/3)+strings.Repeat("Q", n%70), Options{Words: 2})
		checkAgainstModel(t, strings.Repeat("é", n/2)+" "+strings.Repeat("z", n), Options{Words: 2})
	}
	if !utf8.ValidString(strings.Repeat("é", 3)) {
		t.Fatal("bad literal")
	}
}

// TestScanBlocksAVX2MatchesGo checks the assembly block scanner against the
// portable one on random bytes of every value.
func TestScanBlocksAVX2MatchesGo(t *testing.T) {
	if !hasAVX2() {
		t.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(7, 7))
	for _, zero := range []uint64{0, 0x0f} {
		for blocks := 1; blocks <= 9; blocks++ {
			text := make([]byte, blocks*64)
			for i := range text {
				switch r.IntN(3) {
				case 0:
					text[i] = byte(r.IntN(256))
				case 1:
					text[i] = byte(r.IntN(128))
				default:
					text[i] = "aZ09 .\x80\xff@[`{/:"[r.IntN(14)]
				}
			}
			lowA, lowB := make([]byte, len(text)), make([]byte, len(text))
			runsA, runsB := make([]uint64, blocks), make([]uint64, blocks)
			highA, highB := make([]uint64, blocks), make([]uint64, blocks)
			allA := scanBlocksGo(text, lowA, runsA, highA, zero)
			allB := scanBlocksAVX2(&text[0], &lowB[0], &runsB[0], &highB[0], blocks, zero)
			if allA != allB || !slices.Equal(lowA, lowB) || !slices.Equal(runsA, runsB) || !slices.Equal(highA, highB) {
				t.Fatalf("zero=%#x blocks=%d: AVX2 scanner differs from Go", zero, blocks)
			}
		}
	}
}

// TestPolyBaseValuations checks the claim of the package documentation:
// for every signed combination of distinct powers P^0..P^(k-1) (the
// coefficient of one word in the difference of two shingles), the 2-adic
// valuation is at most 3 for k<=3, 5 for k<=5 and 9 for k<=8.
func TestPolyBaseValuations(t *testing.T) {
	for _, tc := range []struct{ k, max int }{{3, 3}, {5, 5}, {8, 9}} {
		pw := make([]uint64, tc.k)
		pw[0] = 1
		for i := 1; i < tc.k; i++ {
			pw[i] = pw[i-1] * polyP
		}
		worst := 0
		c := make([]int, tc.k) // coefficients in {-1, 0, 1}, as a base-3 counter
		for {
			i := 0
			for i < tc.k && c[i] == 1 {
				c[i] = -1
				i++
			}
			if i == tc.k {
				break
			}
			c[i]++
			var sum uint64
			for j, cj := range c {
				sum += uint64(int64(cj)) * pw[j]
			}
			if sum != 0 {
				worst = max(worst, bits.TrailingZeros64(sum))
			} else if slices.ContainsFunc(c, func(x int) bool { return x != 0 }) {
				t.Fatalf("k=%d: coefficients %v sum to 0", tc.k, c)
			}
		}
		if worst > tc.max {
			t.Errorf("k=%d: valuation %d > %d", tc.k, worst, tc.max)
		}
	}
}

// TestRunBoundsBMIMatchesGo checks the assembly run-bounds loop against the
// portable one on random bitmaps of varied density.
func TestRunBoundsBMIMatchesGo(t *testing.T) {
	if !hasAVX2() {
		t.Skip("no AVX2/BMI")
	}
	r := rand.New(rand.NewPCG(8, 8))
	for trial := range 2000 {
		nb := 1 + r.IntN(12)
		runs := make([]uint64, nb+1) // zero sentinel
		for i := range nb {
			switch trial % 4 {
			case 0:
				runs[i] = r.Uint64()
			case 1:
				runs[i] = r.Uint64() | r.Uint64() | r.Uint64() // long runs
			case 2:
				runs[i] = ^uint64(0) << r.IntN(64) >> r.IntN(64)
			default:
				runs[i] = r.Uint64() & r.Uint64()
			}
		}
		a := make([]uint64, 64*nb)
		b := make([]uint64, 64*nb)
		na := runBoundsGo(runs, a)
		nb2 := runBoundsBMI(&runs[0], nb, &b[0])
		if na != nb2 || !slices.Equal(a[:na], b[:nb2]) {
			t.Fatalf("runs %x: Go %d bounds %x, BMI %d bounds %x", runs, na, a[:na], nb2, b[:nb2])
		}
	}
}

// TestHashBoundsBMIMatchesGo checks the assembly word hashing against the
// portable loop, for words of 1 to 40 bytes at every offset.
func TestHashBoundsBMIMatchesGo(t *testing.T) {
	if !hasAVX2() {
		t.Skip("no AVX2/BMI")
	}
	r := rand.New(rand.NewPCG(9, 9))
	low := make([]byte, 4096+lowPad)
	for i := range 4096 {
		low[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[r.IntN(36)]
	}
	s, _ := NewShingler(Options{})
	for trial := range 500 {
		n := 1 + r.IntN(40)
		a := make([]uint64, n)
		for k := range a {
			l := 1 + r.IntN(17)
			if trial%5 == 0 {
				l = 1 + r.IntN(40)
			}
			i := r.IntN(4096 - l)
			a[k] = uint64(i)<<32 | uint64(i+l)
		}
		b := slices.Clone(a)
		hashBoundsGo(low, &s.masks, a)
		s.hashBounds(low, b)
		if !slices.Equal(a, b) {
			t.Fatalf("trial %d: BMI word hashes differ from Go", trial)
		}
	}
}

func TestWinnowed(t *testing.T) {
	tests := []struct {
		name   string
		w      int
		hashes []uint64
		char   []bool
		want   []int
	}{
		{"no character shingles", 3, []uint64{5, 3, 4}, []bool{false, false, false}, []int{0, 1, 2}},
		{"least of each window of 3", 3, []uint64{5, 3, 4, 1, 2}, []bool{true, true, true, true, true}, []int{1, 3}},
		{"least of each window of 2", 2, []uint64{5, 3, 4, 1, 2}, []bool{true, true, true, true, true}, []int{1, 3}},
		{"window of 2, rising", 2, []uint64{1, 2, 3, 4}, []bool{true, true, true, true}, []int{0, 1, 2}},
		{"ties: the rightmost", 3, []uint64{2, 2, 2, 2}, []bool{true, true, true, true}, []int{2, 3}},
		{"a run shorter than the window keeps its least", 3, []uint64{9, 7}, []bool{true, true}, []int{1}},
		{"a run of one is kept", 2, []uint64{9, 1, 8}, []bool{false, true, false}, []int{0, 1, 2}},
		{"runs apart are winnowed apart", 3, []uint64{5, 3, 4, 0, 6, 2, 7}, []bool{true, true, true, false, true, true, true}, []int{1, 3, 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := winnowed(tc.hashes, tc.char, tc.w); !slices.Equal(got, tc.want) {
				t.Fatalf("winnowed(%v, %v) = %v, want %v", tc.hashes, tc.char, got, tc.want)
			}
		})
	}
}

// TestWinnowDensity checks on Chinese and Thai text that winnowing keeps
// about 2/(CharWindow+1) of the shingles made only of characters, the
// density of winnowing with random hashes (less where a window holds the
// same shingle twice, more where punctuation and spaces cut runs short);
// and every other shingle.
func TestWinnowDensity(t *testing.T) {
	for _, name := range []string{"tutor.zh_cn.utf-8", "prose.th.txt"} {
		text := readTestdata(t, name)
		o := Options{}
		var singles []bool
		tokenize(text, o, func(_ []byte, _ Span, single bool) { singles = append(singles, single) })
		char := charShingles(singles, o.grams())
		nChar := 0
		for _, c := range char {
			if c {
				nChar++
			}
		}
		kept := len(Shingles(text, o)) - (len(char) - nChar)
		want := 2.0 / (CharWindow + 1)
		d := float64(kept) / float64(nChar)
		t.Logf("%s: %d of %d character shingles kept (%.3f), %d other shingles", name, kept, nChar, d, len(char)-nChar)
		if d < want-0.05 || d > want+0.1 {
			t.Errorf("%s: density %.3f, want %.3f to %.3f", name, d, want-0.05, want+0.1)
		}
	}
}
