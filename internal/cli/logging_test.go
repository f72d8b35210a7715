package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// TestWaitingForNATS runs the worker and a coordinator job against a
// loopback port nothing listens on, with JSON logs: every stderr line is a
// JSON object, one says what the command waits for (the URL without its
// password), and the coordinator's stdout is one JSON summary of the
// failure.
func TestWaitingForNATS(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	url := "nats://neardup:s3cret@" + addr
	common := []string{"--nats", url, "--connect-timeout", "1500ms", "--log-format", "json"}
	tests := []struct {
		prog string
		cmds []Command
		args []string
	}{
		{"worker", Worker(), append([]string{"--data-root", "."}, common...)},
		{"coordinator", Coordinator(), append([]string{filepath.Join("..", "..", "testdata", "sample", "broken.jsonl"), "--out", filepath.Join(t.TempDir(), "out")}, common...)},
	}
	for _, tt := range tests {
		t.Run(tt.prog, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if exit := Main(tt.prog, tt.args, tt.cmds, &stdout, &stderr); exit != 1 {
				t.Fatalf("exit %d, want 1; stderr:\n%s", exit, stderr.String())
			}
			if strings.Contains(stdout.String()+stderr.String(), "s3cret") {
				t.Errorf("the NATS password is in the output:\n%s%s", stdout.String(), stderr.String())
			}
			waiting := 0
			for _, line := range strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n") {
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("a log line is not JSON: %v\n%s", err, line)
				}
				for _, k := range []string{"time", "level", "msg"} {
					if _, ok := rec[k]; !ok {
						t.Errorf("log line without %q: %s", k, line)
					}
				}
				if rec["msg"] == "waiting for the NATS server" {
					waiting++
					if nats := fmt.Sprint(rec["nats"]); !strings.Contains(nats, addr) || !strings.Contains(nats, "xxxxx") {
						t.Errorf("the waiting line names %q, want %s with its password hidden", nats, addr)
					}
				}
			}
			if waiting == 0 {
				t.Errorf("no line says it is waiting for the NATS server:\n%s", stderr.String())
			}
			if tt.prog != "coordinator" {
				return
			}
			var s summary
			dec := json.NewDecoder(&stdout)
			if err := dec.Decode(&s); err != nil {
				t.Fatalf("stdout is not a JSON summary: %v\n%s", err, stdout.String())
			}
			if s.Status != "failed" || s.ExitCode != 1 || !strings.Contains(s.Error, addr) || dec.More() {
				t.Errorf("summary %+v (more: %v), want one, failed, exit 1, naming %s", s, dec.More(), addr)
			}
		})
	}
}

// TestMetricsAddrInUse checks that a coordinator whose metrics port is
// taken stops before its job with exit status 1 and says so, on stderr
// and in its stdout summary.
func TestMetricsAddrInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	args := []string{"--out", out, "--metrics-addr", l.Addr().String(), filepath.Join("..", "..", "testdata", "sample", "broken.jsonl")}
	if exit := Main("coordinator", args, Coordinator(), &stdout, &stderr); exit != 1 || !strings.Contains(stderr.String(), "--metrics-addr") {
		t.Fatalf("exit %d, want 1 naming --metrics-addr; stderr:\n%s", exit, stderr.String())
	}
	var s summary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil || s.Status != "failed" || s.ExitCode != 1 || !strings.Contains(s.Error, "--metrics-addr") {
		t.Errorf("summary %+v (%v), want failed, exit 1, naming --metrics-addr:\n%s", s, err, stdout.String())
	}
}
