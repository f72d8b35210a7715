package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/nettest"
	"github.com/neardup/neardup/internal/redact/redacttest"
)

// TestHostilePasswords runs the worker and a coordinator job with a
// --nats URL (alone, and second in a list of servers) whose password
// holds each of redacttest.Hostile, against a port nothing listens on, and
// `config print` of both: no stdout or stderr line shows the password. A
// URL that cannot be parsed is a usage error (exit 2) naming --nats; one
// that can fails to connect (exit 1).
func TestHostilePasswords(t *testing.T) {
	clearEnv(t)
	addr := nettest.RefusedAddr(t)
	input := filepath.Join("..", "..", "testdata", "sample", "broken.jsonl")
	for _, h := range redacttest.Hostile() {
		for _, list := range []bool{false, true} {
			url := "nats://" + h.Text + "@" + addr
			if list {
				url = "nats://127.0.0.1:1," + url
			}
			timeout, want := "300ms", 1
			if h.Malformed {
				want = 2
			}
			tests := []struct {
				name, prog string
				cmds       []Command
				args       []string
				want       int
			}{
				{"worker", "worker", Worker(), []string{"--nats", url, "--connect-timeout", timeout, "--data-root", "."}, want},
				{"worker json", "worker", Worker(), []string{"--nats", url, "--connect-timeout", timeout, "--data-root", ".", "--log-format", "json"}, want},
				{"coordinator", "coordinator", Coordinator(), []string{"--nats", url, "--connect-timeout", timeout, "--out", filepath.Join(t.TempDir(), "out"), input}, want},
				{"coordinator json", "coordinator", Coordinator(), []string{"--nats", url, "--connect-timeout", timeout, "--out", filepath.Join(t.TempDir(), "out"), "--log-format", "json", input}, want},
				{"worker config print", "worker", Worker(), []string{"config", "print", "--nats", url}, 0},
				{"coordinator config print", "coordinator", Coordinator(), []string{"config", "print", "--nats", url}, 0},
			}
			for _, tt := range tests {
				name := tt.name + " " + h.Text
				if list {
					name += " second of two"
				}
				t.Run(name, func(t *testing.T) {
					var stdout, stderr bytes.Buffer
					got := Main(tt.prog, tt.args, tt.cmds, &stdout, &stderr)
					out := stdout.String() + stderr.String()
					if s := redacttest.Shown(out); s != "" {
						t.Errorf("the output shows %q of the password:\n%s", s, out)
					}
					if got != tt.want {
						t.Errorf("exit %d, want %d:\n%s", got, tt.want, out)
					}
					switch {
					case tt.want == 0 && !strings.Contains(stdout.String(), "redacted"):
						t.Errorf("config print does not say the URL is redacted:\n%s", out)
					case tt.want == 2 && !strings.Contains(stderr.String(), "--nats"):
						t.Errorf("the usage error does not name --nats:\n%s", out)
					}
				})
			}
		}
	}
}

// TestMalformedNATSURLAtOnce checks that a --nats URL that cannot be
// parsed stops the worker and the coordinator at once, as a usage error
// (exit 2), instead of being retried for --connect-timeout.
func TestMalformedNATSURLAtOnce(t *testing.T) {
	clearEnv(t)
	url := "nats://neardup:Zq9%Xw7@127.0.0.1:1"
	input := filepath.Join("..", "..", "testdata", "sample", "broken.jsonl")
	tests := []struct {
		prog string
		cmds []Command
		args []string
	}{
		{"worker", Worker(), []string{"--nats", url, "--connect-timeout", "30s", "--data-root", "."}},
		{"coordinator", Coordinator(), []string{"--nats", url, "--connect-timeout", "30s", "--out", filepath.Join(t.TempDir(), "out"), input}},
	}
	for _, tt := range tests {
		t.Run(tt.prog, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			start := time.Now()
			got := Main(tt.prog, tt.args, tt.cmds, &stdout, &stderr)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v of --connect-timeout 30s: the URL was retried", took.Round(time.Millisecond))
			}
			if got != 2 {
				t.Errorf("exit %d, want 2 (a usage error):\n%s%s", got, stdout.String(), stderr.String())
			}
		})
	}
}

// TestLocationSecrets runs every command that takes an object-store
// location with one whose URL carries a password, for each of
// redacttest.Hostile: each refuses it (exit 1 or 2), and no stdout or
// stderr line shows the password.
func TestLocationSecrets(t *testing.T) {
	clearEnv(t)
	input := filepath.Join("..", "..", "testdata", "sample", "broken.jsonl")
	dir := t.TempDir()
	for _, h := range redacttest.Hostile() {
		loc := "s3://" + h.Text + "@bucket/x"
		tests := []struct {
			prog string
			cmds []Command
			args []string
		}{
			{"coordinator", Coordinator(), []string{"--out", loc, input}},
			{"coordinator", Coordinator(), []string{"--out", filepath.Join(dir, "o"), "--quiet", loc}},
			{"coordinator", Coordinator(), []string{"--out", filepath.Join(dir, "o"), "--quiet", "--against", loc, input}},
			{"coordinator", Coordinator(), []string{"--series", loc, "--quiet", input}},
			{"coordinator", Coordinator(), []string{"write-kept", "--job", loc, "--dir", filepath.Join(dir, "k")}},
			{"coordinator", Coordinator(), []string{"query", "--index", loc, input}},
			{"coordinator", Coordinator(), []string{"index", "compact", "--out", loc, dir}},
			{"coordinator", Coordinator(), []string{"index", "compact", "--out", filepath.Join(dir, "ix"), loc}},
			{"coordinator", Coordinator(), []string{"series", "list", loc}},
			{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--data-root", loc}},
		}
		for _, tt := range tests {
			t.Run(tt.prog+" "+strings.Join(tt.args, " "), func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				got := Main(tt.prog, tt.args, tt.cmds, &stdout, &stderr)
				out := stdout.String() + stderr.String()
				if s := redacttest.Shown(out); s != "" {
					t.Errorf("the output shows %q of the password:\n%s", s, out)
				}
				if got != 1 && got != 2 {
					t.Errorf("exit %d, want 1 or 2:\n%s", got, out)
				}
			})
		}
	}
}
