package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/neardup/neardup/internal/control"
	"github.com/neardup/neardup/internal/dataroot"
	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/procstat"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/redact"
)

// Worker returns the worker's command and its config command.
func Worker() []Command {
	w := Command{Usage: "worker --nats URL[,URL...] [--slots N] [--data-root DIR]...", Summary: "run tasks of any job whose coordinator uses the same NATS server (or cluster)", Setup: workerSetup}
	return []Command{w, ConfigCommand("worker", w)}
}

func workerSetup(fs *flag.FlagSet) Prepare {
	conn := queue.DefaultConnConfig()
	conn.RegisterFlags(fs, "NATS server URL, or several separated by commas (servers of one cluster; required)", noEnv)
	slots := fs.Int("slots", runtime.NumCPU(), "tasks run at once")
	var roots stringList
	fs.Var(&roots, "data-root", "read inputs and write outputs only under this directory (repeatable; default: any path a job names)")
	qc := queue.DefaultConfig()
	qc.RegisterFlags(fs)
	var proc processFlags
	proc.register(fs)
	return func(args []string, out Streams) (Run, error) {
		if conn.URL == "" {
			return nil, errors.New("--nats (or $" + EnvVar("nats") + " or $" + queue.EnvURL + ") is required")
		}
		if len(args) > 0 {
			return nil, fmt.Errorf("no arguments, not %q", args)
		}
		if *slots < 1 {
			return nil, fmt.Errorf("--slots %d: must be at least 1", *slots)
		}
		log, err := proc.logs.logger(out.Stderr)
		if err != nil {
			return nil, err
		}
		if err := errors.Join(conn.Check(), qc.Check(), proc.met.check()); err != nil {
			return nil, err
		}
		dr, err := dataroot.Resolve(roots)
		if err != nil {
			return nil, fmt.Errorf("--data-root: %w", err)
		}
		f, err := faults.Parse(os.Getenv(faults.EnvVar), log)
		if err != nil {
			return nil, fmt.Errorf("$%s: %w", faults.EnvVar, err)
		}
		return func(ctx context.Context) (code int) {
			adopt(log, out.Stderr)
			defer proc.logs.catchPanic(log, &code)
			if dr.Empty() {
				log.Warn("no --data-root: this worker will read and write any path a job names, " +
					"and anyone who can publish to the NATS server can submit a job")
			}
			m, stop, code, err := proc.start(log)
			if err != nil {
				log.Error("worker not started", "err", err)
				return code
			}
			defer stop()
			q, err := queue.Connect(ctx, conn, "neardup-worker", qc, log)
			if err != nil {
				log.Error("connect", "err", err)
				return 1
			}
			defer q.Close()
			w := control.NewWorker(q, *slots, log)
			w.InjectFaults(f)
			w.RestrictTo(dr)
			if m != nil {
				w.Observe(m)
				m.WatchQueue(q.Pending)
			}
			log.Info("worker ready", "nats", redact.URL(conn.URL), "slots", *slots, "data_roots", dr.String())
			if err := w.Run(ctx); err != nil {
				log.Error("worker stopped", "err", err)
				return 1
			}
			log.Info("worker stopped", "peak_rss_mib", fmt.Sprintf("%.0f", procstat.PeakRSSMiB()))
			return 0
		}, nil
	}
}

// stringList is a repeatable string flag.
type stringList []string

// String lists the values.
func (l *stringList) String() string { return strings.Join(*l, ",") }

// Set adds a value.
func (l *stringList) Set(v string) error {
	if v == "" {
		return fmt.Errorf("empty value")
	}
	*l = append(*l, v)
	return nil
}
