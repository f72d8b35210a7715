package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/buildinfo"
)

// TestExitCodes runs the commands with arguments that stop before any
// work and checks their exit status and what they say: a usage error
// (exit 2) in one line on stderr, without creating the output.
func TestExitCodes(t *testing.T) {
	t.Setenv("NATS_URL", "") // the default of --nats
	t.Setenv("NATS_CREDS", "")
	out := filepath.Join(t.TempDir(), "out")
	sample, err := filepath.Abs("../../testdata/sample/sample.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	notEmpty := t.TempDir()
	if err := os.WriteFile(filepath.Join(notEmpty, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		prog     string
		cmds     []Command
		args     []string
		want     int
		wantSays string
	}{
		{"coordinator", Coordinator(), []string{"in.jsonl"}, 2, "--out is required"},
		{"coordinator", Coordinator(), []string{"--out", out}, 2, "no INPUT given"},
		{"coordinator", Coordinator(), []string{"--no-such-flag"}, 2, "flag provided but not defined"},
		{"coordinator", Coordinator(), []string{"--threshold", "x"}, 2, "invalid value"},
		{"coordinator", Coordinator(), []string{"--out", out, "in.jsonl", "--threshold", "2"}, 2, "--threshold must be in (0, 1], not 2"},
		{"coordinator", Coordinator(), []string{"--out", out, "--method", "foo", "in.jsonl"}, 2, "--method must be minhash or simhash"},
		{"coordinator", Coordinator(), []string{"--out", out, "--partitions", "-1", "in.jsonl"}, 2, "--partitions must be in 1..99999"},
		{"coordinator", Coordinator(), []string{"--out", out, "--perms", "0", "--verify", "maybe", "in.jsonl"}, 2, "--perms must be in 1..4096, not 0; --verify must be exact or estimate"},
		{"coordinator", Coordinator(), []string{"--out", out, "--log-level", "loud", "in.jsonl"}, 2, "--log-level"},
		{"coordinator", Coordinator(), []string{"--out", out, "--log-format", "xml", "in.jsonl"}, 2, "--log-format must be text or json"},
		{"coordinator", Coordinator(), []string{"--out", out, "--workers", "0", "in.jsonl"}, 2, "no workers"},
		{"coordinator", Coordinator(), []string{"--out", out, "--job", "a b", "in.jsonl"}, 2, "job name"},
		{"coordinator", Coordinator(), []string{"--out", out, "--ack-wait", "0s", "in.jsonl"}, 2, "--ack-wait 0s: must be positive"},
		{"coordinator", Coordinator(), []string{"--out", out, "--max-deliver", "0", "in.jsonl"}, 2, "--max-deliver 0"},
		{"coordinator", Coordinator(), []string{"--out", out, "--chunk-bytes", "10", "in.jsonl"}, 2, "--chunk-bytes must be 0 (automatic) or at least 1024"},
		{"coordinator", Coordinator(), []string{"--out", out, "--metrics-addr", "9090", "in.jsonl"}, 2, "--metrics-addr \"9090\": want host:port"},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--metrics-addr", "localhost"}, 2, "--metrics-addr"},
		{"coordinator", Coordinator(), []string{"--out", out, "--metrics-push", "pushgateway:9091", "in.jsonl"}, 2, "--metrics-push pushgateway:9091: want the http:// or https:// URL of a Pushgateway"},
		{"coordinator", Coordinator(), []string{"--out", out, "--metrics-file", filepath.Join(out, "no", "dir.prom"), "in.jsonl"}, 2, "--metrics-file"},
		{"coordinator", Coordinator(), []string{"--out", out, "--metrics-file", filepath.Join(t.TempDir(), "neardup.txt"), "in.jsonl"}, 2, "*.prom"},
		{"coordinator", Coordinator(), []string{"--out", out, "--metrics-push", "http://pgw:9091", "--metrics-job", "", "in.jsonl"}, 2, "--metrics-job is empty"},
		{"coordinator", Coordinator(), []string{"-h"}, 0, "flags of coordinator"},
		{"coordinator", Coordinator(), []string{"params", "--threshold", "0.8"}, 0, ""},
		{"coordinator", Coordinator(), []string{"params", "--threshold", "1.5"}, 2, "--threshold must be in (0, 1]"},
		{"coordinator", Coordinator(), []string{"params", "--method", "simhash", "--svg", "x.svg"}, 2, "--svg draws the MinHash S-curve"},
		{"coordinator", Coordinator(), []string{"params", "--svg", filepath.Join(t.TempDir(), "x.svg"), "--also", "3"}, 2, "--also"},
		{"coordinator", Coordinator(), []string{"params", "--also", "3"}, 0, ""}, // --also is read only with --svg
		{"coordinator", Coordinator(), []string{"compare", "-h"}, 0, "flags of coordinator compare"},
		{"coordinator", Coordinator(), []string{"query", "docs.jsonl"}, 2, "--index is required"},
		{"coordinator", Coordinator(), []string{"query", "--index", out}, 2, "want one FILE (or - for standard input), not 0 arguments"},
		{"coordinator", Coordinator(), []string{"query", "--index", out, "a", "b"}, 2, "not 2 arguments"},
		{"coordinator", Coordinator(), []string{"query", "--index", out, "--threshold", "2", "-"}, 2, "--threshold must be in (0, 1]"},
		{"coordinator", Coordinator(), []string{"query", "--index", out, "--format", "xml", "-"}, 2, "--format must be auto, jsonl or text"},
		{"coordinator", Coordinator(), []string{"query", "--index", out, "--batch", "0", "-"}, 2, "--batch 0"},
		{"coordinator", Coordinator(), []string{"query", "--index", out, "--serve", "-"}, 2, "--serve reads its requests from standard input: no FILE, not 1 arguments"},
		{"coordinator", Coordinator(), []string{"rows", "pairs"}, 2, "want DATASET OUT (DATASET one of clusters, duplicates, pairs, paragraphs, rejects), not 1 arguments"},
		{"coordinator", Coordinator(), []string{"rows", "exact", out}, 2, `dataset "exact": want one of clusters, duplicates, pairs, paragraphs, rejects`},
		{"coordinator", Coordinator(), []string{"rows", "pairs", out, "more"}, 2, "not 3 arguments"},
		{"coordinator", Coordinator(), []string{"rows", "pairs", out}, 1, "coordinator rows: neardup: the output is not a complete job: " + out + ": it does not exist"},
		{"coordinator", Coordinator(), []string{"query", "--index", out, "--log-format", "xml", "-"}, 2, "--log-format"},
		{"coordinator", Coordinator(), []string{"query", "--index", out, "docs.jsonl"}, 1, "no such file or directory"},
		{"worker", Worker(), nil, 2, "--nats (or $NEARDUP_NATS or $NATS_URL) is required"},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "extra"}, 2, "no arguments"},
		{"worker", Worker(), []string{"--ack-wait", "soon"}, 2, "invalid value"},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--slots", "0"}, 2, "--slots 0"},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--log-format", "yaml"}, 2, "--log-format"},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--connect-timeout", "soon"}, 2, "invalid value"},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--connect-timeout", "-1s"}, 2, "--connect-timeout"},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--nats-tls-ca", "/nonexistent/ca.pem"}, 2, "--nats-tls-ca"},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--nats-tls-cert", "cli_test.go"}, 2, "go together"},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--nats-tls-cert", "cli_test.go", "--nats-tls-key", "cli.go"}, 2, "--nats-tls-key cli.go"},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--nats-creds", "/nonexistent/x.creds"}, 2, "--nats-creds"},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--data-root", "/nonexistent/data"}, 2, "--data-root"},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--data-root", ""}, 2, "invalid value"},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--connect-timeout", "300ms", "--data-root", "."}, 1, ""},
		{"coordinator", Coordinator(), []string{"--out", out, "--nats-tls-ca", "/nonexistent/ca.pem", "in.jsonl"}, 2, "--nats-tls-ca"},
		{"coordinator", Coordinator(), []string{"--out", out, "--connect-timeout", "x", "in.jsonl"}, 2, "invalid value"},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--replicas", "0"}, 2, "--replicas 0"},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1", "--replicas", "6"}, 2, "--replicas 6"},
		{"worker", Worker(), []string{"--nats", "nats://127.0.0.1:1,nats://127.0.0.1:2", "--replicas", "3", "--connect-timeout", "300ms", "--data-root", "."}, 1, ""},
		{"coordinator", Coordinator(), []string{"--out", out, "--replicas", "-1", "--nats", "nats://127.0.0.1:1", "in.jsonl"}, 2, "--replicas -1"},
		{"coordinator", Coordinator(), []string{"write-kept", "--dir", out}, 2, "--job is required"},
		{"coordinator", Coordinator(), []string{"write-kept", "--job", "j"}, 2, "--dir is required"},
		{"coordinator", Coordinator(), []string{"write-kept", "--job", "j", "--dir", out}, 2, "name the job's inputs as you gave them to the coordinator (write-kept --job OUT --dir DIR INPUT...), or the directories they lie under (--data-root DIR)"},
		{"coordinator", Coordinator(), []string{"write-kept", "--job", "j", "--dir", out, "/nonexistent/in.jsonl"}, 2, "INPUT: data root /nonexistent/in.jsonl: "},
		{"coordinator", Coordinator(), []string{"write-kept", "--job", "j", "--dir", out, "/nonexistent/*.jsonl"}, 2, `INPUT pattern "/nonexistent/*.jsonl" matches no file`},
		{"coordinator", Coordinator(), []string{"write-kept", "--job", "j", "--dir", out, "--data-root", "/nonexistent/data"}, 2, "--data-root: data root /nonexistent/data: "},
		{"coordinator", Coordinator(), []string{"write-kept", "--job", "j", "--dir", out, "--format", "csv", "."}, 2, `--format: the corpus's format must be auto, jsonl, parquet or warc, not "csv"`},
		{"coordinator", Coordinator(), []string{"--out", out, "--write-kept", filepath.Join(t.TempDir(), "k"), "--kept-format", "csv", "in.jsonl"}, 2, `--kept-format: the corpus's format must be auto, jsonl, parquet or warc, not "csv"`},
		{"coordinator", Coordinator(), []string{"--out", out, "--kept-format", "parquet", "in.jsonl"}, 2, "--kept-format goes with --write-kept"},
		{"coordinator", Coordinator(), []string{"--out", out, "--paragraph-unit", "paragraph", "in.jsonl"}, 2, "--paragraph-unit goes with --paragraphs"},
		{"coordinator", Coordinator(), []string{"--out", out, "--paragraphs", "--paragraph-unit", "sentence", "in.jsonl"}, 2, `--paragraph-unit must be line or paragraph, not "sentence"`},
		{"coordinator", Coordinator(), []string{"--out", out, "--paragraphs", "--strip-paragraphs", "min-count=3", "in.jsonl"}, 2, "--strip-paragraphs goes with --write-kept"},
		{"coordinator", Coordinator(), []string{"--out", out, "--write-kept", filepath.Join(t.TempDir(), "k"), "--strip-paragraphs", "min-count=3", "--kept-format", "jsonl", "in.jsonl"}, 2, "--strip-paragraphs needs --paragraphs"},
		{"coordinator", Coordinator(), []string{"--out", out, "--paragraphs", "--write-kept", filepath.Join(t.TempDir(), "k"), "--strip-paragraphs", "min-count=3", "in.jsonl"}, 2, "--strip-paragraphs writes each document's id, url and stripped text: it needs --format jsonl or parquet, not auto"},
		{"coordinator", Coordinator(), []string{"--out", out, "--min-kept-chars", "5", "in.jsonl"}, 2, "--min-kept-chars goes with --strip-paragraphs"},
		{"coordinator", Coordinator(), []string{"write-kept", "--job", "j", "--dir", out, "--strip-paragraphs", "min-count=1", "."}, 2, "min-count must be at least 2"},
		{"coordinator", Coordinator(), []string{"write-kept", "--job", "j", "--dir", out, "--strip-paragraphs", "min-count=3", "."}, 2, "needs --format jsonl or parquet, not auto"},
		{"coordinator", Coordinator(), []string{"--out", out, "--write-kept", "s4://b/k", "in.jsonl"}, 2, "--write-kept"},
		// Checked once the inputs are known, before the output is made.
		{"coordinator", Coordinator(), []string{"--out", filepath.Join(t.TempDir(), "o"), "--quiet", "--write-kept", filepath.Join(t.TempDir(), "k"), "--kept-format", "warc", sample},
			1, "sample.jsonl.gz (jsonl) cannot be written as warc"},
		// A kept corpus's directory that holds other files: exit 3, as an
		// output that holds a complete job.
		{"coordinator", Coordinator(), []string{"--out", filepath.Join(t.TempDir(), "o"), "--quiet", "--write-kept", notEmpty, sample}, 3, "the output directory is not empty"},
		{"coordinator", Coordinator(), []string{"write-kept", "--job", "j", "--dir", out, "--shard-docs", "-1", "."}, 2, "--shard-docs must be 0 or more"},
		{"coordinator", Coordinator(), []string{"write-kept", "--job", t.TempDir(), "--dir", filepath.Join(t.TempDir(), "kept"), "."}, 1, "the job is not finished"},
		{"coordinator", Coordinator(), []string{"write-kept", "--job", filepath.Join(t.TempDir(), "nojob"), "--dir", filepath.Join(t.TempDir(), "kept"), "--data-root", "."}, 1, "no such file or directory"},
		// An input that is named but is not there fails the job at its plan
		// (exit 1, as docs/usage.md says), unlike no input at all (2).
		{"coordinator", Coordinator(), []string{"--out", filepath.Join(t.TempDir(), "o"), "--quiet", filepath.Join(t.TempDir(), "absent.jsonl")}, 1, "no such file or directory"},
		// The embedded server is one server: it cannot keep 3 replicas.
		{"coordinator", Coordinator(), []string{"--out", out, "--replicas", "3", "in.jsonl"}, 2, "needs --nats naming a JetStream cluster"},
	}
	for _, tt := range tests {
		t.Run(tt.prog+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := Main(tt.prog, tt.args, tt.cmds, &stdout, &stderr); got != tt.want {
				t.Errorf("exit %d, want %d; stderr:\n%s", got, tt.want, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantSays) {
				t.Errorf("stderr does not say %q:\n%s", tt.wantSays, stderr.String())
			}
			if tt.want == 2 {
				if n := strings.Count(stderr.String(), "\n"); n != 1 || !strings.HasPrefix(stderr.String(), tt.prog) {
					t.Errorf("a usage error in %d lines, want one starting with %q:\n%s", n, tt.prog, stderr.String())
				}
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("a usage error touched the output %s: %v", out, err)
				}
			}
		})
	}
}

