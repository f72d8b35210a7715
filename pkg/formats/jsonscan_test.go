package formats

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// jsonLineEncodingJSON is the reference for jsonLine: the former version,
// which decodes the line with encoding/json into fields.
func (r *pieceReader) jsonLineEncodingJSON(fields map[string]json.RawMessage, b []byte, off, line int64) error {
	if c := firstNonSpace(b); c != '{' {
		if json.Valid(b) {
			return r.rejectf(off, line, "invalid JSON: line is a JSON %s, not an object", jsonType(b))
		}
	}
	clear(fields)
	if err := json.Unmarshal(b, &fields); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return r.rejectf(off, line, "invalid JSON: %v (at byte %d)", err, syn.Offset)
		}
		return r.rejectf(off, line, "invalid JSON: %v", err)
	}
	raw, ok := fields[r.o.TextField]
	switch {
	case !ok:
		return r.rejectf(off, line, "missing text field %q", r.o.TextField)
	case raw[0] != '"':
		return r.rejectf(off, line, "text field %q is not a string but %s", r.o.TextField, jsonType(raw))
	}
	r.text = appendJSONString(r.text[:0], raw)
	d := Doc{Text: r.text, Offset: off, Line: line}
	raw = fields[r.o.IDField]
	switch {
	case len(raw) == 0 || raw[0] == 'n' || string(raw) == `""`: // missing, null or empty
		d.ID = r.path + ":" + strconv.FormatInt(line, 10)
	case raw[0] == '"':
		r.id = appendJSONString(r.id[:0], raw)
		if !utf8.Valid(r.id) {
			return r.rejectf(off, line, "invalid UTF-8 in id field %q", r.o.IDField)
		}
		d.ID = string(r.id)
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		d.ID = string(raw)
	default:
		return r.rejectf(off, line, "id field %q is not a string or number but %s", r.o.IDField, jsonType(raw))
	}
	if raw := fields["url"]; len(raw) > 0 && raw[0] == '"' {
		r.id = appendJSONString(r.id[:0], raw)
		d.URL = string(bytes.ToValidUTF8(r.id, []byte("\uFFFD")))
	}
	return r.doc(d)
}

// lineReader turns single JSONL lines into outcomes, with the scanner or
// with the encoding/json reference, reusing its buffers from line to line.
type lineReader struct {
	r       *pieceReader
	sc      *jsonLineScanner
	fields  map[string]json.RawMessage
	outcome string
}

// newLineReader returns a lineReader for options o of a file "f.jsonl".
func newLineReader(o Options) *lineReader {
	lr := &lineReader{fields: make(map[string]json.RawMessage)}
	o = o.withDefaults()
	lr.r = &pieceReader{ctx: context.Background(), path: "f.jsonl", o: o,
		emit: func(d Doc) error {
			lr.outcome = fmt.Sprintf("doc id=%q url=%q text=%q off=%d line=%d", d.ID, d.URL, d.Text, d.Offset, d.Line)
			return nil
		},
		reject: func(rj Reject) error {
			lr.outcome = fmt.Sprintf("reject %q off=%d line=%d", rj.Reason, rj.Offset, rj.Line)
			return nil
		},
	}
	lr.sc = newJSONLineScanner(o)
	return lr
}

// read returns the outcome of line b (at offset 7, line 3) read with the
// scanner, or with encoding/json if reference is set.
func (lr *lineReader) read(t testing.TB, b []byte, reference bool) string {
	t.Helper()
	lr.outcome = ""
	var err error
	if reference {
		err = lr.r.jsonLineEncodingJSON(lr.fields, b, 7, 3)
	} else {
		err = lr.r.jsonLine(lr.sc, b, 7, 3)
	}
	if err != nil || lr.outcome == "" {
		t.Fatalf("line %q: error %v, outcome %q", b, err, lr.outcome)
	}
	return lr.outcome
}

// doc and reject format the outcomes read returns.
func doc(id, url, text string) string {
	return fmt.Sprintf("doc id=%q url=%q text=%q off=7 line=3", id, url, text)
}

func reject(reason string) string {
	return fmt.Sprintf("reject %q off=7 line=3", reason)
}

