package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v3"
	"github.com/peterbourgon/ff/v3/fftoml"
	"github.com/peterbourgon/ff/v3/ffyaml"
	"go.yaml.in/yaml/v3"

	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/redact"
)

// configFlag names the config file of every command.
const configFlag = "config"

// fallbackEnv are the flags whose default comes from a variable of the
// NATS tools' environment when their NEARDUP_ one is not set.
// loadSettings reads them, in their order of precedence; the flags are
// registered with noEnv, so -h does not print $NATS_URL (a password in
// it) as --nats's default.
func fallbackEnv() []struct{ flag, env string } {
	return []struct{ flag, env string }{{"nats", queue.EnvURL}, {"nats-creds", queue.EnvCreds}}
}

// noEnv is a getenv that finds nothing: the flags' environment is read by
// loadSettings.
func noEnv(string) string { return "" }

// ConfigCommand returns the command `prog config print`, which prints the
// settings that cmd would run with: every flag of cmd, its value and
// where the value came from.
func ConfigCommand(prog string, cmd Command) Command {
	return Command{
		Name:    "config",
		Usage:   prog + " config print [--config FILE] [flags]",
		Summary: "print the settings " + strings.TrimSpace(prog+" "+cmd.Name) + " would run with (flags > $" + EnvPrefix + "_* > --config FILE > defaults), and where each comes from",
		Setup:   cmd.Setup,
		prints:  strings.TrimSpace(prog + " " + cmd.Name),
	}
}

// settings are where the flags of a parsed flag set got their values:
// for each flag set, "flag --x", "env VAR" or "file PATH".
type settings struct {
	from map[string]string
	// file is the config file read, "" for none.
	file string
}

// loadSettings sets the flags of fs that the command line (already
// parsed into fs) did not set: from their environment variables
// (EnvPrefix, then fallbackEnv), then from the config file that
// --config names (YAML or TOML, by its extension). A key of the file
// that is not a flag of fs is an error.
func loadSettings(fs *flag.FlagSet) (settings, error) {
	s := settings{from: map[string]string{}}
	fs.Visit(func(f *flag.Flag) { s.from[f.Name] = "flag --" + f.Name })
	if err := ff.Parse(fs, []string{}, ff.WithEnvVarPrefix(EnvPrefix)); err != nil {
		return s, err
	}
	s.mark(fs, func(f *flag.Flag) string { return "env " + EnvVar(f.Name) })
	for _, fb := range fallbackEnv() {
		if v := os.Getenv(fb.env); v != "" && fs.Lookup(fb.flag) != nil && s.from[fb.flag] == "" {
			if err := fs.Set(fb.flag, v); err != nil {
				return s, fmt.Errorf("$%s: %w", fb.env, err)
			}
			s.from[fb.flag] = "env " + fb.env
		}
	}
	cf := fs.Lookup(configFlag)
	if cf == nil || cf.Value.String() == "" {
		return s, nil
	}
	s.file = cf.Value.String()
	parser, err := configParser(s.file)
	if err != nil {
		return s, err
	}
	strict := func(r io.Reader, set func(name, value string) error) error {
		return parser(r, func(name, value string) error {
			if name == configFlag || name == "version" || fs.Lookup(name) == nil {
				return &unknownKeyError{key: name, hint: closestFlag(fs, name)}
			}
			return set(name, value)
		})
	}
	if err := ff.Parse(fs, []string{}, ff.WithConfigFile(s.file), ff.WithConfigFileParser(strict)); err != nil {
		var uk *unknownKeyError
		if errors.As(err, &uk) {
			err = uk
		}
		return s, fmt.Errorf("--config %s: %w", s.file, err)
	}
	s.mark(fs, func(*flag.Flag) string { return "file " + s.file })
	return s, nil
}

// mark records, for each flag of fs set since the last mark, where from.
func (s settings) mark(fs *flag.FlagSet, from func(*flag.Flag) string) {
	fs.Visit(func(f *flag.Flag) {
		if s.from[f.Name] == "" {
			s.from[f.Name] = from(f)
		}
	})
}

// configParser returns the parser of a config file, by its extension.
func configParser(path string) (ff.ConfigFileParser, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		return ffyaml.Parser, nil
	case ".toml":
		return fftoml.Parser, nil
	}
	return nil, fmt.Errorf("--config %s: the file's extension says its format: .yaml, .yml or .toml", path)
}

