package metrics

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"
	"github.com/prometheus/common/expfmt"

	"github.com/neardup/neardup/internal/redact"
)

// Batch is what a batch job (a CronJob's run) reports when it ends, for a
// Prometheus that never scrapes it while it runs: through a Pushgateway
// (Push) or node-exporter's textfile collector (WriteFile). Label is the
// job label, the same every run of one schedule (the Pushgateway's
// grouping key job); Name is the run's own job name (a series member's,
// say), in neardup_job_info.
type Batch struct {
	Label string
	Name  string
	// Succeeded tells a complete job from one that failed (or ended
	// partial); Ended is when it ended.
	Succeeded bool
	Ended     time.Time
	// What a job that succeeded found: its run time, documents read,
	// duplicates, the text bytes of the duplicates, pairs and rejected
	// records.
	Seconds               float64
	Docs, Duplicates      int64
	DuplicateBytes, Pairs int64
	Rejected              int64
}

// gauge adds a gauge of value v to reg.
func gauge(reg *prometheus.Registry, labels prometheus.Labels, name, help string, v float64) {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "neardup", Name: name, Help: help, ConstLabels: labels})
	g.Set(v)
	reg.MustRegister(g)
}

// registry holds b's metrics, each with labels: those of a job that
// succeeded (neardup_last_success_timestamp_seconds and the counts), or
// neardup_last_failure_timestamp_seconds alone.
func (b Batch) registry(labels prometheus.Labels) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	if !b.Succeeded {
		gauge(reg, labels, "last_failure_timestamp_seconds", "When the last run of the job failed or ended partial (Unix seconds).", float64(b.Ended.UnixNano())/1e9)
		return reg
	}
	gauge(reg, labels, "last_success_timestamp_seconds", "When the last complete run of the job ended (Unix seconds).", float64(b.Ended.UnixNano())/1e9)
	gauge(reg, labels, "job_duration_seconds", "How long the last complete run took.", b.Seconds)
	gauge(reg, labels, "job_documents", "Documents the last complete run read.", float64(b.Docs))
	gauge(reg, labels, "job_duplicates", "Documents the last complete run dropped as duplicates.", float64(b.Duplicates))
	gauge(reg, labels, "job_duplicate_text_bytes", "Text bytes of the documents the last complete run dropped.", float64(b.DuplicateBytes))
	gauge(reg, labels, "job_pairs", "Near-duplicate pairs the last complete run listed.", float64(b.Pairs))
	gauge(reg, labels, "job_rejected", "Input records the last complete run skipped (rejects/).", float64(b.Rejected))
	info := prometheus.Labels{"name": b.Name}
	for k, v := range labels {
		info[k] = v
	}
	gauge(reg, info, "job_info", "The last complete run's job name (--job, or a series member's name), as the label name.", 1)
	return reg
}

// WriteFile writes b to path in Prometheus's text format, for
// node-exporter's textfile collector (--collector.textfile.directory),
// every metric labelled job=b.Label: atomically, as a temporary file in
// path's directory renamed to path, so that the collector never reads half
// a file. Only a job that succeeded is written: the file of the last
// success stays, so its timestamp ages when later runs fail, which is what
// an alert on it looks for.
func (b Batch) WriteFile(path string) error {
	if !b.Succeeded {
		return nil
	}
	if err := prometheus.WriteToTextfile(path, b.registry(prometheus.Labels{"job": b.Label})); err != nil {
		return fmt.Errorf("--metrics-file %s: %w", path, err)
	}
	return nil
}

// pushTimeout bounds a push: a Pushgateway that does not answer must not
// hold a finished job.
const pushTimeout = 30 * time.Second

// Push sends b to the Pushgateway at gateway (http://host:port, without
// /metrics/...), grouped by job=b.Label (gateway/metrics/job/LABEL), in
// the text format. A job that succeeded replaces the group's metrics
// (PUT); one that failed adds neardup_last_failure_timestamp_seconds to
// them (POST), leaving those of the last success. Credentials in
// gateway's user information are sent as basic authentication and never
// appear in an error.
func (b Batch) Push(ctx context.Context, gateway string) error {
	if err := CheckPush(gateway); err != nil {
		return err
	}
	u, _ := url.Parse(gateway)
	user := u.User
	u.User = nil
	p := push.New(strings.TrimSuffix(u.String(), "/"), b.Label).
		Gatherer(b.registry(nil)).
		Format(expfmt.NewFormat(expfmt.TypeTextPlain)).
		Client(&http.Client{Timeout: pushTimeout})
	if user != nil {
		pass, _ := user.Password()
		p = p.BasicAuth(user.Username(), pass)
	}
	ctx, cancel := context.WithTimeout(ctx, pushTimeout)
	defer cancel()
	var err error
	if b.Succeeded {
		err = p.PushContext(ctx)
	} else {
		err = p.AddContext(ctx)
	}
	if err != nil {
		return fmt.Errorf("--metrics-push %s: %w", u.String(), err)
	}
	return nil
}

// CheckPush refuses a --metrics-push value that is no http(s) URL.
func CheckPush(gateway string) error {
	u, err := redact.ParseURL(gateway)
	if err != nil {
		return fmt.Errorf("--metrics-push: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--metrics-push %s: want the http:// or https:// URL of a Pushgateway", redact.URL(gateway))
	}
	return nil
}

// CheckFile refuses a --metrics-file whose directory does not exist: the
// job would run to its end and then fail to report.
func CheckFile(path string) error {
	st, err := os.Stat(filepath.Dir(path))
	switch {
	case err != nil:
		return fmt.Errorf("--metrics-file %s: %w", path, err)
	case !st.IsDir():
		return fmt.Errorf("--metrics-file %s: %s is not a directory", path, filepath.Dir(path))
	case !strings.HasSuffix(path, ".prom"):
		return fmt.Errorf("--metrics-file %s: node-exporter's textfile collector reads only files named *.prom", path)
	}
	return nil
}
