package control

import (
	"fmt"
)

// Task is the message that asks a worker to run one task. It is small: the
// worker reads everything else from the job's spec and files.
type Task struct {
	Job   string `json:"job"`
	Epoch string `json:"epoch"`
	// Life is new with every start of the coordinator: a worker reloads
	// what it keeps of a job (its spec, with the output's current place,
	// and the stage results) when it changes, e.g. for a rerun that
	// retries the chunks of a partial run.
	Life  string `json:"life,omitempty"`
	Stage string `json:"stage"`
	Index int    `json:"index"`
}

// cacheKey is what a worker keeps a job's state under.
func (t Task) cacheKey() string { return t.Epoch + "/" + t.Life }

func (t Task) id() string { return fmt.Sprintf("%s.%s.%06d", t.Epoch, t.Stage, t.Index) }

// KV keys of the job-state bucket.
const specKey = "spec"

// Task state keys start with the epoch, so that a late result of an earlier
// epoch of the same job can never be taken for one of this epoch.
func stageKeys(epoch, stage string) string { return epoch + "." + stage }
func doneKey(epoch, stage string, i int) string {
	return fmt.Sprintf("%s.done.%06d", stageKeys(epoch, stage), i)
}
func failedKey(epoch, stage string, i int) string {
	return fmt.Sprintf("%s.failed.%06d", stageKeys(epoch, stage), i)
}