// nested returns a line whose "a" member is n nested arrays.
func nested(n int) string {
	return `{"a":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `,"text":"t"}`
}

func TestJSONLineScanner(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		line string
		want string
	}{
		{name: "plain", line: `{"id":"a","url":"https://x/","text":"hello"}`, want: doc("a", "https://x/", "hello")},
		{name: "whitespace everywhere", line: " \t{ \"id\" :\r\"a\" , \"text\"\t:\n\"t\" } \r", want: doc("a", "", "t")},
		{name: "string escapes", line: `{"id":"a\/b","text":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"}`, want: doc("a/b", "", "\"\\/\b\f\n\r\té😀")},
		{name: "lone surrogates", line: `{"text":"\ud800 \udc00 \ud800\u0041"}`, want: doc("f.jsonl:3", "", "\uFFFD \uFFFD \uFFFDA")},
		{name: "escaped key", line: `{"t\u0065xt":"t","\u0069d":"e"}`, want: doc("e", "", "t")},
		{name: "key with surrogate pair", opts: Options{TextField: "😀"}, line: `{"\ud83d\ude00":"t"}`, want: doc("f.jsonl:3", "", "t")},
		{name: "key with lone surrogate", opts: Options{TextField: "\uFFFD"}, line: `{"\udc00":"t"}`, want: doc("f.jsonl:3", "", "t")},
		{name: "key with invalid UTF-8", opts: Options{TextField: "a\uFFFD\uFFFDb"}, line: "{\"a\xe6\x97b\":\"t\"}", want: doc("f.jsonl:3", "", "t")},
		{name: "key not unescaped twice", line: `{"t\\u0065xt":"x","text":"t"}`, want: doc("f.jsonl:3", "", "t")},
		{name: "duplicate keys: last wins", line: `{"text":"one","id":1,"text":"two","id":"x","id":2}`, want: doc("2", "", "two")},
		{name: "duplicate key after escapes", line: `{"text":"one","te\u0078t":"two"}`, want: doc("f.jsonl:3", "", "two")},
		{name: "nested values", line: `{"meta":{"text":"no","id":[1,{"id":2}]},"a":[[],{},[{}]],"text":"t"}`, want: doc("f.jsonl:3", "", "t")},
		{name: "numbers", line: `{"id":-0.5e+10,"n":[0,-0,1.25,1E5,2e-3,10],"text":"t"}`, want: doc("-0.5e+10", "", "t")},
		{name: "literals", line: `{"a":true,"b":false,"id":null,"text":"t"}`, want: doc("f.jsonl:3", "", "t")},
		{name: "same member for id and url", opts: Options{IDField: "url"}, line: `{"url":"u","text":"t"}`, want: doc("u", "u", "t")},
		{name: "same member for id and text", opts: Options{IDField: "text"}, line: `{"text":"t"}`, want: doc("t", "", "t")},
		{name: "object id", line: `{"id":{"x":1},"text":"t"}`, want: reject(`id field "id" is not a string or number but an object`)},
		{name: "array text", line: `{"text":[]}`, want: reject(`text field "text" is not a string but an array`)},
		{name: "invalid UTF-8 kept in text", line: "{\"text\":\"a\xffb\"}", want: reject("invalid UTF-8 in text at byte 1")},
		{name: "invalid UTF-8 in url replaced", line: "{\"url\":\"https://x/\xff\xfe\",\"text\":\"t\"}", want: doc("f.jsonl:3", "https://x/\uFFFD", "t")},
		{name: "empty object", line: `{}`, want: reject(`missing text field "text"`)},
		{name: "nested text only", line: `{"a":{"text":"t"}}`, want: reject(`missing text field "text"`)},
		{name: "max depth", line: nested(maxJSONDepth - 1), want: doc("f.jsonl:3", "", "t")},
		{name: "top-level number", line: ` -0.5e+10 `, want: reject("invalid JSON: line is a JSON a number, not an object")},
		{name: "top-level array", line: `[{"text":"t"}]`, want: reject("invalid JSON: line is a JSON an array, not an object")},
		{name: "top-level null", line: `null`, want: reject("invalid JSON: line is a JSON null, not an object")},

		// Syntax errors, with encoding/json's messages.
		{name: "too deep", line: nested(maxJSONDepth), want: reject("invalid JSON: invalid character '[' exceeded max depth (at byte 10005)")},
		{name: "truncated", line: `{"id":"a","te`, want: reject("invalid JSON: unexpected end of JSON input (at byte 13)")},
		{name: "truncated after colon", line: `{"id": `, want: reject("invalid JSON: unexpected end of JSON input (at byte 7)")},
		{name: "truncated number", line: `{"id":-`, want: reject("invalid JSON: invalid character ' ' in numeric literal (at byte 7)")},
		{name: "truncated exponent", line: `{"id":1e`, want: reject("invalid JSON: invalid character ' ' in exponent of numeric literal (at byte 8)")},
		{name: "truncated literal", line: `{"id":fals`, want: reject("invalid JSON: invalid character ' ' in literal false (expecting 'e') (at byte 10)")},
		{name: "truncated escape", line: `{"id":"\`, want: reject("invalid JSON: invalid character ' ' in string escape code (at byte 8)")},
		{name: "truncated unicode escape", line: `{"id":"\u12`, want: reject(`invalid JSON: invalid character ' ' in \u hexadecimal character escape (at byte 11)`)},
		{name: "top-level minus", line: `-`, want: reject("invalid JSON: invalid character ' ' in numeric literal (at byte 1)")},
		{name: "top-level garbage", line: `x`, want: reject("invalid JSON: invalid character 'x' looking for beginning of value (at byte 1)")},
		{name: "trailing garbage", line: `{"text":"t"} x`, want: reject("invalid JSON: invalid character 'x' after top-level value (at byte 14)")},
		{name: "two objects", line: `{"text":"t"}{}`, want: reject("invalid JSON: invalid character '{' after top-level value (at byte 13)")},
		{name: "missing comma", line: `{"id":"x" "text":"t"}`, want: reject(`invalid JSON: invalid character '"' after object key:value pair (at byte 11)`)},
		{name: "missing colon", line: `{"id" "x"}`, want: reject(`invalid JSON: invalid character '"' after object key (at byte 7)`)},
		{name: "trailing comma in object", line: `{"a":1,}`, want: reject("invalid JSON: invalid character '}' looking for beginning of object key string (at byte 8)")},
		{name: "trailing comma in array", line: `{"a":[1,]}`, want: reject("invalid JSON: invalid character ']' looking for beginning of value (at byte 9)")},
		{name: "bad array separator", line: `{"a":[1;2]}`, want: reject("invalid JSON: invalid character ';' after array element (at byte 8)")},
		{name: "mismatched bracket", line: `{"a":[}`, want: reject("invalid JSON: invalid character '}' looking for beginning of value (at byte 7)")},
		{name: "mismatched brace", line: `{"a":[1}`, want: reject("invalid JSON: invalid character '}' after array element (at byte 8)")},
		{name: "unquoted key", line: `{a:1}`, want: reject("invalid JSON: invalid character 'a' looking for beginning of object key string (at byte 2)")},
		{name: "single quotes", line: `{'a':1}`, want: reject(`invalid JSON: invalid character '\'' looking for beginning of object key string (at byte 2)`)},
		{name: "leading zero", line: `{"id":01}`, want: reject("invalid JSON: invalid character '1' after object key:value pair (at byte 8)")},
		{name: "bare decimal point", line: `{"id":1.}`, want: reject("invalid JSON: invalid character '}' after decimal point in numeric literal (at byte 9)")},
		{name: "plus sign", line: `{"id":+1}`, want: reject("invalid JSON: invalid character '+' looking for beginning of value (at byte 7)")},
		{name: "bad literal", line: `{"id":nul}`, want: reject("invalid JSON: invalid character '}' in literal null (expecting 'l') (at byte 10)")},
		{name: "literal run on", line: `{"id":truex}`, want: reject("invalid JSON: invalid character 'x' after object key:value pair (at byte 11)")},
		{name: "bad escape", line: `{"text":"\x"}`, want: reject("invalid JSON: invalid character 'x' in string escape code (at byte 11)")},
		{name: "bad unicode escape", line: `{"text":"\u00g0"}`, want: reject(`invalid JSON: invalid character 'g' in \u hexadecimal character escape (at byte 14)`)},
		{name: "control character in string", line: "{\"text\":\"a\tb\"}", want: reject(`invalid JSON: invalid character '\t' in string literal (at byte 11)`)},
		{name: "control character in key", line: "{\"te\x00xt\":\"t\"}", want: reject(`invalid JSON: invalid character '\x00' in string literal (at byte 5)`)},
		{name: "invalid byte outside strings", line: "{\"text\":\"t\"\xff}", want: reject("invalid JSON: invalid character 'ÿ' after object key:value pair (at byte 12)")},
		{name: "C1 byte outside strings", line: "{\x85}", want: reject(`invalid JSON: invalid character '\u0085' looking for beginning of object key string (at byte 2)`)},
		{name: "byte order mark", line: "\xef\xbb\xbf{}", want: reject("invalid JSON: invalid character 'ï' looking for beginning of value (at byte 1)")},
		{name: "empty line", line: "", want: reject("invalid JSON: unexpected end of JSON input (at byte 0)")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := newLineReader(tt.opts)
			if got := lr.read(t, []byte(tt.line), false); got != tt.want {
				t.Errorf("scanner:\n got %s\nwant %s", got, tt.want)
			}
			if got := lr.read(t, []byte(tt.line), true); got != tt.want {
				t.Errorf("encoding/json:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestJSONLineScannerAllocs(t *testing.T) {
	lines := []string{
		`{"id":"a","url":"https://x/","text":"hello \"world\" \u00e9","n":[1,-2.5e3,{"x":null}],"b":true}`,
		`{"t\u0065xt":"t","caf\u00e9":1,"id\u00e9":{"a":[[[]]]}}`,
		"{\"te\xffxt\":\"t\"}",
		nested(maxJSONDepth - 1),
		`{"id":"a","te`,
		`{"id":1e}`,
	}
	sc := newJSONLineScanner(Options{}.withDefaults())
	for _, line := range lines {
		b := []byte(line)
		sc.scan(b) // grows the key buffer
		if n := testing.AllocsPerRun(20, func() { sc.scan(b) }); n != 0 {
			t.Errorf("%.30q: %v allocations per line", line, n)
		}
	}
}

// isSyntaxReject reports whether outcome is a reject for a syntax error
// (not for valid JSON that is not an object), with a byte offset.
func isSyntaxReject(outcome string) bool {
	reason, ok := strings.CutPrefix(outcome, `reject "invalid JSON: `)
	if !ok || strings.HasPrefix(reason, "line is a JSON ") {
		return false
	}
	reason, ok = strings.CutSuffix(reason, `)" off=7 line=3`)
	i := strings.LastIndex(reason, " (at byte ")
	if !ok || i < 1 {
		return false
	}
	_, err := strconv.Atoi(reason[i+len(" (at byte "):])
	return err == nil
}

// FuzzJSONLineMatchesEncodingJSON checks that jsonLine reads every line as
// the encoding/json reference does: the same document or the same reject,
// except that for a syntax error only both must reject (the message may
// differ from encoding/json's, but must be one with a byte offset).
func FuzzJSONLineMatchesEncodingJSON(f *testing.F) {
	seeds := []string{
		`{"id":"a1","url":"https://example.com/a","text":"The quick brown fox."}`,
		`{"id":2,"text":"Numeric ids are kept.","lang":"en"}`,
		`{"text":"No id.","meta":{"id":"nested ids are not ids"}}`,
		`{"id":"b3","text":"Escapes: \"q\" tab\there \u00e9 \ud83d\ude00 slash\/ newline\nend \b\f\r\\"}`,
		`{"text":"\ud800 \udfff \ud800\ud800 \udc00\ud800 \ud83d\u0041"}`,
		`{"t\u0065xt":"t","\u0069\u0064":"e","\u0075rl":"u"}`,
		`{"\ud83d\ude00":"t","\udc00":"u"}`,
		"{\"te\xffxt\":\"t\",\"text\":\"\xff\",\"id\":\"\xc3\"}",
		`{"text":"one","id":1,"text":"two","id":"x","id":2,"url":"a","url":3}`,
		`{"a":{"text":"no","id":[1,{"id":2}]},"b":[[],{},[{}],[[[null]]]],"text":"t"}`,
		`{"id":-0.5e+10,"n":[0,-0,1.25,1E5,2e-3,10,1e+0,0.0e-0],"text":"t"}`,
		`{"id":true,"text":"t"}`,
		`{"id":null,"text":null}`,
		`{"id":"","text":""}`,
		" \t{ \"id\" :\r\"a\" , \"text\"\t:\n\"t\" ,\"n\" : [ 1 , { } ] } \r\n ",
		`{"text":"t"} x`,
		`{"text":"t"}{}`,
		`{"id":"x" "text":"t"}`,
		`{"a":1,}`,
		`{"a":[1,]}`,
		`{"a":[}`,
		`{'a':1}`,
		`{"id":01}`,
		`{"id":1.}`,
		`{"id":1e}`,
		`{"id":-}`,
		`{"id":nul}`,
		`{"text":"\x"}`,
		`{"text":"\u00g0"}`,
		"{\"text\":\"a\tb\"}",
		"{\"text\":\"t\"\xff}",
		"\xef\xbb\xbf{}",
		`{"id":"a","te`,
		`{"id":"\u12`,
		`{"id":"\`,
		`{"id":fals`,
		`[1,2]`, `"s"`, `12`, `-`, `null`, `true`, ``, ` `,
		nested(3),
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i))
	}
	f.Fuzz(func(t *testing.T, line []byte, opts uint8) {
		options := []Options{
			{},
			{IDField: "url"},
			{IDField: "text", MaxDocBytes: 8},
			{IDField: "é", TextField: "\uFFFD"},
			{IDField: "😀", TextField: "t\x00"},
		}
		lr := newLineReader(options[int(opts)%len(options)])
		want := lr.read(t, line, true)
		got := lr.read(t, line, false)
		if isSyntaxReject(want) {
			if !isSyntaxReject(got) {
				t.Fatalf("line %q:\nscanner       %s\nencoding/json %s", line, got, want)
			}
		} else if got != want {
			t.Fatalf("line %q:\nscanner       %s\nencoding/json %s", line, got, want)
		}
		// The scanner keeps nothing from one line to the next.
		lr.read(t, []byte(`{"a":[{"text":1}],"id":"x","text":"y","url":{}}`), false)
		if again := lr.read(t, line, false); again != got {
			t.Fatalf("line %q read again: %s, first %s", line, again, got)
		}
	})
}
