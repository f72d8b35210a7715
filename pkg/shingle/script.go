package shingle

import (
	"slices"
	"unicode"
	"unicode/utf8"
)

// Script names the writing system of a document's text, as far as the
// tokenizer cares: which rule cuts it into tokens.
type Script uint8

// The scripts [Scripts.Dominant] tells apart. ScriptNone is a text without
// letters; ScriptOther is letters of a script none of these names, which
// the tokenizer treats as written with spaces (true of most, not of all:
// Javanese, Balinese or Vai, for instance, have no rule of their own).
const (
	ScriptNone Script = iota
	ScriptLatin
	ScriptGreek
	ScriptCyrillic
	ScriptArmenian
	ScriptGeorgian
	ScriptHebrew
	ScriptArabic
	ScriptSyriac
	ScriptThaana
	ScriptEthiopic
	ScriptDevanagari
	ScriptBengali
	ScriptGurmukhi
	ScriptGujarati
	ScriptOriya
	ScriptTamil
	ScriptTelugu
	ScriptKannada
	ScriptMalayalam
	ScriptSinhala
	ScriptHan
	ScriptKana // Hiragana and Katakana
	ScriptBopomofo
	ScriptHangul
	ScriptThai
	ScriptLao
	ScriptKhmer
	ScriptMyanmar
	ScriptTibetan
	ScriptOther
	numScripts
)

// String returns the script's name, as the manifest writes it.
func (s Script) String() string {
	switch s {
	case ScriptNone:
		return "none"
	case ScriptLatin:
		return "Latin"
	case ScriptGreek:
		return "Greek"
	case ScriptCyrillic:
		return "Cyrillic"
	case ScriptArmenian:
		return "Armenian"
	case ScriptGeorgian:
		return "Georgian"
	case ScriptHebrew:
		return "Hebrew"
	case ScriptArabic:
		return "Arabic"
	case ScriptSyriac:
		return "Syriac"
	case ScriptThaana:
		return "Thaana"
	case ScriptEthiopic:
		return "Ethiopic"
	case ScriptDevanagari:
		return "Devanagari"
	case ScriptBengali:
		return "Bengali"
	case ScriptGurmukhi:
		return "Gurmukhi"
	case ScriptGujarati:
		return "Gujarati"
	case ScriptOriya:
		return "Oriya"
	case ScriptTamil:
		return "Tamil"
	case ScriptTelugu:
		return "Telugu"
	case ScriptKannada:
		return "Kannada"
	case ScriptMalayalam:
		return "Malayalam"
	case ScriptSinhala:
		return "Sinhala"
	case ScriptHan:
		return "Han"
	case ScriptKana:
		return "Kana"
	case ScriptBopomofo:
		return "Bopomofo"
	case ScriptHangul:
		return "Hangul"
	case ScriptThai:
		return "Thai"
	case ScriptLao:
		return "Lao"
	case ScriptKhmer:
		return "Khmer"
	case ScriptMyanmar:
		return "Myanmar"
	case ScriptTibetan:
		return "Tibetan"
	}
	return "other"
}

// Covered reports whether the tokenizer has a rule made for s: false for
// ScriptOther (and ScriptNone, which has no tokens).
func (s Script) Covered() bool { return s != ScriptNone && s < ScriptOther }

// scriptBlock is a range of code points [lo, hi] whose letters belong to
// one script.
type scriptBlock struct {
	lo, hi rune
	s      Script
}

// scriptBlocks returns the blocks of the named scripts, sorted by lo
// (the main blocks of each: enough to name a document's script).
func scriptBlocks() []scriptBlock {
	return []scriptBlock{
		{0x00C0, 0x024F, ScriptLatin}, {0x0370, 0x03FF, ScriptGreek}, {0x0400, 0x052F, ScriptCyrillic},
		{0x0531, 0x058F, ScriptArmenian}, {0x0590, 0x05FF, ScriptHebrew}, {0x0600, 0x06FF, ScriptArabic},
		{0x0700, 0x074F, ScriptSyriac}, {0x0750, 0x077F, ScriptArabic}, {0x0780, 0x07BF, ScriptThaana},
		{0x08A0, 0x08FF, ScriptArabic}, {0x0900, 0x097F, ScriptDevanagari}, {0x0980, 0x09FF, ScriptBengali},
		{0x0A00, 0x0A7F, ScriptGurmukhi}, {0x0A80, 0x0AFF, ScriptGujarati}, {0x0B00, 0x0B7F, ScriptOriya},
		{0x0B80, 0x0BFF, ScriptTamil}, {0x0C00, 0x0C7F, ScriptTelugu}, {0x0C80, 0x0CFF, ScriptKannada},
		{0x0D00, 0x0D7F, ScriptMalayalam}, {0x0D80, 0x0DFF, ScriptSinhala}, {0x0E00, 0x0E7F, ScriptThai},
		{0x0E80, 0x0EFF, ScriptLao}, {0x0F00, 0x0FFF, ScriptTibetan}, {0x1000, 0x109F, ScriptMyanmar},
		{0x10A0, 0x10FF, ScriptGeorgian}, {0x1100, 0x11FF, ScriptHangul}, {0x1200, 0x139F, ScriptEthiopic},
		{0x1780, 0x17FF, ScriptKhmer}, {0x1C80, 0x1C8F, ScriptCyrillic}, {0x1C90, 0x1CBF, ScriptGeorgian},
		{0x1E00, 0x1EFF, ScriptLatin}, {0x1F00, 0x1FFF, ScriptGreek}, {0x2C60, 0x2C7F, ScriptLatin},
		{0x2D00, 0x2D2F, ScriptGeorgian}, {0x2DE0, 0x2DFF, ScriptCyrillic}, {0x2E80, 0x2FDF, ScriptHan},
		{0x3005, 0x3007, ScriptHan}, {0x3021, 0x3029, ScriptHan}, {0x3031, 0x3035, ScriptKana},
		{0x3038, 0x303B, ScriptHan}, {0x3040, 0x30FF, ScriptKana}, {0x3100, 0x312F, ScriptBopomofo},
		{0x3130, 0x318F, ScriptHangul}, {0x31A0, 0x31BF, ScriptBopomofo}, {0x31F0, 0x31FF, ScriptKana},
		{0x3400, 0x4DBF, ScriptHan}, {0x4E00, 0x9FFF, ScriptHan}, {0xA640, 0xA69F, ScriptCyrillic},
		{0xA720, 0xA7FF, ScriptLatin}, {0xA960, 0xA97F, ScriptHangul}, {0xA9E0, 0xA9FF, ScriptMyanmar},
		{0xAA60, 0xAA7F, ScriptMyanmar}, {0xAB30, 0xAB6F, ScriptLatin}, {0xAC00, 0xD7FF, ScriptHangul},
		{0xF900, 0xFAFF, ScriptHan}, {0xFB00, 0xFB06, ScriptLatin}, {0xFB1D, 0xFB4F, ScriptHebrew},
		{0xFB50, 0xFDFF, ScriptArabic}, {0xFE70, 0xFEFC, ScriptArabic}, {0xFF21, 0xFF5A, ScriptLatin},
		{0xFF66, 0xFF9D, ScriptKana}, {0xFFA0, 0xFFDC, ScriptHangul}, {0x1AFF0, 0x1AFFF, ScriptKana}, {0x1B000, 0x1B16F, ScriptKana},
		{0x20000, 0x3FFFF, ScriptHan},
	}
}

