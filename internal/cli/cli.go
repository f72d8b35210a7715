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
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/neardup/neardup/internal/buildinfo"
)

// EnvPrefix starts the environment variable of every flag: --chunk-bytes
// is also set by NEARDUP_CHUNK_BYTES. A flag on the command line wins.
const EnvPrefix = "NEARDUP"

// Command is one subcommand.
type Command struct {
	// Name is the word that selects it; "" for the program's default
	// command (run when the first argument names no other).
	Name string
	// Usage is its synopsis, Summary what it does, in one line each.
	Usage, Summary string
	// Setup registers the command's flags on fs and returns the function
	// that checks them.
	Setup func(fs *flag.FlagSet) Prepare
	// prints, if not "", makes the command print the settings of
	// Setup's flags instead of running: those of the command it names
	// (ConfigCommand).
	prints string
}

// Prepare checks a command's flags and the arguments left after them,
// before any work, and returns the function that runs it; the error is a
// usage error, one line.
type Prepare func(args []string, out Streams) (Run, error)

// Run runs a checked command and returns its exit status.
type Run func(ctx context.Context) int

// Streams are where a command writes: its result on Stdout, logs and
// progress on Stderr.
type Streams struct {
	Stdout, Stderr io.Writer
}

// Main runs the command of program prog that args select and returns the
// exit status: 2 for a usage error, said in one line on stderr. Flags may
// come before or after the other arguments ("--" ends the flags); a flag
// not on the command line is taken from its environment variable
// (EnvPrefix), then from the config file --config names. SIGINT and
// SIGTERM cancel the context the command runs with; a second one, or the
// command still running stopGrace after the first, ends the process.
func Main(prog string, args []string, cmds []Command, stdout, stderr io.Writer) int {
	cmd, rest := pick(cmds, args)
	name := prog
	if cmd.Name != "" {
		name += " " + cmd.Name
	}
	fs, prepare := setup(cmd)
	version := fs.Bool("version", false, "print the version (module, VCS revision, Go) and exit")
	usage := func() {
		fmt.Fprintf(stderr, "usage:\n")
		for _, c := range cmds {
			fmt.Fprintf(stderr, "  %s\n      %s\n", c.Usage, c.Summary)
		}
		fmt.Fprintf(stderr, "\nflags of %s (each also set by the environment variable in brackets, or a key of the --config file; the command line wins, then the environment):\n", name)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	usageErr := func(err error) int {
		if jsonUsage(fs, rest, os.Getenv) {
			jsonUsageError(stderr, name, err)
			return 2
		}
		fmt.Fprintf(stderr, "%s: %s (see %s -h)\n", name, oneLine(err), name)
		return 2
	}
	inputs, err := parseInterleaved(fs, rest)
	if errors.Is(err, flag.ErrHelp) {
		usage()
		return 0
	}
	if err != nil {
		return usageErr(err)
	}
	if *version {
		fmt.Fprintln(stdout, buildinfo.Read())
		return 0
	}
	// The flags given are set; the others come from the environment,
	// then from the config file.
	set, err := loadSettings(fs)
	if err != nil {
		return usageErr(err)
	}
	if cmd.prints != "" {
		if len(inputs) != 1 || inputs[0] != "print" {
			return usageErr(fmt.Errorf(`the action is "print", not %q`, inputs))
		}
		if err := printSettings(stdout, cmd.prints, fs, set); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return 1
		}
		return 0
	}
	run, err := prepare(inputs, Streams{Stdout: stdout, Stderr: stderr})
	if err != nil {
		return usageErr(err)
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	return interruptible(run, sigs, stopGrace, stderr, name, os.Exit)
}

// CheckArgs parses args as Main would for cmds, flags only (not the
// environment), without running the command: the error names an unknown
// flag or a bad value. It is for command lines written down elsewhere,
// such as the services of docker-compose.yml that a test cannot run.
func CheckArgs(cmds []Command, args []string) error {
	cmd, rest := pick(cmds, args)
	fs, _ := setup(cmd)
	if _, err := parseInterleaved(fs, rest); err != nil {
		return fmt.Errorf("%v: %w", args, err)
	}
	return nil
}

// setup returns cmd's flag set, silent (Main reports its errors), every
// flag's help naming its environment variable, and cmd's Prepare.
func setup(cmd Command) (*flag.FlagSet, Prepare) {
	fs := flag.NewFlagSet(cmd.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	prepare := cmd.Setup(fs)
	fs.String(configFlag, "", "read flags from this YAML (.yaml, .yml) or TOML (.toml) file, one key a flag: the command line and the environment win; a key that is no flag is an error")
	fs.VisitAll(func(f *flag.Flag) { f.Usage += " [$" + EnvVar(f.Name) + "]" })
	return fs, prepare
}

// EnvVar is the environment variable of the flag named name, as ff
// derives it: NEARDUP_ and the name in capitals, - as _.
func EnvVar(name string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_", "/", "_").Replace(name))
}

// parseInterleaved parses the flags of args wherever they are, before or
// between the other arguments, and returns those others in order.
// Everything after "--" is an argument.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var others []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return others, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(others, rest...), nil
		}
		others = append(others, rest[0])
		args = rest[1:]
	}
}

// oneLine joins the lines of err's message (errors.Join makes several).
func oneLine(err error) string {
	return strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")
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