// TestParse runs Main on a command that records its flags and arguments:
// flags before, between and after the arguments, "--", values from
// environment variables, and the command line winning over them.
func TestParse(t *testing.T) {
	type got struct {
		threshold float64
		chunk     int64
		strict    bool
		args      []string
	}
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		want     got
		wantExit int
	}{
		{"flags first", nil, []string{"--threshold", "0.5", "a", "b"}, got{0.5, 100, false, []string{"a", "b"}}, 0},
		{"flags after", nil, []string{"a", "b", "--threshold", "0.5", "--strict"}, got{0.5, 100, true, []string{"a", "b"}}, 0},
		{"flags between", nil, []string{"a", "-chunk-bytes=7", "b", "--strict", "c"}, got{0.8, 7, true, []string{"a", "b", "c"}}, 0},
		{"double dash", nil, []string{"a", "--", "--strict", "-x"}, got{0.8, 100, false, []string{"a", "--strict", "-x"}}, 0},
		{"env", map[string]string{"NEARDUP_THRESHOLD": "0.6", "NEARDUP_CHUNK_BYTES": "9", "NEARDUP_STRICT": "true"}, []string{"a"},
			got{0.6, 9, true, []string{"a"}}, 0},
		{"flag beats env", map[string]string{"NEARDUP_THRESHOLD": "0.6", "NEARDUP_CHUNK_BYTES": "9"}, []string{"a", "--threshold", "0.7"},
			got{0.7, 9, false, []string{"a"}}, 0},
		{"unprefixed env ignored", map[string]string{"THRESHOLD": "0.6", "CHUNK_BYTES": "9"}, []string{"a"}, got{0.8, 100, false, []string{"a"}}, 0},
		{"bad env value", map[string]string{"NEARDUP_CHUNK_BYTES": "lots"}, []string{"a"}, got{}, 2},
		{"bad flag after args", nil, []string{"a", "--chunk-bytes", "lots"}, got{}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"NEARDUP_THRESHOLD", "NEARDUP_CHUNK_BYTES", "NEARDUP_STRICT", "THRESHOLD", "CHUNK_BYTES"} {
				t.Setenv(k, tt.env[k])
			}
			var g got
			cmd := Command{Usage: "test [flags] ARG...", Setup: func(fs *flag.FlagSet) Prepare {
				fs.Float64Var(&g.threshold, "threshold", 0.8, "")
				fs.Int64Var(&g.chunk, "chunk-bytes", 100, "")
				fs.BoolVar(&g.strict, "strict", false, "")
				return func(args []string, _ Streams) (Run, error) {
					g.args = args
					return func(context.Context) int { return 0 }, nil
				}
			}}
			var stdout, stderr bytes.Buffer
			if exit := Main("test", tt.args, []Command{cmd}, &stdout, &stderr); exit != tt.wantExit {
				t.Fatalf("exit %d, want %d; stderr:\n%s", exit, tt.wantExit, stderr.String())
			}
			if tt.wantExit == 0 && !reflect.DeepEqual(g, tt.want) {
				t.Errorf("parsed %+v, want %+v", g, tt.want)
			}
		})
	}
}

