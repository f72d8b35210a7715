package query

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestReadDocs reads JSONL and text, from files and standard input, in
// batches, and checks that a bad line is an error naming the input, the
// line and its offset.
func TestReadDocs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	jsonl := "{\"id\":\"a\",\"text\":\"one two\"}\n\n{\"id\":\"b\",\"text\":\"three\"}\n{\"id\":\"c\",\"text\":\"four\"}\n"
	text := "one two\n\nthree\r\nfour"
	tests := []struct {
		name    string
		path    string // Stdin: read stdin
		stdin   string
		format  string
		batch   int
		want    [][]string // ids by batch
		wantErr string
	}{
		{name: "jsonl by name", path: write("d.jsonl", jsonl), format: FormatAuto, batch: 2, want: [][]string{{"a", "b"}, {"c"}}},
		{name: "jsonl sniffed", path: write("d.json", jsonl), format: FormatAuto, batch: 5, want: [][]string{{"a", "b", "c"}}},
		{name: "jsonl stdin", path: Stdin, stdin: "  \n" + jsonl, format: FormatAuto, batch: 1, want: [][]string{{"a"}, {"b"}, {"c"}}},
		{name: "text by name", path: write("d.txt", text), format: FormatAuto, batch: 2, want: [][]string{{"1", "3"}, {"4"}}},
		{name: "text sniffed", path: Stdin, stdin: text, format: FormatAuto, batch: 9, want: [][]string{{"1", "3", "4"}}},
		{name: "jsonl read as text", path: write("e.jsonl", jsonl), format: FormatText, batch: 9, want: [][]string{{"1", "3", "4"}}},
		{name: "empty", path: Stdin, format: FormatAuto, batch: 9},
		{name: "bad json", path: write("bad.jsonl", jsonl+"{\"id\":\"d\",\"text\":\n"), format: FormatJSONL, batch: 2,
			wantErr: "bad.jsonl: line 5 (offset 80): invalid JSON"},
		{name: "no text", path: Stdin, stdin: "{\"id\":\"a\",\"text\":\"x\"}\n{\"id\":\"b\"}\n", format: FormatJSONL, batch: 1,
			wantErr: "standard input: line 2 (offset 22): missing text field \"text\""},
		{name: "missing file", path: filepath.Join(dir, "none.jsonl"), format: FormatAuto, batch: 1, wantErr: "none.jsonl: no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got [][]string
			texts := map[string]string{}
			err := ReadDocs(context.Background(), tt.path, strings.NewReader(tt.stdin), tt.format, tt.batch, func(docs []Doc) error {
				var ids []string
				for _, d := range docs {
					ids = append(ids, d.ID)
					texts[d.ID] = string(d.Text)
				}
				got = append(got, ids)
				return nil
			})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("batches %q, want %q", got, tt.want)
			}
			if tt.format != FormatText && texts["3"] != "" && texts["3"] != "three" {
				t.Errorf("line 3 read as %q", texts["3"])
			}
			if texts["a"] != "" && texts["a"] != "one two" {
				t.Errorf("document a read as %q", texts["a"])
			}
		})
	}
}
