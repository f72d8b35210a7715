package report

import (
	"bytes"
	"fmt"
	"strings"
)

// The report's pages are written by plain code, not by html/template:
// html/template calls methods by name through reflection, which makes the
// linker keep every exported method of every type reachable through an
// interface (11.5 MB of the coordinator, docs/operations.md "The floor").
// What the pages need of it is kept here: text and attribute values are
// escaped as html/template escapes them, and a link as it filters and
// normalizes one, so the pages are byte for byte those it wrote.

// textEscaper escapes text and quoted attribute values as html/template
// does (its htmlEscaper and attrEscaper): html.EscapeString's five
// characters, and also '+' (as &#43;) and NUL (as U+FFFD).
var textEscaper = strings.NewReplacer(
	"\x00", "\uFFFD",
	`"`, "&#34;",
	"&", "&amp;",
	"'", "&#39;",
	"+", "&#43;",
	"<", "&lt;",
	">", "&gt;",
)

// escapeText is s escaped for HTML text or a quoted attribute value.
func escapeText(s string) string { return textEscaper.Replace(s) }

// safeURL is s as html/template writes it in an href attribute: a link of
// a scheme other than http, https or mailto is replaced by "#ZgotmplZ"
// (so no javascript: link gets through); the bytes a URL does not hold
// as they are are percent-encoded (but an existing %XX); and the
// result is escaped as an attribute value.
func safeURL(s string) string {
	if scheme, _, ok := strings.Cut(s, ":"); ok && !strings.ContainsRune(scheme, '/') {
		switch strings.ToLower(scheme) {
		case "http", "https", "mailto":
		default:
			return "#ZgotmplZ"
		}
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		escaped := c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2])
		if urlKept(c) || escaped {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02x", c)
		}
	}
	return escapeText(b.String())
}

// urlKept tells whether html/template's URL normalizer keeps byte c as it
// is: RFC 3986's unreserved and reserved characters, but the single quote
// and parentheses.
func urlKept(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~!#$&*+,/:;=?@[]", c) >= 0
}

// isHex tells whether c is a hexadecimal digit.
func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// htmlWriter writes a page: markup as given (constant strings of this
// package and the SVG charts it drew, whose data is escaped), text
// escaped.
type htmlWriter struct{ bytes.Buffer }

// raw writes markup as it is.
func (w *htmlWriter) raw(markup ...string) {
	for _, s := range markup {
		w.WriteString(s)
	}
}

// text writes s escaped.
func (w *htmlWriter) text(s string) { textEscaper.WriteString(&w.Buffer, s) }

// el writes the element <name attrs>text</name>, text escaped; attrs is
// markup ("" for none).
func (w *htmlWriter) el(name, attrs, text string) {
	w.WriteByte('<')
	w.WriteString(name)
	if attrs != "" {
		w.WriteByte(' ')
		w.WriteString(attrs)
	}
	w.WriteByte('>')
	w.text(text)
	w.raw("</", name, ">")
}

// caption writes a paragraph of class caption on a line of its own.
func (w *htmlWriter) caption(text string) {
	w.raw("\n")
	w.el("p", `class="caption"`, text)
}

// td is a table cell: its class ("" for none) and text, shown as code or
// not.
type td struct {
	class, text string
	code        bool
}

// cell is a cell of class class ("" for none) showing text.
func cell(class, text string) td { return td{class: class, text: text} }

// codeCell is a cell of class class showing text as code.
func codeCell(class, text string) td { return td{class: class, text: text, code: true} }

// tr writes a table row on a line of its own: the row's class ("" for
// none) and its cells.
func (w *htmlWriter) tr(class string, cells ...td) {
	w.raw("\n<tr")
	if class != "" {
		w.raw(` class="`, class, `"`)
	}
	w.raw(">")
	for _, c := range cells {
		w.td(c)
	}
	w.raw("</tr>")
}

// td writes a cell.
func (w *htmlWriter) td(c td) {
	w.raw("<td")
	if c.class != "" {
		w.raw(` class="`, c.class, `"`)
	}
	w.raw(">")
	if c.code {
		w.el("code", "", c.text)
	} else {
		w.text(c.text)
	}
	w.raw("</td>")
}

// cards writes a page's headline numbers.
func (w *htmlWriter) cards(cards []card) {
	w.raw(`<div class="cards">`)
	for _, c := range cards {
		w.raw("\n", `<div class="card">`)
		w.el("div", `class="label"`, c.Label)
		w.el("div", `class="value"`, c.Value)
		w.el("div", `class="note"`, c.Note)
		w.raw("</div>")
	}
	w.raw("\n</div>\n")
}

// head writes a page's beginning, up to its header: its title (text) and
// the inline style.
func (w *htmlWriter) head(title string) {
	w.raw(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
`)
	w.el("title", "", title)
	w.raw("\n", pageStyle, "</head>\n<body>\n<main>\n<header>\n")
}