// unknownKeyError is a key of a config file that names no flag.
type unknownKeyError struct{ key, hint string }

func (e *unknownKeyError) Error() string {
	msg := fmt.Sprintf("unknown key %q: not a flag of this command", e.key)
	if e.hint != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", e.hint)
	}
	return msg
}

// closestFlag returns the flag of fs whose name is within two edits of
// name, the closest one; "" if there is none.
func closestFlag(fs *flag.FlagSet, name string) string {
	best, bestD := "", 3
	fs.VisitAll(func(f *flag.Flag) {
		if d := editDistance(f.Name, name); d < bestD && f.Name != configFlag {
			best, bestD = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance of a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// printSettings writes the flags of fs as a config file, in the format of
// the config file read (YAML without one), one key a line, each with a
// comment saying where its value came from. Secrets are redacted: such a
// value says so, and the file read back would not carry it.
func printSettings(w io.Writer, name string, fs *flag.FlagSet, s settings) error {
	toml := s.file != "" && strings.EqualFold(filepath.Ext(s.file), ".toml")
	fmt.Fprintf(w, "# The settings of %s: flags > $%s_* > --config FILE > defaults.\n", name, EnvPrefix)
	if s.file != "" {
		fmt.Fprintf(w, "# config file: %s (from %s)\n", s.file, s.from[configFlag])
	}
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == configFlag || f.Name == "version" || err != nil {
			return
		}
		from := s.from[f.Name]
		if from == "" {
			from = "default"
		} else {
			from = "from " + from
		}
		v, redacted := redactValue(f)
		if redacted {
			from += ", redacted"
		}
		var text string
		if text, err = encodeValue(v, toml); err != nil {
			err = fmt.Errorf("--%s: %w", f.Name, err)
			return
		}
		_, err = fmt.Fprintf(w, "%s %s # %s\n", padRight(f.Name+keySep(toml), 22), padRight(text, 20), from)
	})
	return err
}

func keySep(toml bool) string {
	if toml {
		return " ="
	}
	return ":"
}

func padRight(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return s + strings.Repeat(" ", n-len(s))
}

// redactValue returns the value of f to print: the flag's typed value, with a
// secret replaced. A URL's password or token (--nats
// nats://user:pass@host) is a secret, and so is the value of a flag
// named for one (a word of its name is password, secret or token); a
// credentials file's path is not.
func redactValue(f *flag.Flag) (any, bool) {
	v := typedValue(f)
	for _, w := range strings.Split(f.Name, "-") {
		if (w == "password" || w == "secret" || w == "token") && f.Value.String() != "" {
			return "REDACTED", true
		}
	}
	switch v := v.(type) {
	case string:
		r := redact.URL(v)
		return r, r != v
	case []string:
		rs, redacted := make([]string, len(v)), false
		for i, e := range v {
			rs[i] = redact.URL(e)
			redacted = redacted || rs[i] != e
		}
		return rs, redacted
	}
	return v, false
}

// typedValue is f's value as the config file would hold it: a list for a
// repeatable flag, a bool, number or string otherwise.
func typedValue(f *flag.Flag) any {
	switch v := f.Value.(type) {
	case *listFlag:
		return []string(*v)
	case *stringList:
		return []string(*v)
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return f.Value.String()
	}
	switch v := g.Get().(type) {
	case bool, int, int64, uint, uint64, float64:
		return v
	case time.Duration:
		return v.String()
	}
	return f.Value.String()
}

// encodeValue writes v as a YAML or TOML value, lists in flow style.
func encodeValue(v any, toml bool) (string, error) {
	if list, ok := v.([]string); ok {
		parts := make([]string, len(list))
		for i, e := range list {
			p, err := encodeValue(e, toml)
			if err != nil {
				return "", err
			}
			parts[i] = p
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	}
	if !toml {
		b, err := yaml.Marshal(v)
		return strings.TrimSuffix(string(b), "\n"), err
	}
	switch v := v.(type) {
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	case string:
		b, err := json.Marshal(v) // a JSON string is a TOML basic string
		return string(b), err
	}
	return fmt.Sprint(v), nil
}
