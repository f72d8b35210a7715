package formats

import (
	"strings"
	"testing"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
	"golang.org/x/text/encoding/unicode"
)

// encode encodes s, which must be representable, in e.
func encode(t *testing.T, e encoding.Encoding, s string) string {
	t.Helper()
	b, err := e.NewEncoder().String(s)
	if err != nil {
		t.Fatalf("encoding %q: %v", s, err)
	}
	return b
}

// Texts in the scripts of the charsets tested; each is long enough for a
// guess, as real pages are.
const (
	russian      = "Съешь же ещё этих мягких французских булок, да выпей чаю."
	japaneseText = "いろはにほへと ちりぬるを わかよたれそ つねならむ。日本語の文章です。カタカナも少し。"
	chinese      = "我能吞下玻璃而不伤身体。这是一个简体中文的网页，用于测试字符集的识别。"
	koreanText   = "다람쥐 헌 쳇바퀴에 타고파. 한국어 문장을 시험합니다."
	czech        = "Příliš žluťoučký kůň úpěl ďábelské ódy."
	taiwan       = "我能吞下玻璃而不傷身體。"
	german       = "Falsches Üben von Xylophonmusik quält jeden größeren Zwerg."
)

func TestCharsets(t *testing.T) {
	utf16le := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM)
	utf16be := unicode.UTF16(unicode.BigEndian, unicode.UseBOM)
	tests := []struct {
		name   string
		header string // HTTP Content-Type
		body   string // the encoded payload
		want   string // the text, or "" with reason
		reason string
	}{
		{name: "windows-1251 in the header", header: "text/html; charset=windows-1251",
			body: "<p>" + encode(t, charmap.Windows1251, russian) + "</p>", want: russian},
		{name: "windows-1251 undeclared", header: "text/html",
			body: "<p>" + encode(t, charmap.Windows1251, russian) + "</p>", want: russian},
		{name: "koi8-r in the header", header: "text/html; charset=KOI8-R",
			body: "<p>" + encode(t, charmap.KOI8R, russian) + "</p>", want: russian},
		{name: "shift_jis in a meta charset", header: "text/html",
			body: `<html><head><meta charset="Shift_JIS"></head><p>` + encode(t, japanese.ShiftJIS, japaneseText) + "</p>", want: japaneseText},
		{name: "euc-jp undeclared", header: "text/html",
			body: "<p>" + encode(t, japanese.EUCJP, japaneseText) + "</p>", want: japaneseText},
		{name: "shift_jis undeclared", header: "text/html",
			body: "<p>" + encode(t, japanese.ShiftJIS, japaneseText) + "</p>", want: japaneseText},
		{name: "gb18030 in the header", header: "text/html; charset=gb18030",
			body: "<p>" + encode(t, simplifiedchinese.GB18030, chinese) + "</p>", want: chinese},
		{name: "gbk undeclared", header: "text/html",
			body: "<p>" + encode(t, simplifiedchinese.GBK, chinese) + "</p>", want: chinese},
		{name: "euc-kr undeclared", header: "text/html",
			body: "<p>" + encode(t, korean.EUCKR, koreanText) + "</p>", want: koreanText},
		{name: "big5 in a meta http-equiv", header: "text/html",
			body: `<meta http-equiv="Content-Type" content="text/html; charset=big5"><p>` + encode(t, traditionalchinese.Big5, taiwan), want: taiwan},
		{name: "iso-8859-2 in a meta http-equiv", header: "text/html",
			body: `<meta http-equiv="content-type" content="text/html; charset=iso-8859-2"><p>` + encode(t, charmap.ISO8859_2, czech) + "</p>", want: czech},
		{name: "utf-16le with a byte-order mark", header: "text/html",
			body: encode(t, utf16le, "<p>"+japaneseText+"</p>"), want: japaneseText},
		{name: "utf-16be with a byte-order mark", header: "text/html; charset=utf-8",
			body: encode(t, utf16be, "<p>"+czech+"</p>"), want: czech},
		{name: "utf-16 in the header", header: "text/html; charset=utf-16",
			body: encode(t, unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), "<p>"+chinese+"</p>"), want: chinese},
		{name: "utf-8 after 1 KiB of ascii", header: "text/html",
			body: "<!-- " + strings.Repeat("x", 2000) + " --><p>" + chinese, want: chinese},
		{name: "utf-8 with a byte-order mark", header: "text/html",
			body: "\xef\xbb\xbf<p>" + czech, want: czech},
		{name: "latin-1 undeclared", header: "text/html",
			body: "<p>" + encode(t, charmap.Windows1252, german), want: german},
		{name: "plain text in windows-1251", header: "text/plain; charset=cp1251",
			body: encode(t, charmap.Windows1251, russian), want: russian},
		{name: "plain text ignores meta", header: "text/plain",
			body: `<meta charset="shift_jis">` + "caf\xc3\xa9", want: `<meta charset="shift_jis">café`},
		{name: "unknown charset, valid utf-8", header: "text/html; charset=x-nonesuch",
			body: "<p>" + czech, want: czech},
		{name: "unknown charset, not utf-8", header: "text/html; charset=x-nonesuch",
			body: "<p>caf\xe9", reason: `unsupported charset "x-nonesuch" (text is not valid UTF-8 and declares no other charset)`},
		{name: "invalid shift_jis", header: "text/html; charset=shift_jis",
			body:   "<p>" + encode(t, japanese.ShiftJIS, "日本") + "\x81\x20" + encode(t, japanese.ShiftJIS, "語"),
			reason: "text is not valid shift_jis: 1 undecodable byte sequences, the first at character 5"},
		{name: "invalid utf-8", header: "text/html; charset=utf-8",
			body: "<p>caf\xe9", reason: "invalid UTF-8 in text at byte 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := response("<urn:c>", "http://c.example/", "HTTP/1.1 200 OK\r\nContent-Type: "+tt.header+"\r\n", tt.body)
			res := readFile(t, writeFile(t, t.TempDir(), "c.warc", []byte(rec)), Options{})
			if res.err != nil {
				t.Fatal(res.err)
			}
			if tt.reason != "" {
				if len(res.docs) != 0 || len(res.rejects) != 1 || res.rejects[0].Reason != tt.reason {
					t.Fatalf("docs %+v, rejects %q; want the reject %q", summarize(res.docs), reasons(res.rejects), tt.reason)
				}
				return
			}
			if len(res.docs) != 1 || len(res.rejects) != 0 {
				t.Fatalf("docs %+v, rejects %q; want one document", summarize(res.docs), reasons(res.rejects))
			}
			if got := string(res.docs[0].Text); got != tt.want {
				t.Errorf("text %q, want %q", got, tt.want)
			}
		})
	}
}
