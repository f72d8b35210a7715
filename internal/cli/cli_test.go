package cli

import (
	"bytes"
	"flag"
	"strings"
	"testing"
)

// TestExitCodes runs the commands with arguments that stop before any
// work and checks their exit status and what they say.
func TestExitCodes(t *testing.T) {
	t.Setenv("NATS_URL", "") // the default of --nats
	t.Setenv("NATS_CREDS", "")
	tests := []struct {
		prog     string
		cmds     []Command
		args     []string
		want     int
		wantSays string
	}{
		{"coordinator", Coordinator(), []string{"in.jsonl"}, 2, "usage:"},
		{"coordinator", Coordinator(), []string{"--out", "x"}, 2, "usage:"},
		{"coordinator", Coordinator(), []string{"--no-such-flag"}, 2, "flag provided but not defined"},
		{"coordinator", Coordinator(), []string{"--threshold", "x"}, 2, "invalid value"},
		{"coordinator", Coordinator(), []string{"-h"}, 0, "flags of coordinator:"},
		{"coordinator", Coordinator(), []string{"params", "--threshold", "0.8"}, 0, ""},
		{"coordinator", Coordinator(), []string{"params", "--threshold", "1.5"}, 2, ""},
		{"coordinator", Coordinator(), []string{"params", "--method", "simhash", "--svg", "x.svg"}, 2, ""},
		{"coordinator", Coordinator(), []string{"params", "--also", "3"}, 0, ""}, // --also is read only with --svg
		{"coordinator", Coordinator(), []string{"compare", "-h"}, 0, "flags of coordinator compare:"},
		{"worker", Worker(), nil, 2, "usage:"},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "extra"}, 2, "usage:"},
		{"worker", Worker(), []string{"--ack-wait", "soon"}, 2, "invalid value"},
		// A run function reports its usage errors on os.Stderr, not here: only
		// the exit status is checked for those.
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--connect-timeout", "soon"}, 2, "invalid value"},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--connect-timeout", "-1s"}, 2, ""},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--nats-tls-ca", "/nonexistent/ca.pem"}, 2, ""},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--nats-tls-cert", "cli_test.go"}, 2, ""},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--nats-creds", "/nonexistent/x.creds"}, 2, ""},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--data-root", "/nonexistent/data"}, 2, ""},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--data-root", ""}, 2, "invalid value"},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--connect-timeout", "300ms", "--data-root", "."}, 1, ""},
		{"coordinator", Coordinator(), []string{"--out", "x", "--nats-tls-ca", "/nonexistent/ca.pem", "in.jsonl"}, 2, ""},
		{"coordinator", Coordinator(), []string{"--out", "x", "--connect-timeout", "x", "in.jsonl"}, 2, "invalid value"},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--replicas", "0"}, 2, ""},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--replicas", "6"}, 2, ""},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1,nats://127.0.0.1:2", "--replicas", "3", "--connect-timeout", "300ms", "--data-root", "."}, 1, ""},
		{"coordinator", Coordinator(), []string{"--out", "x", "--replicas", "-1", "--nats", "nats://127.0.0.1:1", "in.jsonl"}, 2, ""},
		// The embedded server is one server: it cannot keep 3 replicas.
		{"coordinator", Coordinator(), []string{"--out", "x", "--replicas", "3", "in.jsonl"}, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.prog+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			var stderr bytes.Buffer
			if got := Main(tt.prog, tt.args, tt.cmds, &stderr); got != tt.want {
				t.Errorf("exit %d, want %d; stderr:\n%s", got, tt.want, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantSays) {
				t.Errorf("stderr does not say %q:\n%s", tt.wantSays, stderr.String())
			}
		})
	}
}

// TestCheckArgs parses command lines without running them.
func TestCheckArgs(t *testing.T) {
	tests := []struct {
		cmds    []Command
		args    []string
		wantErr string
	}{
		{Coordinator(), []string{"--nats", "nats://nats:4222", "--out", "s3://b/out?region=x", "/data/in"}, ""},
		{Coordinator(), []string{"params", "--threshold", "0.7"}, ""},
		{Coordinator(), []string{"params", "--out", "x"}, "not defined: -out"},
		{Coordinator(), []string{"--output", "/data/out", "/data/in"}, "not defined: -output"},
		{Coordinator(), []string{"--threshold", "high"}, "invalid value"},
		{Worker(), []string{"--nats", "nats://nats:4222", "--slots", "2"}, ""},
		{Worker(), []string{"--nats", "nats://nats:4222", "--threads", "2"}, "not defined: -threads"},
	}
	for _, tt := range tests {
		err := CheckArgs(tt.cmds, tt.args)
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("CheckArgs(%q) = %v, want %q", tt.args, err, tt.wantErr)
		}
	}
}

// TestFlagsShared checks that a job parameter and a queue setting are
// registered once, with the same name and default, for the coordinator's
// job and compare commands and, for the queue, the worker.
func TestFlagsShared(t *testing.T) {
	names := func(cmd Command) map[string]string {
		var stderr bytes.Buffer
		fs := newFlagSet(cmd, &stderr)
		cmd.Setup(fs)
		out := map[string]string{}
		fs.VisitAll(func(f *flag.Flag) { out[f.Name] = f.DefValue })
		return out
	}
	job, compare, worker := names(Coordinator()[0]), names(Coordinator()[1]), names(Worker()[0])
	for _, f := range []string{"threshold", "perms", "max-bucket", "max-cluster-pairs", "sketch", "ack-wait", "max-deliver", "replicas"} {
		if job[f] == "" || job[f] != compare[f] {
			t.Errorf("--%s: job default %q, compare default %q", f, job[f], compare[f])
		}
	}
	for _, f := range []string{"ack-wait", "max-deliver", "replicas", "nats", "nats-creds", "nats-nkey", "nats-tls-ca", "nats-tls-cert", "nats-tls-key", "connect-timeout"} {
		if _, ok := worker[f]; !ok {
			t.Errorf("worker has no --%s", f)
		}
		if worker[f] != job[f] {
			t.Errorf("--%s: worker default %q, coordinator %q", f, worker[f], job[f])
		}
	}
}
