package kept_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/neardup/neardup/internal/control"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/internal/queue"
)

// TestStripKeepsMembers strips the repeated lines of a JSONL file with
// members beside id and text (an object with a "text" of its own, HTML,
// non-ASCII text), a byte order mark, a broken line and a blank line:
// each kept document's line keeps every member but its text as it was,
// its text without the repeated line (but in the first document holding
// it), and the lines that are no documents are written as they are.
func TestStripKeepsMembers(t *testing.T) {
	in := filepath.Join(t.TempDir(), "pages.jsonl")
	const menu = "Menu: home · about · contact"
	var b strings.Builder
	b.WriteString("\xef\xbb\xbf")
	want := map[string]map[string]any{} // by id, the members as read
	for i := range 40 {
		body := fmt.Sprintf("Page %d tells of <b>fish & chips</b> number %d, and of café %d.\nIts second line, %d.", i, i*7, i*3, i)
		text := menu + "\n" + body
		line := map[string]any{"id": fmt.Sprintf("p%02d", i), "lang": "en", "meta": map[string]any{"n": float64(i), "text": "inner"}, "text": text, "tail": "<i>&</i>"}
		enc, err := json.Marshal(line)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(enc)
		b.WriteByte('\n')
		if i == 10 {
			b.WriteString("{\"id\":\"broken\",\"text\":\"cut off\n\n")
		}
		want[line["id"].(string)] = line
	}
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	p := job.DefaultParams()
	p.Paragraphs, p.Partitions = true, 2
	out := filepath.Join(t.TempDir(), "job")
	qc := queue.DefaultConfig()
	qc.AckWait = 10 * time.Second
	if _, err := control.Run(context.Background(), control.Config{Out: out, Inputs: []string{in}, Params: p, Workers: 2, Queue: qc, Log: slog.New(slog.DiscardHandler)}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "kept")
	sum, err := kept.Write(context.Background(), kept.Options{Job: out, Dir: dir, Format: kept.FormatJSONL, Roots: rootsAt(t, in),
		Strip: &job.Strip{MinCount: 2, KeepFirst: true}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Stripped != 39 {
		t.Errorf("%d units stripped, want the menu line of 39 pages", sum.Stripped)
	}
	f, err := os.Open(filepath.Join(dir, sum.Files[0].Outputs[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	var others []string
	docs := 0
	for sc.Scan() {
		line := strings.TrimPrefix(sc.Text(), "\xef\xbb\xbf")
		var got map[string]any
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			others = append(others, line)
			continue
		}
		docs++
		id, _ := got["id"].(string)
		w := want[id]
		if w == nil {
			t.Fatalf("line of an unknown document: %s", line)
		}
		text := w["text"].(string)
		if id != "p00" {
			text = strings.TrimPrefix(text, menu+"\n")
		}
		if got["text"] != text {
			t.Errorf("%s: text %q, want %q", id, got["text"], text)
		}
		for k, v := range w {
			if k != "text" && !reflect.DeepEqual(got[k], v) {
				t.Errorf("%s: member %s is %v, was %v", id, k, got[k], v)
			}
		}
		if len(got) != len(w) {
			t.Errorf("%s: %d members, was %d: %s", id, len(got), len(w), line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if docs != 40 || !reflect.DeepEqual(others, []string{`{"id":"broken","text":"cut off`, ""}) {
		t.Errorf("%d documents, other lines %q: want 40 and the broken and the blank lines as they were", docs, others)
	}
}
