package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"

	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/procstat"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/pkg/pipeline"
)

// Worker returns the worker's one command.
func Worker() []Command {
	return []Command{{Usage: "worker --nats URL [--slots N]", Summary: "run tasks of any job whose coordinator uses the same NATS server", Setup: workerSetup}}
}

func workerSetup(fs *flag.FlagSet) func(context.Context, []string) int {
	url := fs.String("nats", "", "NATS server URL (required)")
	slots := fs.Int("slots", runtime.NumCPU(), "tasks run at once")
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	qc := queue.DefaultConfig()
	qc.RegisterFlags(fs)
	return func(ctx context.Context, args []string) int {
		if *url == "" || len(args) > 0 {
			fmt.Fprintln(os.Stderr, "worker: --nats is required, and no arguments")
			fs.Usage()
			return 2
		}
		log, err := newLogger(*level, os.Stderr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			return 2
		}
		f, err := faults.Parse(os.Getenv(faults.EnvVar), log)
		if err != nil {
			log.Error("bad "+faults.EnvVar, "err", err)
			return 2
		}
		q, err := queue.Connect(ctx, *url, "neardup-worker", qc)
		if err != nil {
			log.Error("connect", "err", err)
			return 1
		}
		defer q.Close()
		w := pipeline.NewWorker(q, *slots, log)
		w.InjectFaults(f)
		log.Info("worker ready", "nats", *url, "slots", *slots)
		if err := w.Run(ctx); err != nil {
			log.Error("worker stopped", "err", err)
			return 1
		}
		log.Info("worker stopped", "peak_rss_mib", fmt.Sprintf("%.0f", procstat.PeakRSSMiB()))
		return 0
	}
}
