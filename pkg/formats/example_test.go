package formats_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/pkg/formats"
)

// Read calls back once per document and once per record it had to skip,
// naming the file, offset and line.
func ExampleRead() {
	dir, _ := os.MkdirTemp("", "formats-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "docs.jsonl")
	os.WriteFile(path, []byte(`{"id":"a","text":"the quick brown fox"}
{not json
{"id":"b","text":"jumps over the lazy dog","url":"https://example.com/b"}
`), 0o644)

	piece := formats.Piece{Path: path, Kind: formats.KindJSONL, End: -1, StartLine: 1}
	err := formats.Read(context.Background(), piece, formats.Options{},
		func(d formats.Doc) error {
			fmt.Printf("doc %s at offset %d: %q url=%q\n", d.ID, d.Offset, d.Text, d.URL)
			return nil
		},
		func(r formats.Reject) error {
			fmt.Printf("reject at offset %d, line %d: %.12s...\n", r.Offset, r.Line, r.Reason)
			return nil
		})
	fmt.Println("error:", err)
	// Output:
	// doc a at offset 0: "the quick brown fox" url=""
	// reject at offset 40, line 2: invalid JSON...
	// doc b at offset 50: "jumps over the lazy dog" url="https://example.com/b"
	// error: <nil>
}
