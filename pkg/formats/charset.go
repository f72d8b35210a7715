package formats

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// sniffLen is how far into an HTML payload a <meta charset> is looked for.
const sniffLen = 1024

// sniffCharset returns the charset an HTML document declares in its first
// sniffLen bytes ("charset=..." in a meta element), lower case, or "".
func sniffCharset(doc []byte) string {
	head := doc[:min(len(doc), sniffLen)]
	i := bytes.Index(bytes.ToLower(head), []byte("charset="))
	if i < 0 {
		return ""
	}
	v := head[i+len("charset="):]
	v = bytes.TrimLeft(v, `"' `)
	end := bytes.IndexAny(v, "\"' ;/>")
	if end < 0 {
		return ""
	}
	return string(bytes.ToLower(v[:end]))
}

// toUTF8 returns text converted to UTF-8 from charset, or why it cannot be.
// UTF-8 and windows-1252 (which also stands for latin-1 and ASCII, as in
// browsers) are decoded; text in another declared charset is taken as is
// when it happens to be valid UTF-8 (plain ASCII, say).
func (r *pieceReader) toUTF8(text []byte, charset string) ([]byte, string) {
	switch charset {
	case "", "utf-8", "utf8", "unicode-1-1-utf-8":
		return text, ""
	case "windows-1252", "cp1252", "x-cp1252", "iso-8859-1", "iso8859-1", "iso88591",
		"iso_8859-1", "latin1", "l1", "us-ascii", "ascii", "ansi_x3.4-1968", "cp819", "ibm819":
		r.converted = appendWindows1252(r.converted[:0], text)
		return r.converted, ""
	}
	if utf8.Valid(text) {
		return text, ""
	}
	return nil, fmt.Sprintf("unsupported charset %q (text is not valid UTF-8)", charset)
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
