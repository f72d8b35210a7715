package formats

import "testing"

func TestHTMLText(t *testing.T) {
	tests := []struct{ name, html, want string }{
		{"plain", "hello world", "hello world"},
		{"whitespace collapsed", "  a \n\t b  ", "a b"},
		{"inline elements join", "un<b>believ</b>able", "unbelievable"},
		{"blocks separate", "<p>one</p><p>two</p><div>three</div>", "one\ntwo\nthree"},
		{"br", "line<br>next<br/>last", "line\nnext\nlast"},
		{"cells", "<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>", "a b\nc"},
		{"script and style", `<script>if (a < b) { document.write("<p>x</p>") }</script><style>p{}</style>kept`, "kept"},
		{"script case", "<SCRIPT type=x>bad()</SCRIPT>ok", "ok"},
		{"self-closed script", "<script src=a.js />hidden</script>shown", "shown"},
		{"unclosed script", "shown<script>hidden", "shown"},
		{"noscript", "<noscript><p>enable js</p></noscript>text", "text"},
		{"nested template", "<template><div><template>x</template>y</div></template>z", "z"},
		{"entities", "fish &amp; chips &lt;3 &eacute; &#x263A;", "fish & chips <3 é ☺"},
		{"comments", "a<!-- hidden -->b", "ab"},
		{"stray end tag", "</script>a</template>b", "ab"},
		{"title kept", "<title>T</title><body>B</body>", "T\nB"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		if got := string(htmlText(nil, []byte(tt.html))); got != tt.want {
			t.Errorf("%s: htmlText(%q) = %q, want %q", tt.name, tt.html, got, tt.want)
		}
	}
}

func TestHTMLTextAppends(t *testing.T) {
	if got := string(htmlText([]byte("prefix:"), []byte("<p>a</p>"))); got != "prefix:a" {
		t.Errorf("got %q", got)
	}
}
