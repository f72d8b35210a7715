package control

import (
	"strings"
	"time"

	"github.com/neardup/neardup/internal/stage/cluster"
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
	// holding textBytes of text, and skipped records: rejects counts them
	// by the kind of their reason (mapper.RejectKind).
	Read(docs, inputBytes, textBytes int64, rejects map[string]int64)
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

func (noObserver) TaskStarted(string, int)                    {}
func (noObserver) TaskEnded(string, time.Duration, error)     {}
func (noObserver) Read(int64, int64, int64, map[string]int64) {}
func (noObserver) StageDone(string, time.Duration)            {}
func (noObserver) Pending(string, int)                        {}

// metricStage is the stage an observer hears for a task or stage name:
// the cluster stage's steps are all "cluster".
func metricStage(name string) string {
	if strings.HasPrefix(name, cluster.StepPrefix) {
		return "cluster"
	}
	return name
}

// heldRead keeps what a map task read until its result is recorded: a
// task whose result could not be recorded runs again, and its documents
// must not be counted twice.
type heldRead struct {
	docs, inputBytes, textBytes int64
	rejects                     map[string]int64
	held                        bool
}

// Read holds what the task read.
func (h *heldRead) Read(docs, inputBytes, textBytes int64, rejects map[string]int64) {
	*h = heldRead{docs: docs, inputBytes: inputBytes, textBytes: textBytes, rejects: rejects, held: true}
}

// tell tells o what the task read, if it read anything.
func (h *heldRead) tell(o TaskObserver) {
	if h.held {
		o.Read(h.docs, h.inputBytes, h.textBytes, h.rejects)
	}
}
