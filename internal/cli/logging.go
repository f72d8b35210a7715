package cli

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"

	"github.com/neardup/neardup/internal/configfile"
)

// logFlags are the logging flags of the commands that run jobs.
type logFlags struct {
	level, format string
}

func (l *logFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.level, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&l.format, "log-format", "text", "log format: text (key=value) or json (one object a line)")
}

// logger returns the logger the flags describe, writing to w.
func (l logFlags) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(l.level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch l.format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, not %q", l.format)
}

// adopt makes log the process's default logger when it writes to the
// process's stderr, so that what a library writes through the standard
// log package comes out in the same format (JSON lines with --log-format
// json). A command run with other streams (tests) leaves it alone.
func adopt(log *slog.Logger, stderr io.Writer) {
	if f, ok := stderr.(*os.File); ok && f == os.Stderr {
		slog.SetDefault(log)
	}
}

// catchPanic, deferred by a command's run function, logs a panic of the
// command's goroutine as one error record with its stack, and sets the
// exit status to 1, when the logs are JSON: stderr stays JSON lines. With
// text logs the panic goes on, printed by Go. A panic on another
// goroutine, or a fatal error of the runtime, is printed by Go as text
// whatever the format (docs/usage.md).
func (l logFlags) catchPanic(log *slog.Logger, code *int) {
	if l.format != "json" {
		return
	}
	if r := recover(); r != nil {
		log.Error("panic", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		*code = 1
	}
}

// jsonUsage tells whether a usage error of a command with flags fs, given
// args, is said as a JSON record: whether --log-format is json where it
// is first set by precedence (the command line, the environment, the
// --config file), read from each source again, since the error may have
// stopped the parse before or in the middle of the file.
func jsonUsage(fs *flag.FlagSet, args []string, getenv func(string) string) bool {
	f := fs.Lookup("log-format")
	if f == nil {
		return false
	}
	if v, ok := argValue(args, f.Name); ok {
		return v == "json"
	}
	if v := getenv(EnvVar(f.Name)); v != "" {
		return v == "json"
	}
	file, ok := argValue(args, configFlag)
	if !ok {
		file = getenv(EnvVar(configFlag))
	}
	if v, ok := fileValue(file, f.Name); ok {
		return v == "json"
	}
	return f.DefValue == "json"
}

// argValue returns the value of the flag name on the command line args
// (-name=v, --name=v, -name v or --name v), the last one given.
func argValue(args []string, name string) (v string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		k, val, eq := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if k != name {
			continue
		}
		if !eq && i+1 < len(args) {
			i++
			val = args[i]
		}
		v, ok = val, true
	}
	return v, ok
}

// fileValue returns the value of key in the config file path, if it can
// be read and holds it; errors are for loadSettings to say.
func fileValue(path, key string) (v string, ok bool) {
	if path == "" {
		return "", false
	}
	entries, err := configfile.Read(path)
	if err != nil {
		return "", false
	}
	for _, e := range entries {
		if e.Key == key && len(e.Values) == 1 {
			return e.Values[0].Text, true
		}
	}
	return "", false
}

// jsonUsageError says a usage error of the command named name as one JSON
// log record on w.
func jsonUsageError(w io.Writer, name string, err error) {
	slog.New(slog.NewJSONHandler(w, nil)).Error("usage error", "command", name, "err", oneLine(err), "help", name+" -h")
}
