package cli

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
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
// args, is to be said as a JSON record: --log-format json on the command
// line (parsed or not yet) or in the environment.
func jsonUsage(fs *flag.FlagSet, args []string, getenv func(string) string) bool {
	f := fs.Lookup("log-format")
	if f == nil {
		return false
	}
	if f.Value.String() == "json" {
		return true
	}
	for i, a := range args {
		switch strings.TrimLeft(a, "-") {
		case "log-format=json":
			return true
		case "log-format":
			if i+1 < len(args) && args[i+1] == "json" {
				return true
			}
		}
		if a == "--" {
			break
		}
	}
	return getenv(EnvVar("log-format")) == "json"
}

// jsonUsageError says a usage error of the command named name as one JSON
// log record on w.
func jsonUsageError(w io.Writer, name string, err error) {
	slog.New(slog.NewJSONHandler(w, nil)).Error("usage error", "command", name, "err", oneLine(err), "help", name+" -h")
}
