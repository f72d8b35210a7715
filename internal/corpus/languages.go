package corpus

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Language describes how a Multilingual corpus writes one language: the
// shapes of its synthetic words, how words and sentences are separated
// and punctuated, and in what units documents are measured and edited.
type Language struct {
	// Code is the ISO 639-1 code, the prefix of the language's document ids.
	Code string `json:"code"`
	// Name and Script name the language and its writing system.
	Name   string `json:"name"`
	Script string `json:"script"`

	shapes []wordShape // a vocabulary word takes one, chosen by weight
	// sep separates words: " " or "" for scripts written without spaces,
	// whose documents are then measured in graphemes instead of words.
	sep string
	// sentenceSep separates sentences; comma ends some clauses and stop
	// ends every sentence ("" for none).
	sentenceSep, comma, stop string
	// sentence bounds the words of a sentence.
	sentence [2]int
	// capitalize upper-cases the first letter of every sentence.
	capitalize bool
	// graphemes makes near copies' edits graphemes (a base character and
	// the marks after it) instead of words.
	graphemes bool
}

// wordShape is how a vocabulary word is built: one string of lead (if
// any), min to max syllables, each one string of every set in syllable,
// then one string of final (if any). An empty string in a set makes that
// part optional; a string listed twice is twice as likely. weight (0
// means 1) is how likely the shape is against the language's others.
type wordShape struct {
	lead     []string
	syllable [][]string
	min, max int
	final    []string
	weight   int
}

// Spaced reports whether the language separates words with spaces; its
// documents are then measured in words, else in graphemes.
func (l *Language) Spaced() bool { return l.sep != "" }

// Graphemes reports whether near copies are edited grapheme by grapheme
// (else word by word).
func (l *Language) Graphemes() bool { return l.graphemes }

// fields splits a space-separated list.
func fields(s string) []string { return strings.Fields(s) }

// opt returns the strings of s plus n empty strings, which make the part
// optional.
func opt(n int, s string) []string { return append(fields(s), make([]string, n)...) }

// runeRange returns every rune of [lo, hi] as a string.
func runeRange(lo, hi rune) []string {
	out := make([]string, 0, hi-lo+1)
	for r := lo; r <= hi; r++ {
		out = append(out, string(r))
	}
	return out
}

// hangul returns the Hangul syllables composed arithmetically from every
// leading consonant (19), every vowel (21) and the trailing consonants of
// tails (0: none), as U+AC00 + (l·21 + v)·28 + t.
func hangul(tails ...int) []string {
	var out []string
	for l := range 19 {
		for v := range 21 {
			for _, t := range tails {
				out = append(out, string(rune(0xAC00+(l*21+v)*28+t)))
			}
		}
	}
	return out
}

// Character sets shared by several shapes.
var (
	arabicLetters = fields("ب ت ث ج ح خ د ذ ر ز س ش ص ض ط ظ ع غ ف ق ك ل م ن ه و ي")
	// Harakat: fatha, damma, kasra, shadda with fatha, sukun.
	harakat  = []string{"\u064E", "\u064F", "\u0650", "\u0651\u064E", "\u0652"}
	hiragana = runeRange(0x3041, 0x3093)
	katakana = runeRange(0x30A1, 0x30F3)
)

