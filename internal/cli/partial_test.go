package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/faults"
)

// TestPartialLogLine runs a job whose map task 0 panics every time: it exits
// 4 and its last log line of the outcome is a warning that the job is
// partial, never an INFO "job complete" (with or without --allow-partial).
func TestPartialLogLine(t *testing.T) {
	t.Setenv("NATS_URL", "")
	t.Setenv("NATS_CREDS", "")
	t.Setenv(faults.EnvVar, "panic@map/0")
	dir := t.TempDir()
	var inputs []string
	for f := range 2 {
		var b strings.Builder
		for i := range 30 {
			fmt.Fprintf(&b, `{"id":"f%d-%d","text":"file %d document %d with some words to read"}`+"\n", f, i, f, i)
		}
		p := filepath.Join(dir, fmt.Sprintf("in%d.jsonl", f))
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, p)
	}
	for _, tt := range []struct {
		flags []string
		want  string
	}{
		{nil, "job partial: "},
		{[]string{"--allow-partial"}, "job partial, accepted with --allow-partial"},
	} {
		t.Run(strings.Join(append([]string{"flags"}, tt.flags...), " "), func(t *testing.T) {
			args := append([]string{"--out", filepath.Join(t.TempDir(), "out"), "--chunk-bytes", "1024", "--max-deliver", "1",
				"--workers", "1", "--log-format", "json", "--quiet"}, tt.flags...)
			var stdout, stderr bytes.Buffer
			if code := Main("coordinator", append(args, inputs...), Coordinator(), &stdout, &stderr); code != 4 {
				t.Fatalf("exit %d, want 4:\n%s", code, stderr.String())
			}
			var partial bool
			for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
				var rec struct{ Level, Msg string }
				json.Unmarshal([]byte(line), &rec)
				if rec.Msg == "job complete" {
					t.Errorf("a partial job logged %s", line)
				}
				partial = partial || rec.Level == "WARN" && strings.HasPrefix(rec.Msg, tt.want)
			}
			if !partial {
				t.Errorf("no WARN %q line:\n%s", tt.want, stderr.String())
			}
		})
	}
}