// TestHelpNamesEnv checks that -h names every flag's environment variable
// and that each is the one Main reads, and does not print the value of
// $NATS_URL, which may hold a password.
func TestHelpNamesEnv(t *testing.T) {
	t.Setenv("NATS_URL", "nats://worker:hunter2@127.0.0.1:4222")
	for _, tt := range []struct {
		prog string
		cmds []Command
	}{{"coordinator", Coordinator()}, {"worker", Worker()}} {
		var stdout, stderr bytes.Buffer
		if exit := Main(tt.prog, []string{"-h"}, tt.cmds, &stdout, &stderr); exit != 0 {
			t.Fatalf("%s -h: exit %d", tt.prog, exit)
		}
		if strings.Contains(stderr.String(), "hunter2") {
			t.Errorf("%s -h prints $NATS_URL's password", tt.prog)
		}
		fs, _ := setup(tt.cmds[0])
		fs.VisitAll(func(f *flag.Flag) {
			if !strings.Contains(stderr.String(), "[$"+EnvVar(f.Name)+"]") {
				t.Errorf("%s -h does not name $%s", tt.prog, EnvVar(f.Name))
			}
		})
		for _, v := range []string{"NEARDUP_CHUNK_BYTES", "NEARDUP_THRESHOLD", "NEARDUP_LOG_FORMAT"} {
			if tt.prog == "coordinator" && !strings.Contains(stderr.String(), "[$"+v+"]") {
				t.Errorf("coordinator -h does not name $%s", v)
			}
		}
	}
}

