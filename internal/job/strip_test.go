package job

import (
	"strings"
	"testing"
)

func TestParseStrip(t *testing.T) {
	tests := []struct {
		in   string
		want *Strip
		err  string // in the error; "" for none
	}{
		{"", nil, ""},
		{"min-count=3", &Strip{MinCount: 3, KeepFirst: true}, ""},
		{"min-count=10,keep-first=false", &Strip{MinCount: 10}, ""},
		{" keep-first=true , min-count=2", &Strip{MinCount: 2, KeepFirst: true}, ""},
		{"min-count=1", nil, "at least 2"},
		{"min-count=x", nil, "invalid syntax"},
		{"keep-first=false", nil, "min-count=N is required"},
		{"min-count=3,first=1", nil, `unknown key "first"`},
		{"3", nil, "no key=value"},
	}
	for _, tt := range tests {
		got, err := ParseStrip(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseStrip(%q) = %v, %v; want an error saying %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
			t.Errorf("ParseStrip(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}
