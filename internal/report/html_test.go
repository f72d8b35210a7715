package report

import (
	"bytes"
	"html/template"
	"testing"
)

// TestEscapeAsTemplate checks that the pages escape text and attribute
// values, and filter and normalize links, as html/template did when it
// wrote them (the test alone imports it): every single byte, alone and in
// a link, and strings that need each rule.
func TestEscapeAsTemplate(t *testing.T) {
	tmpl := template.Must(template.New("").Parse(`<p title="{{.}}">{{.}}</p><a href="{{.}}">`))
	inputs := []string{
		"", "plain text", `a<b>&"c'+d`, "nul\x00here", "bad \xff\xfe utf-8", "é ü 日本", "\ufdd0\ufffe",
		"report-pairs.html#pair-1", "javascript:alert(1)", "JavaScript:alert(1)", " javascript:x", "data:text/html,<b>",
		"http://example.com/a b?q=1&r=+x#f", "HTTPS://example.com/é", "mailto:a@b.c", "ftp://x/y",
		"/path/with:colon", "a/b:c", "100%", "%zz%41", "it's (x) [y] {z} |w| `v` ^u \\t",
	}
	for c := range 256 {
		inputs = append(inputs, string([]byte{byte(c)}), "x"+string([]byte{byte(c)})+"y", "http://h/"+string([]byte{byte(c)}))
	}
	for _, s := range inputs {
		var want bytes.Buffer
		if err := tmpl.Execute(&want, s); err != nil {
			t.Fatal(err)
		}
		got := `<p title="` + escapeText(s) + `">` + escapeText(s) + `</p><a href="` + safeURL(s) + `">`
		if got != want.String() {
			t.Errorf("%q: wrote\n%s\nhtml/template writes\n%s", s, got, want.String())
		}
	}
}
