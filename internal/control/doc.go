// Package control is a job's control plane: Run plans a job, takes its
// lease, starts an embedded NATS server when none is given, drives the
// stages through the queue (the coordinator's Executor, stagewait.go) and
// concludes the job (warnings, index, manifest, report, _SUCCESS); a
// Worker runs the tasks it takes from the queue. It also
// holds what runs beside a job: progress and its ETA, the no-worker
// warning, the disk watch, the compaction of indexes and the
// comparison of methods. The public API over it is package
// pkg/pipeline; the commands' flags reach it through internal/cli.
package control
