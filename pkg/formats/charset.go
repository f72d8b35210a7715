package formats

import (
	"bytes"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/transform"
)

// guessLen is how much of an undeclared payload is decoded to guess its
// charset.
const guessLen = 64 << 10

// toUTF8 returns a response payload converted to UTF-8, or why it cannot
// be. The charset is, in order: a byte-order mark, the charset of the HTTP
// Content-Type (declared), for HTML a <meta> charset in the first 1,024
// bytes, and otherwise a guess from the bytes (guessCharset), as
// golang.org/x/net/html/charset determines it. A payload whose bytes are
// not valid in its charset (the decoder would replace them with U+FFFD) is
// not converted; nor is one that declares a charset the WHATWG Encoding
// standard does not know, unless a byte-order mark, a <meta> charset or
// valid UTF-8 says what it is.
func (r *pieceReader) toUTF8(payload []byte, declared string, html bool) ([]byte, string) {
	contentType := "text/plain"
	if html {
		contentType = "text/html"
	}
	known := declared == ""
	if !known {
		if e, _ := charset.Lookup(declared); e != nil {
			contentType += "; charset=" + declared
			known = true
		}
	}
	head := payload
	if !html {
		// Only a byte-order mark or the header count for plain text: hide
		// the rest from the <meta> prescan.
		head = payload[:min(len(payload), 3)]
	}
	enc, name, certain := charset.DetermineEncoding(head, contentType)
	if !certain && name == "windows-1252" {
		// No declaration the decoder could use: guess from the whole
		// payload, as DetermineEncoding only looks at its first bytes.
		enc, name = guessCharset(payload)
		if !known && name != "utf-8" {
			return nil, fmt.Sprintf("unsupported charset %q (text is not valid UTF-8 and declares no other charset)", declared)
		}
	}
	switch name {
	case "utf-8":
		// Invalid UTF-8 is rejected with its position by checkText.
		return bytes.TrimPrefix(payload, utf8BOM), ""
	case "windows-1252":
		// Browsers map the five bytes windows-1252 leaves undefined to C1
		// controls; x/text's decoder replaces them.
		r.converted = appendWindows1252(r.converted[:0], payload)
		return r.converted, ""
	}
	var err error
	r.converted, err = decodeAppend(r.converted[:0], enc.NewDecoder(), payload, true)
	if err != nil {
		return nil, fmt.Sprintf("cannot decode %s text: %v", name, err)
	}
	if n := bytes.Count(r.converted, replacementChar); n > 0 {
		i := bytes.Index(r.converted, replacementChar)
		return nil, fmt.Sprintf("text is not valid %s: %d undecodable byte sequences, the first at character %d", name, n, utf8.RuneCount(r.converted[:i]))
	}
	return bytes.TrimPrefix(r.converted, utf8BOM), ""
}

var (
	utf8BOM         = []byte("\xef\xbb\xbf")
	replacementChar = []byte(string(utf8.RuneError))
)

// decodeAppend appends src decoded by t to dst. With atEOF false, an
// incomplete sequence at the end of src is left out instead of replaced.
func decodeAppend(dst []byte, t transform.Transformer, src []byte, atEOF bool) ([]byte, error) {
	t.Reset()
	for {
		if cap(dst)-len(dst) < utf8.UTFMax*2 || cap(dst)-len(dst) < len(src) {
			dst = append(dst, make([]byte, max(len(src)+len(src)/2, 64))...)[:len(dst)]
		}
		nDst, nSrc, err := t.Transform(dst[len(dst):cap(dst)], src, atEOF)
		dst, src = dst[:len(dst)+nDst], src[nSrc:]
		switch {
		case errors.Is(err, transform.ErrShortDst):
			continue
		case errors.Is(err, transform.ErrShortSrc) && !atEOF:
			return dst, nil
		}
		return dst, err
	}
}

// legacyGuess is a multi-byte charset an undeclared payload may be in, and
// the share of its non-ASCII characters that must be of the script the
// charset is used for.
type legacyGuess struct {
	name   string
	enc    encoding.Encoding
	script func(rune) bool
	share  float64
}

// legacyGuesses are tried in order. Japanese text is about a third kana,
// which GB18030 and EUC-KR text has hardly any of; EUC-JP comes before
// Shift_JIS, which reads EUC-JP kana as half-width katakana (not counted).
// Cyrillic words of odd length do not decode as GB18030, whose characters
// are two or four bytes long.
var legacyGuesses = [...]legacyGuess{
	{"euc-jp", japanese.EUCJP, isKana, 0.1},
	{"shift_jis", japanese.ShiftJIS, isKana, 0.1},
	{"euc-kr", korean.EUCKR, isHangul, 0.6},
	{"gb18030", simplifiedchinese.GB18030, isHan, 0.5},
	{"windows-1251", charmap.Windows1251, isCyrillic, 0.9},
}

func isKana(c rune) bool   { return c >= 0x3041 && c <= 0x30FF }
func isHangul(c rune) bool { return c >= 0xAC00 && c <= 0xD7A3 }
func isHan(c rune) bool    { return unicode.Is(unicode.Han, c) }

func isCyrillic(c rune) bool { return c >= 0x0400 && c <= 0x04FF }

// guessCharset guesses the charset of a payload that declares none: UTF-8
// when it is valid UTF-8; else EUC-JP, Shift_JIS, EUC-KR, GB18030 or
// windows-1251 when its non-ASCII bytes come in runs, as double-byte
// text's and Cyrillic words' do, and its first guessLen bytes decode
// without error into the script the charset is for; else windows-1252,
// the browsers' default.
func guessCharset(payload []byte) (encoding.Encoding, string) {
	if utf8.Valid(payload) {
		return encoding.Nop, "utf-8"
	}
	head := payload[:min(len(payload), guessLen)]
	if pairedHighBytes(head) {
		var buf []byte
		for _, g := range legacyGuesses {
			var err error
			buf, err = decodeAppend(buf[:0], g.enc.NewDecoder(), head, len(head) == len(payload))
			if err != nil || bytes.Contains(buf, replacementChar) {
				continue
			}
			if scriptShare(buf, g.script) >= g.share {
				return g.enc, g.name
			}
		}
	}
	e, name := charset.Lookup("windows-1252")
	return e, name
}

// pairedHighBytes reports whether nine in ten of the bytes of b above 0x7F
// have another such byte next to them.
func pairedHighBytes(b []byte) bool {
	var high, paired int
	for i, c := range b {
		if c < 0x80 {
			continue
		}
		high++
		if i > 0 && b[i-1] >= 0x80 || i+1 < len(b) && b[i+1] >= 0x80 {
			paired++
		}
	}
	return high > 0 && paired*10 >= high*9
}

// scriptShare is the share of the non-ASCII runes of text in script.
func scriptShare(text []byte, script func(rune) bool) float64 {
	var n, in int
	for _, c := range string(text) {
		if c < utf8.RuneSelf {
			continue
		}
		n++
		if script(c) {
			in++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(in) / float64(n)
}

// windows1252High maps the bytes 0x80..0x9F of windows-1252 to runes (the
// unassigned ones to the matching C1 controls, as browsers do).
var windows1252High = [32]rune{
	0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
	0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
}

// appendWindows1252 appends the UTF-8 encoding of windows-1252 text to dst.
func appendWindows1252(dst, text []byte) []byte {
	for _, c := range text {
		switch {
		case c < 0x80:
			dst = append(dst, c)
		case c < 0xA0:
			dst = utf8.AppendRune(dst, windows1252High[c-0x80])
		default:
			dst = utf8.AppendRune(dst, rune(c))
		}
	}
	return dst
}