// TestVersion checks --version on every command: the build's line on
// stdout, exit 0, even with other flags.
func TestVersion(t *testing.T) {
	want := buildinfo.Read().String() + "\n"
	for _, tt := range []struct {
		prog string
		cmds []Command
		args []string
	}{
		{"coordinator", Coordinator(), []string{"--version"}},
		{"coordinator", Coordinator(), []string{"params", "--version"}},
		{"coordinator", Coordinator(), []string{"in.jsonl", "--version"}},
		{"worker", Worker(), []string{"-version"}},
	} {
		var stdout, stderr bytes.Buffer
		if exit := Main(tt.prog, tt.args, tt.cmds, &stdout, &stderr); exit != 0 || stdout.String() != want {
			t.Errorf("%s %q: exit %d, stdout %q, want 0, %q; stderr:\n%s", tt.prog, tt.args, exit, stdout.String(), want, stderr.String())
		}
	}
	if !strings.Contains(want, runtime.Version()) {
		t.Errorf("version %q does not name Go %s", want, runtime.Version())
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
		fs, _ := setup(cmd)
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

// TestOtherEnv checks the environment variables that are not a flag's own:
// NATS_URL still gives --nats its default (below NEARDUP_NATS and the
// flag), and a bad NEARDUP_FAULTS is a usage error.
func TestOtherEnv(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		wantSays string
	}{
		{"no server", nil, []string{"--slots", "0"}, "--nats (or $NEARDUP_NATS or $NATS_URL) is required"},
		{"NATS_URL", map[string]string{"NATS_URL": "nats://127.0.0.1:1"}, []string{"--slots", "0"}, "--slots 0"},
		{"NEARDUP_NATS", map[string]string{"NEARDUP_NATS": "nats://127.0.0.1:1"}, []string{"--slots", "0"}, "--slots 0"},
		{"NEARDUP_FAULTS", map[string]string{"NATS_URL": "nats://127.0.0.1:1", "NEARDUP_FAULTS": "explode@map"}, []string{"--data-root", "."}, "$NEARDUP_FAULTS: faults: rule"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"NATS_URL", "NEARDUP_NATS", "NEARDUP_FAULTS"} {
				t.Setenv(k, tt.env[k])
			}
			var stdout, stderr bytes.Buffer
			if exit := Main("worker", tt.args, Worker(), &stdout, &stderr); exit != 2 || !strings.Contains(stderr.String(), tt.wantSays) {
				t.Errorf("exit %d, want 2 saying %q; stderr:\n%s", exit, tt.wantSays, stderr.String())
			}
		})
	}
}

// TestKeptNotEmptySummary checks the summary of a job whose kept corpus's
// directory holds other files: exit 3, as an output that holds a complete
// job, but a status of its own.
func TestKeptNotEmptySummary(t *testing.T) {
	t.Setenv("NATS_URL", "")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"--out", filepath.Join(t.TempDir(), "o"), "--quiet", "--write-kept", dir, "../../testdata/sample/sample.jsonl.gz"}
	if code := Main("coordinator", args, Coordinator(), &stdout, &stderr); code != 3 {
		t.Fatalf("exit %d, want 3:\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), `"status":"kept_not_empty","exit_code":3`) {
		t.Errorf("summary %s", stdout.String())
	}
}
