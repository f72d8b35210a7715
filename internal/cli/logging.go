package cli

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
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
