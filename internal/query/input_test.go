package query

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
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

// endless is a stream without end: its bytes (zeros, as /dev/zero's,
// after head) never make a line end.
type endless struct{ head *strings.Reader }

func (e *endless) Read(p []byte) (int, error) {
	if e.head.Len() > 0 {
		return e.head.Read(p)
	}
	clear(p)
	return len(p), nil
}

// TestReadDocsEndless reads a stream that never ends a line, as JSONL
// and as text, from standard input and from /dev/zero: each is an error
// naming the input, the line and its offset, within the bound on a line,
// not a read that spins for ever (issue 31: --format jsonl on /dev/zero
// used a core until killed).
func TestReadDocsEndless(t *testing.T) {
	first := "{\"id\":\"a\",\"text\":\"x\"}\n"
	tests := []struct {
		name, path, head, format string
		wantErr                  string
	}{
		{"jsonl", Stdin, "", FormatJSONL, fmt.Sprintf("standard input: line 1 (offset 0): longer than %d bytes", jsonlLineBytes)},
		{"jsonl after a document", Stdin, first, FormatJSONL, fmt.Sprintf("standard input: line 2 (offset %d): longer than %d bytes", len(first), jsonlLineBytes)},
		{"jsonl sniffed", Stdin, "{", FormatAuto, "standard input: line 1 (offset 0): longer than"},
		{"text", Stdin, first, FormatText, fmt.Sprintf("standard input: line 2 (offset %d): longer than %d bytes", len(first), maxLineBytes)},
		{"jsonl /dev/zero", "/dev/zero", "", FormatJSONL, "/dev/zero: line 1 (offset 0): longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := os.Stat(tt.path); tt.path != Stdin && err != nil {
				t.Skip(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			var docs []string
			go func() {
				done <- ReadDocs(ctx, tt.path, &endless{strings.NewReader(tt.head)}, tt.format, 1, func(d []Doc) error {
					docs = append(docs, d[0].ID)
					return nil
				})
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error saying %q", err, tt.wantErr)
				}
				if tt.head == first && !reflect.DeepEqual(docs, []string{"a"}) && tt.format == FormatJSONL {
					t.Errorf("documents %q before the endless line, want [a]", docs)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("still reading an endless line after 20 s")
			}
		})
	}
}