// ScriptSample is how much of a text [Scripts.Dominant] looks at.
const ScriptSample = 1024

// Scripts names the dominant script of texts. It holds a table of the
// Basic Multilingual Plane by 16 code points, made once: keep one for
// many texts. It is read-only after NewScripts, so safe for concurrent
// use.
type Scripts struct {
	blocks []scriptBlock
	// bmp[r>>4] is the script of the letters of r's 16-code-point block,
	// ScriptNone if it has no named one, or mixed if it straddles the
	// bounds of scriptBlocks (looked up then).
	bmp [0x1000]Script
	// letters has bit r set when unicode.IsLetter(r), for r < U+10000.
	letters [0x10000 / 64]uint64
}

// mixed marks a 16-code-point block that straddles script bounds.
const mixed Script = 0xff

// NewScripts returns a Scripts.
func NewScripts() *Scripts {
	s := &Scripts{blocks: scriptBlocks()}
	for r := range rune(0x10000) {
		if unicode.IsLetter(r) {
			s.letters[r>>6] |= 1 << (r & 63)
		}
	}
	for i := range s.bmp {
		lo, hi := rune(i)<<4, rune(i)<<4|0xf
		s.bmp[i] = ScriptNone
		for _, b := range s.blocks {
			switch {
			case b.lo <= lo && hi <= b.hi:
				s.bmp[i] = b.s
			case b.lo <= hi && lo <= b.hi:
				s.bmp[i] = mixed
			default:
				continue
			}
			break
		}
	}
	return s
}

// isASCII reports whether every byte of b is below 0x80, 8 bytes at a
// time.
func isASCII[T string | []byte](b T) bool {
	var or uint64
	i := 0
	for ; i+8 <= len(b); i += 8 {
		or |= le64(b[i:])
	}
	for ; i < len(b); i++ {
		or |= uint64(b[i])
	}
	return or&bytes80 == 0
}

// DominantScript is NewScripts().Dominant(text): for one text; keep a
// Scripts for many.
func DominantScript(text []byte) Script { return NewScripts().Dominant(text) }

// Dominant returns the script of most letters (unicode.IsLetter: not
// marks, digits or punctuation) among the first ScriptSample bytes of
// text (ties go to the script listed first), or ScriptNone when there are
// no letters. A text of ASCII bytes only is Latin or none, found without
// decoding.
func (s *Scripts) Dominant(text []byte) Script {
	text = text[:min(len(text), ScriptSample)]
	if isASCII(text) {
		for _, c := range text {
			if c|0x20 >= 'a' && c|0x20 <= 'z' {
				return ScriptLatin
			}
		}
		return ScriptNone
	}
	var counts [numScripts]int
	for _, r := range string(text) {
		switch {
		case r < utf8.RuneSelf:
			if r|0x20 >= 'a' && r|0x20 <= 'z' {
				counts[ScriptLatin]++
			}
		case r < 0x10000 && s.bmp[r>>4] != mixed:
			if s.letters[r>>6]>>(r&63)&1 == 0 {
				continue
			}
			if sc := s.bmp[r>>4]; sc != ScriptNone {
				counts[sc]++
			} else {
				counts[ScriptOther]++
			}
		default:
			counts[s.lookup(r)]++
		}
	}
	best := ScriptNone
	for sc := ScriptLatin; sc < numScripts; sc++ {
		if counts[sc] > counts[best] {
			best = sc
		}
	}
	return best
}

// lookup returns the script of r from the blocks: ScriptNone if it is
// not a letter, ScriptOther if it is one of no named script.
func (s *Scripts) lookup(r rune) Script {
	if !unicode.IsLetter(r) {
		return ScriptNone
	}
	i, _ := slices.BinarySearchFunc(s.blocks, r, func(b scriptBlock, r rune) int {
		switch {
		case b.hi < r:
			return -1
		case b.lo > r:
			return 1
		}
		return 0
	})
	if i < len(s.blocks) && s.blocks[i].lo <= r && r <= s.blocks[i].hi {
		return s.blocks[i].s
	}
	return ScriptOther
}