// languages are the languages of a Multilingual corpus, in report order.
var languages = []Language{
	{
		Code: "en", Name: "English", Script: "Latin",
		shapes: []wordShape{{syllable: [][]string{
			opt(3, "b c d f g h j k l m n p r s t v w y z bl br ch cl cr dr fl fr gr pl pr sh st th tr"),
			fields("a e i o u a e i o u ai ea ee oo ou y"),
			opt(6, "n r s t l m nd st ck ng rd"),
		}, min: 1, max: 3}},
		sep: " ", sentenceSep: " ", comma: ",", stop: ".", sentence: [2]int{5, 18}, capitalize: true,
	},
	{
		Code: "ru", Name: "Russian", Script: "Cyrillic",
		shapes: []wordShape{{syllable: [][]string{
			opt(3, "б в г д ж з к л м н п р с т ф х ц ч ш щ бр вр гр др кр пр ст тр сл пл"),
			fields("а е и о у ы э ю я ё а о е и"),
			opt(6, "й н р с т л м в к ть сь"),
		}, min: 1, max: 4}},
		sep: " ", sentenceSep: " ", comma: ",", stop: ".", sentence: [2]int{5, 18}, capitalize: true,
	},
	{
		Code: "ar", Name: "Arabic", Script: "Arabic",
		shapes: []wordShape{
			{weight: 3, lead: opt(3, "ال"), syllable: [][]string{arabicLetters, opt(3, "ا و ي"), opt(6, "ن ر ل م ب س ت")}, min: 1, max: 3},
			// A word carrying harakat: every consonant with a vowel mark,
			// sometimes a tanwin (U+064B-U+064D) at the end.
			{syllable: [][]string{arabicLetters, harakat, opt(3, "ا و ي")}, min: 2, max: 4,
				final: opt(3, "\u064B \u064C \u064D")},
		},
		sep: " ", sentenceSep: " ", comma: "،", stop: ".", sentence: [2]int{5, 18},
	},
	{
		Code: "hi", Name: "Hindi", Script: "Devanagari",
		shapes: []wordShape{
			{syllable: [][]string{
				fields("क ख ग घ च छ ज झ ट ठ ड ढ त थ द ध न प फ ब भ म य र ल व श ष स ह क्ष त्र ज्ञ स्त प्र क्र न्द श्र द्ध स्थ न्त"),
				opt(4, "ा ि ी ु ू े ै ो ौ"),
				opt(8, "ं ँ"),
			}, min: 1, max: 4},
			{lead: fields("अ आ इ उ ए ओ"), syllable: [][]string{
				fields("क ग च ज त द न प ब म य र ल व स ह न्त स्त"),
				opt(3, "ा ि ी ु े ो"),
				opt(6, "ं"),
			}, min: 1, max: 3},
		},
		sep: " ", sentenceSep: " ", comma: ",", stop: "।", sentence: [2]int{5, 18},
	},
	{
		Code: "zh", Name: "Chinese", Script: "Han",
		shapes: []wordShape{
			{syllable: [][]string{runeRange(0x4E00, 0x4E00+2999)}, min: 1, max: 1},
			{syllable: [][]string{runeRange(0x4E00, 0x4E00+2999)}, min: 2, max: 2, weight: 2},
			{syllable: [][]string{runeRange(0x4E00, 0x4E00+2999)}, min: 3, max: 4},
		},
		comma: "，", stop: "。", sentence: [2]int{3, 12}, graphemes: true,
	},
	{
		Code: "ja", Name: "Japanese", Script: "Han, Hiragana, Katakana",
		shapes: []wordShape{
			// Kanji with okurigana or a particle.
			{syllable: [][]string{runeRange(0x6000, 0x6000+1499)}, min: 1, max: 2, weight: 2,
				final: append(slices.Clone(hiragana), make([]string, 40)...)},
			{syllable: [][]string{hiragana}, min: 1, max: 3},
			// A katakana loanword, with the prolonged sound mark.
			{syllable: [][]string{katakana, opt(4, "ー")}, min: 2, max: 5},
		},
		comma: "、", stop: "。", sentence: [2]int{3, 12}, graphemes: true,
	},
	{
		Code: "ko", Name: "Korean", Script: "Hangul",
		shapes: []wordShape{
			{syllable: [][]string{hangul(0, 0, 0, 1, 4, 8, 16, 21)}, min: 1, max: 2},
			{syllable: [][]string{hangul(0, 0, 0, 1, 4, 8, 16, 21)}, min: 2, max: 3, weight: 2},
			{syllable: [][]string{hangul(0, 0, 0, 1, 4, 8, 16, 21)}, min: 3, max: 5},
		},
		sep: " ", sentenceSep: " ", comma: ",", stop: ".", sentence: [2]int{4, 12}, graphemes: true,
	},
	{
		Code: "th", Name: "Thai", Script: "Thai",
		shapes: []wordShape{{syllable: [][]string{
			opt(6, "เ แ โ ไ ใ"),
			fields("ก ข ค ง จ ช ซ ด ต ถ ท น บ ป ผ พ ฟ ม ย ร ล ว ส ห อ"),
			// Above and below vowels (U+0E31, U+0E34-U+0E3A, U+0E47) or
			// the vowel letters า, ะ and ำ; as in real Thai, most
			// characters are not marks.
			opt(9, "\u0E31 \u0E34 \u0E35 \u0E36 \u0E37 \u0E38 \u0E39 \u0E3A \u0E47 า า ะ ำ"),
			// Tone marks (U+0E48-U+0E4B).
			opt(12, "\u0E48 \u0E49 \u0E4A \u0E4B"),
			// Final consonants, a few silenced (U+0E4C), and the rare
			// marks U+0E4D and U+0E4E.
			opt(5, "น น ง ง ม ก ย ว ด บ ร\u0E4C ส\u0E4C \u0E4D \u0E4E"),
		}, min: 1, max: 3}},
		sentenceSep: " ", sentence: [2]int{4, 12}, graphemes: true,
	},
}

// Languages returns the languages a Multilingual corpus can hold.
func Languages() []Language { return slices.Clone(languages) }

// languageByCode returns the language with the given code.
func languageByCode(code string) (*Language, bool) {
	for i := range languages {
		if languages[i].Code == code {
			return &languages[i], true
		}
	}
	return nil, false
}

// Lengths of Multilingual documents, in words for spaced languages and in
// graphemes for the others.
const (
	// ShortMinWords and ShortMaxWords bound short documents of spaced
	// languages, LongMaxWords long ones.
	ShortMinWords, ShortMaxWords, LongMaxWords = 5, 39, 600
	// ShortMinGraphemes and ShortMaxGraphemes bound short documents of
	// languages written without spaces, LongMaxGraphemes long ones.
	ShortMinGraphemes, ShortMaxGraphemes, LongMaxGraphemes = 10, 60, 3000
)

// lengths returns the length range of l's short documents and the
// longest long one.
func (l *Language) lengths() (shortMin, shortMax, longMax int) {
	if l.Spaced() {
		return ShortMinWords, ShortMaxWords, LongMaxWords
	}
	return ShortMinGraphemes, ShortMaxGraphemes, LongMaxGraphemes
}

// isMark reports whether r joins the grapheme before it: a combining mark
// (Mn, Mc, Me) or a zero width joiner or non-joiner.
func isMark(r rune) bool {
	return unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me) || r == '\u200C' || r == '\u200D'
}

// graphemes splits s into graphemes: each base character with the marks
// that follow it.
func graphemes(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		if i > start && !isMark(r) {
			out = append(out, s[start:i])
			start = i
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// isUnit reports whether a unit of a document is a word or a grapheme (it
// begins with a letter), not a separator or punctuation.
func isUnit(u string) bool {
	r, _ := utf8.DecodeRuneInString(u)
	return unicode.IsLetter(r)
}
