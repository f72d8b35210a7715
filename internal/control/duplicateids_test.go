package control

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDuplicateIDs runs jobs on corpora whose documents repeat ids: in
// one file, across files, across chunks and partitions, documents
// without text too, and one of distinct ids. The manifest counts the
// documents whose id an earlier one has (documents minus distinct ids),
// names a few such ids, and warns, on the log too; distinct ids count 0.
func TestDuplicateIDs(t *testing.T) {
	// An id ending in "!" is a document without text.
	doc := func(id string, i int) string {
		if e, ok := strings.CutSuffix(id, "!"); ok {
			return fmt.Sprintf(`{"id":%q,"text":""}`+"\n", e)
		}
		return fmt.Sprintf(`{"id":%q,"text":"document %d of a corpus whose ids repeat, %s"}`+"\n", id, i, strings.Repeat("with words enough ", 20))
	}
	tests := []struct {
		name     string
		files    map[string][]string // file -> ids of its documents, in order
		want     int64
		examples []string
	}{
		{"repeated ids", map[string][]string{
			"a.jsonl": {"x", "y", "z", "x", "e", "q"},
			"b.jsonl": {"y", "w", "q", "v", "e!"},
			"c.jsonl": {"q", "u", "t", "s"},
		}, 5, []string{"x", "y", "e"}}, // the first few by ordinal
		{"distinct ids", map[string][]string{
			"a.jsonl": {"a1", "a2", "a3", "a4", "a5", "a6"},
			"b.jsonl": {"b1", "b2", "b3", "b4!"},
		}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := t.TempDir()
			n := 0
			for name, ids := range tt.files {
				var b strings.Builder
				for _, id := range ids {
					b.WriteString(doc(id, n))
					n++
				}
				if err := os.WriteFile(filepath.Join(in, name), []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg := testConfig(t, in, filepath.Join(t.TempDir(), "out"), 2)
			cfg.Params.ChunkBytes = 1024 // a few documents a chunk
			var logs bytes.Buffer
			cfg.Log = slog.New(slog.NewTextHandler(&logs, nil))
			m, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if m.Chunks < 4 {
				t.Fatalf("%d chunks: want several", m.Chunks)
			}
			want, examples := tt.want, tt.examples
			if m.Counts.DuplicateIDs != want {
				t.Errorf("duplicate_ids %d, want %d", m.Counts.DuplicateIDs, want)
			}
			warned := slices.ContainsFunc(m.Warnings, func(w string) bool { return strings.Contains(w, "counts.duplicate_ids") })
			logged := strings.Contains(logs.String(), "counts.duplicate_ids")
			if warned != (want > 0) || logged != (want > 0) {
				t.Errorf("warned %v, logged %v; want %v:\n%q", warned, logged, want > 0, m.Warnings)
			}
			for _, id := range examples {
				if !slices.Contains(m.DuplicateIDExamples, id) {
					t.Errorf("examples %q, want %q among them", m.DuplicateIDExamples, id)
				}
			}
			if len(m.DuplicateIDExamples) > 3 {
				t.Errorf("examples %q: more than a few", m.DuplicateIDExamples)
			}
		})
	}
}
