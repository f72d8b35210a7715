package formats

import (
	"encoding/json"
	"testing"
)

// TestJSONLText finds the text member of JSONL lines and writes each line
// again with another text: the text found is the reader's, and the line
// written holds every other member as it was.
func TestJSONLText(t *testing.T) {
	tests := []struct {
		name, line string
		o          Options
		text       string // "" with ok false
		ok         bool
	}{
		{"plain", `{"id":"a","text":"one\ntwo","lang":"en"}`, Options{}, "one\ntwo", true},
		{"escapes", `{"text":"caf\u00e9 \"q\" \/ end","id":1}`, Options{}, `café "q" / end`, true},
		{"line end", "{\"id\":\"a\",\"text\":\"x\"}\r\n", Options{}, "x", true},
		{"spaces", ` { "id" : "a" , "text" : "x y" } `, Options{}, "x y", true},
		{"twice: the last", `{"text":"first","id":"a","text":"last"}`, Options{}, "last", true},
		{"nested text is not the member", `{"meta":{"text":"inner"},"text":"outer"}`, Options{}, "outer", true},
		{"another field", `{"id":"a","body":"b text","text":"not this"}`, Options{TextField: "body"}, "b text", true},
		{"no text", `{"id":"a"}`, Options{}, "", false},
		{"text not a string", `{"text":42}`, Options{}, "", false},
		{"an array", `["text","x"]`, Options{}, "", false},
		{"invalid", `{"text":"x"`, Options{}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewJSONLText(tt.o)
			line := []byte(tt.line)
			text, start, end, ok := f.Find(line)
			if ok != tt.ok || string(text) != tt.text {
				t.Fatalf("Find = %q, %v; want %q, %v", text, ok, tt.text, tt.ok)
			}
			if !ok {
				return
			}
			again := string(line[:start]) + `"NEW"` + string(line[end:])
			var before, after map[string]any
			if err := json.Unmarshal(line, &before); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(again), &after); err != nil {
				t.Fatalf("the line written again is no JSON: %v\n%s", err, again)
			}
			field := tt.o.withDefaults().TextField
			before[field] = "NEW"
			if b, a := mustJSON(t, before), mustJSON(t, after); b != a {
				t.Errorf("written again:\n%s\nwant the members of\n%s", a, b)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
