package formats

import (
	"bytes"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// separator is what goes between two runs of text.
type separator int

const (
	sepNone    separator = iota
	sepSpace             // whitespace, or a table cell boundary
	sepNewline           // a block element boundary
)

// htmlText appends the visible text of an HTML document to dst: the text
// outside script, style, noscript, template, iframe, noembed and noframes
// elements, with entities decoded, runs of whitespace collapsed to one
// space, and a newline at the boundaries of block elements so that words
// from different blocks do not run together.
func htmlText(dst, doc []byte) []byte {
	z := html.NewTokenizer(bytes.NewReader(doc))
	base := len(dst)
	skip := 0 // depth inside elements whose content is not text
	pending := sepNone
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return dst
		case html.TextToken:
			if skip > 0 {
				continue
			}
			for _, c := range z.Text() {
				if isHTMLSpace(c) {
					pending = max(pending, sepSpace)
					continue
				}
				if len(dst) > base {
					switch pending {
					case sepSpace:
						dst = append(dst, ' ')
					case sepNewline:
						dst = append(dst, '\n')
					}
				}
				pending = sepNone
				dst = append(dst, c)
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			switch hidden(a) {
			case hiddenRaw:
				// The tokenizer reads the content of these as raw text even
				// after a self-closing tag, up to the end tag.
				if tt == html.EndTagToken {
					skip = max(skip-1, 0)
				} else {
					skip++
				}
				continue
			case hiddenNested:
				switch tt {
				case html.StartTagToken:
					skip++
				case html.EndTagToken:
					skip = max(skip-1, 0)
				}
				continue
			}
			pending = max(pending, boundary(a))
		}
	}
}

// isHTMLSpace reports whether c is HTML whitespace.
func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// hiddenKind tells how an element hides its content from the text.
type hiddenKind int

const (
	notHidden    hiddenKind = iota
	hiddenRaw               // content is raw text up to the end tag
	hiddenNested            // content is markup; elements nest
)

// hidden tells whether the content of element a is left out of the text.
func hidden(a atom.Atom) hiddenKind {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Iframe, atom.Noembed, atom.Noframes:
		return hiddenRaw
	case atom.Template:
		return hiddenNested
	}
	return notHidden
}

// boundary is the separator the start or end of element a puts in the text.
func boundary(a atom.Atom) separator {
	switch a {
	case atom.Td, atom.Th, atom.Img, atom.Input, atom.Button, atom.Select, atom.Option, atom.Label:
		return sepSpace
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Body, atom.Br,
		atom.Caption, atom.Center, atom.Dd, atom.Details, atom.Dialog, atom.Div, atom.Dl,
		atom.Dt, atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer, atom.Form,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Head, atom.Header,
		atom.Hgroup, atom.Hr, atom.Html, atom.Li, atom.Main, atom.Menu, atom.Nav, atom.Ol,
		atom.P, atom.Pre, atom.Section, atom.Summary, atom.Table, atom.Tbody, atom.Tfoot,
		atom.Thead, atom.Title, atom.Tr, atom.Ul, atom.Textarea:
		return sepNewline
	}
	return sepNone
}
