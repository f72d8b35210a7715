package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// clearEnv unsets the environment variables a test of the settings could
// pick up from the machine it runs on.
func clearEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, EnvPrefix+"_") {
			t.Setenv(k, "")
		}
	}
	t.Setenv("NATS_URL", "")
	t.Setenv("NATS_CREDS", "")
}

// TestSettingsPrecedence sets flags of the job from defaults, a config
// file, the environment and the command line in every combination and
// checks which wins: flags > environment > file > defaults, for a
// number, a list and a bool, in YAML and TOML, and the NATS tools'
// $NATS_URL as an environment variable.
func TestSettingsPrecedence(t *testing.T) {
	type want struct{ value, from string }
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want map[string]want
	}{
		{"defaults", nil, nil, map[string]want{
			"threshold": {"0.8", ""}, "against": {"", ""}, "overwrite": {"false", ""}, "nats": {"", ""}}},
		{"file", []string{"--config", "testdata/config/week.yaml"}, nil, map[string]want{
			"threshold": {"0.7", "file testdata/config/week.yaml"},
			"against":   {"out/week-03,out/week-04", "file testdata/config/week.yaml"},
			"overwrite": {"true", "file testdata/config/week.yaml"},
			"nats":      {"nats://neardup:s3cret@nats:4222", "file testdata/config/week.yaml"}}},
		{"toml file", []string{"--config", "testdata/config/week.toml"}, nil, map[string]want{
			"threshold":         {"0.7", "file testdata/config/week.toml"},
			"against":           {"out/week-03,out/week-04", "file testdata/config/week.toml"},
			"disk-full-timeout": {"5m0s", "file testdata/config/week.toml"}}},
		{"env over file", []string{"--config", "testdata/config/week.yaml"},
			map[string]string{"NEARDUP_THRESHOLD": "0.6", "NEARDUP_AGAINST": "a,b", "NATS_URL": "nats://other:4222"}, map[string]want{
				"threshold": {"0.6", "env NEARDUP_THRESHOLD"},
				"against":   {"a,b", "env NEARDUP_AGAINST"},
				"overwrite": {"true", "file testdata/config/week.yaml"},
				"nats":      {"nats://other:4222", "env NATS_URL"}}},
		{"flag over env over file", []string{"--config", "testdata/config/week.yaml", "--threshold", "0.9", "--against", "c", "in.jsonl", "--overwrite=false"},
			map[string]string{"NEARDUP_THRESHOLD": "0.6", "NEARDUP_NATS": "nats://a:4222", "NATS_URL": "nats://b:4222"}, map[string]want{
				"threshold": {"0.9", "flag --threshold"},
				"against":   {"c", "flag --against"},
				"overwrite": {"false", "flag --overwrite"},
				"nats":      {"nats://a:4222", "env NEARDUP_NATS"}}},
		{"flag over default", []string{"--threshold", "0.9"}, map[string]string{"NEARDUP_OVERWRITE": "true"}, map[string]want{
			"threshold": {"0.9", "flag --threshold"}, "overwrite": {"true", "env NEARDUP_OVERWRITE"}, "against": {"", ""}}},
		{"config file from env", nil, map[string]string{"NEARDUP_CONFIG": "testdata/config/week.toml"}, map[string]want{
			"config": {"testdata/config/week.toml", "env NEARDUP_CONFIG"}, "threshold": {"0.7", "file testdata/config/week.toml"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			fs, _ := setup(Coordinator()[0])
			if _, err := parseInterleaved(fs, tt.args); err != nil {
				t.Fatal(err)
			}
			s, err := loadSettings(fs)
			if err != nil {
				t.Fatal(err)
			}
			for name, w := range tt.want {
				if got := fs.Lookup(name).Value.String(); got != w.value {
					t.Errorf("--%s = %q, want %q", name, got, w.value)
				}
				if got := s.from[name]; got != w.from {
					t.Errorf("--%s from %q, want %q", name, got, w.from)
				}
			}
		})
	}
}

