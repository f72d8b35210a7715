// Package metrics counts what a coordinator or worker process does, in a
// private Prometheus registry that it serves on an opt-in address: tasks
// started, done, failed and redelivered per stage, documents and bytes
// read, rejects by reason, stage and task durations, and the tasks of the
// running stage not yet finished.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is one process's collectors and their registry. Its methods are
// safe for concurrent use.
type Metrics struct {
	reg                                *prometheus.Registry
	started, done, failed, redelivered *prometheus.CounterVec
	docs, inputBytes, textBytes        prometheus.Counter
	rejects                            *prometheus.CounterVec
	taskSeconds                        *prometheus.HistogramVec
	stageSeconds                       *prometheus.CounterVec
	pending                            *prometheus.GaugeVec
}

// New returns the collectors, registered in a new registry with the Go
// runtime's and the process's own.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	f := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "neardup", Name: name, Help: help}, []string{"stage"})
	}
	m := &Metrics{
		reg:         reg,
		started:     f("tasks_started_total", "Task deliveries started by this process, per stage (cluster: every cluster step)."),
		done:        f("tasks_done_total", "Tasks this process finished, per stage."),
		failed:      f("tasks_failed_total", "Task deliveries that failed in this process (retried until --max-deliver), per stage."),
		redelivered: f("tasks_redelivered_total", "Task deliveries started that were not a task's first, per stage."),
		docs:        prometheus.NewCounter(prometheus.CounterOpts{Namespace: "neardup", Name: "documents_read_total", Help: "Documents read by the map tasks this process finished."}),
		inputBytes:  prometheus.NewCounter(prometheus.CounterOpts{Namespace: "neardup", Name: "input_bytes_read_total", Help: "Input bytes (compressed as stored) read by the map tasks this process finished."}),
		textBytes:   prometheus.NewCounter(prometheus.CounterOpts{Namespace: "neardup", Name: "text_bytes_read_total", Help: "Text bytes of the documents read by the map tasks this process finished."}),
		rejects: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "neardup", Name: "rejects_total",
			Help: "Input records skipped by the map tasks this process finished, by the kind of their reason (as in the manifest's reject_reasons)."}, []string{"reason"}),
		taskSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "neardup", Name: "task_duration_seconds",
			Help: "Duration of the tasks this process finished, per stage.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 16)}, []string{"stage"}),
		stageSeconds: f("stage_duration_seconds_total", "Seconds the coordinator spent in each stage, from publishing its tasks to the last result (cluster: all its steps)."),
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "neardup", Name: "tasks_pending",
			Help: "Tasks of the coordinator's running stage published and not yet done or failed (queued or running)."}, []string{"stage"}),
	}
	reg.MustRegister(m.started, m.done, m.failed, m.redelivered, m.docs, m.inputBytes, m.textBytes, m.rejects,
		m.taskSeconds, m.stageSeconds, m.pending,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is the private registry, for tests that gather it directly.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// TaskStarted counts a delivery of a stage's task; attempt 1 is its first.
func (m *Metrics) TaskStarted(stage string, attempt int) {
	m.started.WithLabelValues(stage).Inc()
	if attempt > 1 {
		m.redelivered.WithLabelValues(stage).Inc()
	}
}

// TaskEnded counts a delivery that ended after d, done or failed with err.
func (m *Metrics) TaskEnded(stage string, d time.Duration, err error) {
	if err != nil {
		m.failed.WithLabelValues(stage).Inc()
		return
	}
	m.done.WithLabelValues(stage).Inc()
	m.taskSeconds.WithLabelValues(stage).Observe(d.Seconds())
}

// Read counts what a finished map task read: documents, input and text
// bytes, and its rejects by the kind of their reason.
func (m *Metrics) Read(docs, inputBytes, textBytes int64, rejects map[string]int64) {
	m.docs.Add(float64(docs))
	m.inputBytes.Add(float64(inputBytes))
	m.textBytes.Add(float64(textBytes))
	for kind, n := range rejects {
		m.rejects.WithLabelValues(kind).Add(float64(n))
	}
}

// StageDone adds the time a stage (or one cluster step) took.
func (m *Metrics) StageDone(stage string, d time.Duration) {
	m.stageSeconds.WithLabelValues(stage).Add(d.Seconds())
}

// Pending sets how many of a stage's tasks are not finished yet.
func (m *Metrics) Pending(stage string, n int) {
	m.pending.WithLabelValues(stage).Set(float64(n))
}

// WatchQueue adds neardup_queue_tasks, the tasks the work queue holds,
// read by pending at each scrape (NaN when that fails).
func (m *Metrics) WatchQueue(pending func(context.Context) (int, error)) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "neardup", Name: "queue_tasks",
		Help: "Tasks in the NATS work queue, of every job: waiting, or delivered and not yet acknowledged (read at each scrape)."},
		func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			n, err := pending(ctx)
			if err != nil {
				return math.NaN()
			}
			return float64(n)
		}))
}

// Serve serves the metrics at http://addr/metrics until stop is called,
// and returns the address it listens on (addr with its port if addr's was
// 0). It listens before it returns, so a port in use is its error.
func (m *Metrics) Serve(addr string, log *slog.Logger) (bound string, stop func(), err error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	// The server's own errors (a bad request, say) go to log, not to
	// the standard logger's stderr.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "err", err)
		}
	}()
	log.Info("serving metrics", "url", "http://"+l.Addr().String()+"/metrics")
	return l.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}, nil
}
