package pipeline

import (
	"context"
	"strings"
	"time"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// TaskObserver hears of the tasks a worker runs, for metrics. Stages are
// named as tasks are (map, reduce, gather, verify), every cluster step as
// "cluster".
type TaskObserver interface {
	// TaskStarted: a delivery of a task begins; attempt 1 is its first.
	TaskStarted(stage string, attempt int)
	// TaskEnded: the delivery took d and ended done (err nil) or failed.
	TaskEnded(stage string, d time.Duration, err error)
	// Read: a finished map task read docs documents, inputBytes of input
	// holding textBytes of text, and skipped records for these reasons.
	Read(docs, inputBytes, textBytes int64, rejects []string)
}

// StageObserver hears of a coordinator's stages, for metrics.
type StageObserver interface {
	// StageDone: a stage (or one cluster step) took d.
	StageDone(stage string, d time.Duration)
	// Pending: n of the running stage's tasks are not done or failed yet.
	Pending(stage string, n int)
}

// noObserver observes nothing.
type noObserver struct{}

func (noObserver) TaskStarted(string, int)                {}
func (noObserver) TaskEnded(string, time.Duration, error) {}
func (noObserver) Read(int64, int64, int64, []string)     {}
func (noObserver) StageDone(string, time.Duration)        {}
func (noObserver) Pending(string, int)                    {}

// metricStage is the stage an observer hears for a task or stage name:
// the cluster stage's steps are all "cluster".
func metricStage(name string) string {
	if strings.HasPrefix(name, stage.ClusterStepPrefix) {
		return "cluster"
	}
	return name
}

// observeMap tells o what a finished map task read. Its rejects' reasons
// are read back from its reject file only for an observer that counts.
func observeMap(ctx context.Context, o TaskObserver, st storage.Opener, r *job.MapResult) error {
	if _, ok := o.(noObserver); ok || r == nil {
		return nil
	}
	var reasons []string
	if r.RejectFile != nil {
		rows, err := pqfile.Read[records.RejectRecord](ctx, st, r.RejectFile.Name, r.RejectFile)
		if err != nil {
			return err
		}
		reasons = make([]string, len(rows))
		for i, row := range rows {
			reasons[i] = row.Reason
		}
	}
	o.Read(r.Docs, r.InputBytes, r.TextBytes, reasons)
	return nil
}