// TestConfigErrors runs commands with config files that are not right:
// each is a usage error naming the file and what is wrong.
func TestConfigErrors(t *testing.T) {
	clearEnv(t)
	out := filepath.Join(t.TempDir(), "out")
	tests := []struct {
		cmds     []Command
		args     []string
		wantSays []string
	}{
		{Coordinator(), []string{"--config", "testdata/config/typo.yaml", "in.jsonl"},
			[]string{"--config testdata/config/typo.yaml", `unknown key "threshhold"`, `did you mean "threshold"?`}},
		{Coordinator(), []string{"config", "print", "--config", "testdata/config/typo.yaml"}, []string{`unknown key "threshhold"`}},
		{Coordinator(), []string{"--config", "testdata/config/nested.yaml", "in.jsonl"}, []string{`unknown key "config"`}},
		{Coordinator(), []string{"--config", "testdata/config/worker.yaml", "--out", out, "in.jsonl"}, []string{"worker.yaml", `unknown key "slots"`}},
		{Coordinator(), []string{"--config", "testdata/config/bad.yaml", "in.jsonl"}, []string{"--config testdata/config/bad.yaml", "YAML"}},
		{Coordinator(), []string{"--config", "testdata/config/bad.toml", "in.jsonl"}, []string{"--config testdata/config/bad.toml", "TOML"}},
		{Coordinator(), []string{"--config", "testdata/config/badvalue.yaml", "in.jsonl"}, []string{"badvalue.yaml", `"threshold"`, "parse error"}},
		{Coordinator(), []string{"--config", "testdata/config/missing.yaml", "in.jsonl"}, []string{"--config testdata/config/missing.yaml", "no such file"}},
		{Coordinator(), []string{"--config", "testdata/config/week.json", "in.jsonl"}, []string{"week.json", ".yaml, .yml or .toml"}},
		{Coordinator(), []string{"config", "show"}, []string{`the action is "print"`}},
		{Worker(), []string{"--config", "testdata/config/week.yaml"}, []string{"week.yaml", `unknown key`}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := Main("prog", tt.args, tt.cmds, &stdout, &stderr); code != 2 {
				t.Errorf("exit %d, want 2; stderr: %s", code, stderr.String())
			}
			if n := strings.Count(stderr.String(), "\n"); n != 1 {
				t.Errorf("stderr has %d lines, want 1: %s", n, stderr.String())
			}
			for _, w := range tt.wantSays {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr %q does not say %q", stderr.String(), w)
				}
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was created", out)
	}
}

// TestConfigPrint checks `config print` against golden files: the value
// and origin of every flag, the password of --nats redacted, in the
// config file's format; and that what it prints, read back as a config
// file, gives the same settings.
func TestConfigPrint(t *testing.T) {
	tests := []struct {
		name, golden string
		cmds         []Command
		args         []string
	}{
		{"yaml", "print-week.yaml", Coordinator(), []string{"config", "print", "--config", "testdata/config/week.yaml", "--workers", "2", "--threshold", "0.75"}},
		{"toml", "print-week.toml", Coordinator(), []string{"config", "print", "--config", "testdata/config/week.toml", "--workers", "2", "--threshold", "0.75"}},
		{"worker", "print-worker.yaml", Worker(), []string{"config", "print", "--config", "testdata/config/worker.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t)
			t.Setenv("NEARDUP_LOG_FORMAT", "json")
			var stdout, stderr bytes.Buffer
			if code := Main("prog", tt.args, tt.cmds, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			golden.Check(t, filepath.Join("testdata", "config", tt.golden), stdout.Bytes(), *update)
			if strings.Contains(stdout.String(), "s3cret") {
				t.Errorf("the password of --nats is printed")
			}
			if strings.Count(stdout.String(), "# default") < 10 {
				t.Errorf("few defaults said:\n%s", stdout.String())
			}
			// Read back (with the password in place), the printed
			// settings are the same.
			again := filepath.Join(t.TempDir(), "again"+filepath.Ext(tt.golden))
			if err := os.WriteFile(again, bytes.ReplaceAll(stdout.Bytes(), []byte("xxxxx"), []byte("s3cret")), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("NEARDUP_LOG_FORMAT", "")
			var stdout2 bytes.Buffer
			if code := Main("prog", []string{"config", "print", "--config", again}, tt.cmds, &stdout2, &stderr); code != 0 {
				t.Fatalf("reading the printed settings back: exit %d: %s", code, stderr.String())
			}
			if a, b := values(stdout.String()), values(stdout2.String()); a != b {
				t.Errorf("read back, the settings differ:\n%s\nwant\n%s", b, a)
			}
		})
	}
}

// values strips the comments of printed settings.
func values(printed string) string {
	var b strings.Builder
	for _, line := range strings.Split(printed, "\n") {
		if k, _, ok := strings.Cut(line, " #"); ok && !strings.HasPrefix(line, "#") {
			b.WriteString(strings.Join(strings.Fields(k), " ") + "\n")
		}
	}
	return b.String()
}

// TestDocConfig loads the ```yaml blocks of docs/usage.md as config
// files of the coordinator's job: each must set flags, and only flags.
func TestDocConfig(t *testing.T) {
	clearEnv(t)
	b, err := os.ReadFile("../../docs/usage.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, part := range strings.Split(string(b), "```yaml\n")[1:] {
		block, _, _ := strings.Cut(part, "```")
		blocks = append(blocks, block)
	}
	if len(blocks) == 0 {
		t.Fatal("docs/usage.md has no ```yaml block")
	}
	for i, block := range blocks {
		file := filepath.Join(t.TempDir(), "doc.yaml")
		if err := os.WriteFile(file, []byte(block), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		if code := Main("coordinator", []string{"config", "print", "--config", file}, Coordinator(), &stdout, &stderr); code != 0 {
			t.Errorf("block %d: exit %d: %s", i+1, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), "# from file "+file) {
			t.Errorf("block %d sets no flag:\n%s", i+1, stdout.String())
		}
	}
}

// TestConfigValues reads each config file of testdata/config/values as
// the job's --config and checks what its header says: "# want
// NAME=VALUE" lines the flags' values after reading it, "# error TEXT" a
// usage error naming the file that says TEXT. The files hold issue 31's
// cases (YAML 1.1's octals, booleans and hex given to text flags, lists
// given to single-value flags, the same in TOML) and more.
func TestConfigValues(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "config", "values", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			clearEnv(t)
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			want, wantErr := map[string]string{}, ""
			for _, line := range strings.Split(string(b), "\n") {
				if kv, ok := strings.CutPrefix(line, "# want "); ok {
					k, v, _ := strings.Cut(kv, "=")
					want[k] = v
				} else if e, ok := strings.CutPrefix(line, "# error "); ok {
					wantErr = e
				}
			}
			if (len(want) == 0) == (wantErr == "") {
				t.Fatalf("%s says neither a value nor an error it wants (or both)", file)
			}
			fs, _ := setup(Coordinator()[0])
			if _, err := parseInterleaved(fs, []string{"--config", file}); err != nil {
				t.Fatal(err)
			}
			_, err = loadSettings(fs)
			if wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), wantErr) || !strings.Contains(err.Error(), "--config "+file+": ") {
					t.Fatalf("error %v, want one naming %s and saying %q", err, file, wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for name, v := range want {
				if got := fs.Lookup(name).Value.String(); got != v {
					t.Errorf("--%s = %q, want %q", name, got, v)
				}
			}
		})
	}
}

// TestConfigFileWins checks that a value the command line or the
// environment set is not replaced by the file's, even when the file
// gives a list for a repeatable flag, and that the file's values are
// still checked.
func TestConfigFileWins(t *testing.T) {
	clearEnv(t)
	t.Setenv("NEARDUP_OUT", "from-env")
	fs, _ := setup(Coordinator()[0])
	if _, err := parseInterleaved(fs, []string{"--config", "testdata/config/values/typed.toml", "--against", "c", "--workers", "2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := loadSettings(fs); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"against": "c", "workers": "2", "out": "from-env", "threshold": "0.7"} {
		if got := fs.Lookup(name).Value.String(); got != want {
			t.Errorf("--%s = %q, want %q", name, got, want)
		}
	}
	fs, _ = setup(Coordinator()[0])
	if _, err := parseInterleaved(fs, []string{"--config", "testdata/config/values/out-list.yaml", "--out", "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := loadSettings(fs); err == nil || !strings.Contains(err.Error(), "a list for a flag") {
		t.Errorf("a list for --out, which the command line set, is not refused: %v", err)
	}
}

// TestConfigTooLarge gives --config a sparse file of 200 MiB: the error
// names the file and the limit, and comes after reading at most the
// limit (issue 31: a 182 MB file took 82 s and 1.6 GB before anything
// happened).
func TestConfigTooLarge(t *testing.T) {
	clearEnv(t)
	file := filepath.Join(t.TempDir(), "big.yaml")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(200 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var stdout, stderr bytes.Buffer
	if code := Main("prog", []string{"--config", file, "in.jsonl"}, Coordinator(), &stdout, &stderr); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	for _, w := range []string{"--config " + file, "1 MiB"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr %q does not say %q", stderr.String(), w)
		}
	}
}
