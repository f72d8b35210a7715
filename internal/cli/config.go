package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v3"
	"go.yaml.in/yaml/v3"

	"github.com/neardup/neardup/internal/configfile"
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
	if err := s.readFile(fs); err != nil {
		return s, fmt.Errorf("--config %s: %w", s.file, err)
	}
	s.mark(fs, func(*flag.Flag) string { return "file " + s.file })
	return s, nil
}

// readFile sets the flags of fs that neither the command line nor the
// environment set from the config file s.file. Every key must name a
// flag; a list is for a repeatable flag only; a value goes to the flag's
// Set as the file wrote it (see package configfile), except that a text
// flag refuses a TOML value that is not a string (its text would not be
// the file's) and an integer flag a YAML number with a leading zero
// (012: octal to YAML 1.1 and Go, decimal to YAML 1.2).
func (s settings) readFile(fs *flag.FlagSet) error {
	entries, err := configfile.Read(s.file)
	if err != nil {
		return err
	}
	for _, e := range entries {
		f := fs.Lookup(e.Key)
		if e.Key == configFlag || e.Key == "version" || f == nil {
			return &unknownKeyError{key: e.Key, line: e.Line, hint: closestFlag(fs, e.Key)}
		}
		kind := kindOf(f)
		if e.List && kind != kindList {
			return &configfile.Error{Line: e.Line, Key: e.Key, Msg: "a list for a flag that takes one value"}
		}
		for _, v := range e.Values {
			if err := checkValue(kind, v); err != nil {
				return &configfile.Error{Line: v.Line, Key: e.Key, Msg: err.Error()}
			}
		}
		if s.from[e.Key] != "" {
			continue // the command line or the environment wins
		}
		for _, v := range e.Values {
			if err := fs.Set(e.Key, v.Text); err != nil {
				return &configfile.Error{Line: v.Line, Key: e.Key, Msg: fmt.Sprintf("invalid value %q: %v", v.Text, err)}
			}
		}
	}
	return nil
}

// flagKind is what a flag's value is, for the values a config file may
// give it.
type flagKind int

const (
	kindText    flagKind = iota // a string, or a word of a set (--method)
	kindInteger                 // int, int64, uint, uint64
	kindOther                   // bool, float64, duration: parsed by the flag
	kindList                    // repeatable: each value added
)

// kindOf returns the kind of f's value.
func kindOf(f *flag.Flag) flagKind {
	switch f.Value.(type) {
	case *listFlag, *stringList:
		return kindList
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return kindText
	}
	switch g.Get().(type) {
	case int, int64, uint, uint64:
		return kindInteger
	case bool, float64, time.Duration:
		return kindOther
	}
	return kindText
}

// checkValue refuses a value of a config file that a flag of kind would
// take as another than the file wrote: a TOML number, boolean or date
// for text (its text is TOML's reading of it, 0x1F as 31), and for an
// integer a YAML number with a leading zero.
func checkValue(kind flagKind, v configfile.Value) error {
	switch {
	case (kind == kindText || kind == kindList) && v.Type != "":
		return fmt.Errorf("takes text, not a TOML %s: write it as a TOML string (in quotes)", v.Type)
	case kind == kindInteger && v.Type == "" && leadingZero(v.Text):
		return fmt.Errorf("%q is ambiguous (octal to YAML 1.1 and Go, decimal to YAML 1.2): write it without the leading zero, or 0o%s for octal", v.Text, strings.TrimLeft(strings.TrimLeft(v.Text, "+-"), "0"))
	}
	return nil
}

// leadingZero says s is an integer written with a leading zero: 012,
// -012 (not 0, 0x1F or 0o12).
func leadingZero(s string) bool {
	s = strings.TrimLeft(s, "+-")
	return len(s) > 1 && s[0] == '0' && s[1] >= '0' && s[1] <= '9'
}

// mark records, for each flag of fs set since the last mark, where from.
func (s settings) mark(fs *flag.FlagSet, from func(*flag.Flag) string) {
	fs.Visit(func(f *flag.Flag) {
		if s.from[f.Name] == "" {
			s.from[f.Name] = from(f)
		}
	})
}

// unknownKeyError is a key of a config file that names no flag.
type unknownKeyError struct {
	key, hint string
	line      int
}

func (e *unknownKeyError) Error() string {
	msg := fmt.Sprintf("line %d: unknown key %q: not a flag of this command", e.line, e.key)
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
