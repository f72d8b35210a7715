package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/nettest"
)

// TestWaitingForNATS runs the worker and a coordinator job against a
// loopback port nothing listens on, with JSON logs: every stderr line is a
// JSON object, one says what the command waits for (the URL without its
// password), and the coordinator's stdout is one JSON summary of the
// failure.
func TestWaitingForNATS(t *testing.T) {
	addr := nettest.RefusedAddr(t)
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
			for _, rec := range jsonRecords(t, stderr.String()) {
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

// TestJSONLogs runs a real job on the sample with JSON logs: every stderr
// line is a JSON object with time, level and msg; progress comes as
// events, one "stage done" per stage the user knows (the cluster stage's
// steps are one), with the job-wide estimate. A usage error is one JSON
// record too.
func TestJSONLogs(t *testing.T) {
	sample := filepath.Join("..", "..", "testdata", "sample")
	dir := t.TempDir()
	jsonConfig, typoConfig := filepath.Join(dir, "json.yaml"), filepath.Join(dir, "typo.yaml")
	os.WriteFile(jsonConfig, []byte("log-format: json\n"), 0o644)
	os.WriteFile(typoConfig, []byte("log-format: json\nthreshhold: 0.7\nworkers: 2\nkeep: first\n"), 0o644)
	tests := []struct {
		name       string
		args       []string
		exit       int
		wantStages []string
	}{
		{name: "bad flag, JSON from the config file", args: []string{"--config", jsonConfig, "--no-such-flag", sample}, exit: 2},
		{name: "a typo in a config file that asks for JSON", args: []string{"--config", typoConfig, "--out", t.TempDir(), sample}, exit: 2},
		{name: "job", args: []string{sample, "--out", filepath.Join(t.TempDir(), "out"), "--workers", "2", "--log-format", "json"},
			wantStages: []string{"map", "reduce", "verify", "cluster"}},
		{name: "usage error", args: []string{"--log-format=json", "--out", t.TempDir(), "--no-such-flag", sample}, exit: 2},
		{name: "bad value after --log-format json", args: []string{"--log-format", "json", "--workers", "many", sample}, exit: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if exit := Main("coordinator", tt.args, Coordinator(), &stdout, &stderr); exit != tt.exit {
				t.Fatalf("exit %d, want %d; stderr:\n%s", exit, tt.exit, stderr.String())
			}
			var stages []string
			records := jsonRecords(t, stderr.String())
			for _, rec := range records {
				line := fmt.Sprint(rec)
				switch rec["msg"] {
				case "progress", "stage done":
					for _, k := range []string{"stage", "tasks_done", "tasks_total", "elapsed_s"} {
						if _, ok := rec[k]; !ok {
							t.Errorf("progress event without %q: %s", k, line)
						}
					}
					if f, ok := rec["fraction"].(float64); ok && (f <= 0 || f > 1) {
						t.Errorf("job fraction %v: %s", f, line)
					}
					if rec["msg"] == "stage done" {
						stages = append(stages, rec["stage"].(string))
						if _, ok := rec["eta_s"]; !ok {
							t.Errorf("stage done without the job's eta_s: %s", line)
						}
					}
				case "usage error":
					if len(records) != 1 || rec["level"] != "ERROR" {
						t.Errorf("usage error: %d lines, level %v, want one ERROR", len(records), rec["level"])
					}
				}
			}
			if tt.exit == 2 && !strings.Contains(stderr.String(), `"msg":"usage error"`) {
				t.Errorf("no usage error record:\n%s", stderr.String())
			}
			if !slices.Equal(stages, tt.wantStages) {
				t.Errorf("stages done %v, want %v", stages, tt.wantStages)
			}
		})
	}
}

// TestCatchPanic checks that with JSON logs a panic of the command's
// goroutine becomes one JSON error record with its stack, exit status 1,
// and that with text logs it goes on.
func TestCatchPanic(t *testing.T) {
	run := func(l logFlags, w *bytes.Buffer) (code int) {
		log, err := l.logger(w)
		if err != nil {
			t.Fatal(err)
		}
		defer l.catchPanic(log, &code)
		panic("boom")
	}
	var buf bytes.Buffer
	if code := run(logFlags{level: "info", format: "json"}, &buf); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil || rec["msg"] != "panic" || rec["panic"] != "boom" ||
		!strings.Contains(fmt.Sprint(rec["stack"]), "TestCatchPanic") {
		t.Errorf("record %v (%v), want one panic record with the stack:\n%s", rec, err, buf.String())
	}
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("with text logs the panic was %v, want it to go on", r)
		}
	}()
	run(logFlags{level: "info", format: "text"}, &buf)
}

// jsonRecords parses every line of stderr as a JSON log record with time,
// level and msg.
func jsonRecords(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a stderr line is not JSON: %v\n%q", err, line)
		}
		for _, k := range []string{"time", "level", "msg"} {
			if _, ok := rec[k]; !ok {
				t.Errorf("log line without %q: %s", k, line)
			}
		}
		out = append(out, rec)
	}
	return out
}

// TestJSONUsage checks where a usage error's format comes from: the first
// of the command line, the environment and the --config file that sets
// --log-format, read from each source whatever the error stopped.
func TestJSONUsage(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	jsonYAML := file("j.yaml", "threshhold: 0.7\nlog-format: json\n")
	textTOML := file("t.toml", "log-format = \"text\"\n")
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want bool
	}{
		{name: "nothing set", want: false},
		{name: "command line", args: []string{"--log-format", "json", "x"}, want: true},
		{name: "command line, =", args: []string{"-log-format=json"}, want: true},
		{name: "command line wins over the environment", args: []string{"--log-format=text"}, env: map[string]string{"NEARDUP_LOG_FORMAT": "json"}, want: false},
		{name: "environment", env: map[string]string{"NEARDUP_LOG_FORMAT": "json"}, want: true},
		{name: "environment wins over the file", args: []string{"--config", jsonYAML}, env: map[string]string{"NEARDUP_LOG_FORMAT": "text"}, want: false},
		{name: "the file, named on the command line", args: []string{"--config", jsonYAML, "--bogus"}, want: true},
		{name: "the file, named by the environment", env: map[string]string{"NEARDUP_CONFIG": jsonYAML}, want: true},
		{name: "a file that says text", args: []string{"--config=" + textTOML}, want: false},
		{name: "a file that cannot be read", args: []string{"--config", filepath.Join(dir, "none.yaml")}, want: false},
		{name: "after --", args: []string{"--", "--log-format", "json"}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			fs.String("log-format", "text", "")
			if got := jsonUsage(fs, tt.args, func(k string) string { return tt.env[k] }); got != tt.want {
				t.Errorf("jsonUsage = %v, want %v", got, tt.want)
			}
		})
	}
}
