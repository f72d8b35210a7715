// Command worker runs neardup tasks from a NATS JetStream work queue, for
// any job whose coordinator uses the same server. Every worker must see the
// jobs' output directories at the same paths as their coordinators.
//
//	worker --nats nats://host:4222 [--slots N]
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/procstat"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/pkg/pipeline"
)

func main() {
	fs := flag.NewFlagSet("worker", flag.ExitOnError)
	url := fs.String("nats", "", "NATS server URL (required)")
	slots := fs.Int("slots", runtime.NumCPU(), "tasks run at once")
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	qc := queue.DefaultConfig()
	fs.DurationVar(&qc.AckWait, "ack-wait", qc.AckWait, "must match the coordinator's --ack-wait")
	fs.IntVar(&qc.MaxDeliver, "max-deliver", qc.MaxDeliver, "must match the coordinator's --max-deliver")
	fs.Parse(os.Args[1:])
	if *url == "" {
		fmt.Fprintln(os.Stderr, "worker: --nats is required")
		fs.Usage()
		os.Exit(2)
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintln(os.Stderr, "worker: --log-level:", err)
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	q, err := queue.Connect(ctx, *url, "neardup-worker", qc)
	if err != nil {
		log.Error("connect", "err", err)
		os.Exit(1)
	}
	defer q.Close()
	f, err := faults.Parse(os.Getenv(faults.EnvVar), log)
	if err != nil {
		log.Error("bad "+faults.EnvVar, "err", err)
		os.Exit(2)
	}
	w := pipeline.NewWorker(q, *slots, log)
	w.InjectFaults(f)
	log.Info("worker ready", "nats", *url, "slots", *slots)
	if err := w.Run(ctx); err != nil {
		log.Error("worker stopped", "err", err)
		os.Exit(1)
	}
	log.Info("worker stopped", "peak_rss_mib", fmt.Sprintf("%.0f", procstat.PeakRSSMiB()))
}
