package configfile

import (
	"reflect"
	"testing"
)

// TestParse checks the entries of small YAML and TOML files: each key with
// its line, whether it is a list, and its values' text and type. The
// commands' own test (internal/cli TestConfigValues) reads files of
// testdata as flags.
func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		parse func([]byte) ([]Entry, error)
		in    string
		want  []Entry
	}{
		{"yaml as written", ParseYAML, "# c\nout: 012\njob: no\nx: 0x1F\ny: \"on\"\n", []Entry{
			{Key: "out", Line: 2, Values: []Value{{Text: "012", Line: 2}}},
			{Key: "job", Line: 3, Values: []Value{{Text: "no", Line: 3}}},
			{Key: "x", Line: 4, Values: []Value{{Text: "0x1F", Line: 4}}},
			{Key: "y", Line: 5, Values: []Value{{Text: "on", Line: 5}}},
		}},
		{"yaml list", ParseYAML, "against:\n  - a\n  - 07\n", []Entry{
			{Key: "against", Line: 1, List: true, Values: []Value{{Text: "a", Line: 2}, {Text: "07", Line: 3}}},
		}},
		{"yaml empty", ParseYAML, "# nothing\n", nil},
		{"toml typed", ParseTOML, "b = true\na = 0x1F\nc = \"0x1F\"\nd = [1.5, \"x\"]\n", []Entry{
			{Key: "b", Line: 1, Values: []Value{{Text: "true", Type: "boolean", Line: 1}}},
			{Key: "a", Line: 2, Values: []Value{{Text: "31", Type: "integer", Line: 2}}},
			{Key: "c", Line: 3, Values: []Value{{Text: "0x1F", Line: 3}}},
			{Key: "d", Line: 4, List: true, Values: []Value{{Text: "1.5", Type: "float", Line: 4}, {Text: "x", Line: 4}}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.parse([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
