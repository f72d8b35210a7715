package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/metrics"
)

// metricsFlag is the --metrics-addr flag of the commands that run tasks.
type metricsFlag struct{ addr string }

func (m *metricsFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&m.addr, "metrics-addr", "", "serve Prometheus metrics at http://host:port/metrics (empty: none)")
}

// check reports an address that is not host:port.
func (m metricsFlag) check() error {
	if m.addr == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(m.addr); err != nil {
		return fmt.Errorf("--metrics-addr %q: want host:port: %w", m.addr, err)
	}
	return nil
}

// serve starts serving the metrics if asked to: nil metrics and a no-op
// stop otherwise.
func (m metricsFlag) serve(log *slog.Logger) (*metrics.Metrics, func(), error) {
	if m.addr == "" {
		return nil, func() {}, nil
	}
	reg := metrics.New()
	_, stop, err := reg.Serve(m.addr, log)
	if err != nil {
		return nil, nil, err
	}
	return reg, stop, nil
}

// batchFlags are the flags of a job that reports its end to Prometheus:
// a batch job (a CronJob's run) is not scraped while it runs.
type batchFlags struct {
	push, file, label string
}

func (b *batchFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&b.push, "metrics-push", "", "when the job ends, push its metrics (neardup_last_success_timestamp_seconds, documents, duplicates, ...) to the Prometheus Pushgateway at this http:// URL, grouped by job=--metrics-job")
	fs.StringVar(&b.file, "metrics-file", "", "when the job succeeds, write its metrics to this *.prom file for node-exporter's textfile collector (atomically: a temporary file renamed)")
	fs.StringVar(&b.label, "metrics-job", "neardup", "the job label of --metrics-push and --metrics-file: the same for every run of one schedule")
}

// check refuses what would make the report fail after the job ran.
func (b batchFlags) check() error {
	var errs []error
	if b.push != "" {
		errs = append(errs, metrics.CheckPush(b.push))
	}
	if b.file != "" {
		errs = append(errs, metrics.CheckFile(b.file))
	}
	if (b.push != "" || b.file != "") && b.label == "" {
		errs = append(errs, errors.New("--metrics-job is empty: the pushed or written metrics need a job label"))
	}
	return errors.Join(errs...)
}

// report pushes or writes the metrics of a job that ended at ended with
// man (nil when it failed before it had one). A failure to report is
// logged as an error but does not change the job's exit status: the job's
// outputs are what they are, and a CronJob retrying a complete job would
// only be told it is complete (exit 3); the alert on the last success's
// age sees the missing report.
func (b batchFlags) report(ctx context.Context, log *slog.Logger, man *manifest.Manifest, ended time.Time) {
	if b.push == "" && b.file == "" {
		return
	}
	m := metrics.Batch{Label: b.label, Ended: ended}
	if man != nil {
		c := man.Counts
		m.Name, m.Seconds = man.Job, man.Seconds
		m.Succeeded = man.Status == manifest.StatusComplete
		m.Docs, m.Duplicates, m.Pairs, m.Rejected = c.Docs, c.Duplicates, c.Pairs, c.Rejected
		if man.Rates != nil {
			m.DuplicateBytes = man.Rates.Total.BytesRemoved
		}
	}
	var errs []error
	if b.push != "" {
		errs = append(errs, m.Push(ctx, b.push))
	}
	if b.file != "" {
		errs = append(errs, m.WriteFile(b.file))
	}
	if err := errors.Join(errs...); err != nil {
		log.Error("the job's metrics were not reported", "err", err)
		return
	}
	log.Info("the job's metrics reported", "job_label", b.label, "succeeded", m.Succeeded)
}
