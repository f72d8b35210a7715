// Package cli holds neardup's commands: each subcommand is one Command
// value with its usage, its flags and its run function, and the cmd/
// mains only hand os.Args to Main.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// Command is one subcommand.
type Command struct {
	// Name is the word that selects it; "" for the program's default
	// command (run when the first argument names no other).
	Name string
	// Usage is its synopsis, Summary what it does, in one line each.
	Usage, Summary string
	// Setup registers the command's flags on fs and returns the function
	// that runs it on the arguments left after the flags, returning the
	// exit status.
	Setup func(fs *flag.FlagSet) func(ctx context.Context, args []string) int
}

// Main runs the command of program prog that args select and returns the
// exit status: 2 for a usage error. SIGINT and SIGTERM cancel the context
// the command runs with.
func Main(prog string, args []string, cmds []Command, stderr io.Writer) int {
	cmd, rest := pick(cmds, args)
	name := prog
	if cmd.Name != "" {
		name += " " + cmd.Name
	}
	fs := newFlagSet(cmd, stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage:\n")
		for _, c := range cmds {
			fmt.Fprintf(stderr, "  %s\n      %s\n", c.Usage, c.Summary)
		}
		fmt.Fprintf(stderr, "\nflags of %s:\n", name)
		fs.PrintDefaults()
	}
	run := cmd.Setup(fs)
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, fs.Args())
}

// CheckArgs parses args as Main would for cmds, flags only, without
// running the command: the error names an unknown flag or a bad value. It
// is for command lines written down elsewhere, such as the services of
// docker-compose.yml that a test cannot run.
func CheckArgs(cmds []Command, args []string) error {
	cmd, rest := pick(cmds, args)
	fs := newFlagSet(cmd, io.Discard)
	cmd.Setup(fs)
	if err := fs.Parse(rest); err != nil {
		return fmt.Errorf("%v: %w", args, err)
	}
	return nil
}

// newFlagSet returns a FlagSet for cmd that reports errors to stderr.
func newFlagSet(cmd Command, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(cmd.Name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// pick returns the command args[0] names, or the default one.
func pick(cmds []Command, args []string) (Command, []string) {
	if len(args) > 0 {
		for _, c := range cmds {
			if c.Name != "" && c.Name == args[0] {
				return c, args[1:]
			}
		}
	}
	for _, c := range cmds {
		if c.Name == "" {
			return c, args
		}
	}
	return cmds[0], args
}

// newLogger returns a text logger on stderr at the named level.
func newLogger(level string, stderr io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: l})), nil
}
