// Package stage is the contract between a job's stages and what runs
// them, and the driver of their sequence.
//
// A stage is a Stage value: what the coordinator plans and folds (Tasks,
// Done, or Steps for a stage of steps) and what a worker runs (Run). Each
// stage is a package of its own beneath this one, which imports no other
// stage's: mapper (reads the inputs into documents, texts and band
// records), reduce (groups the band records into candidate pairs),
// gather (sends verify tasks their documents' records), verify (judges
// the candidates by sketch.Rule) and cluster (joins the verified pairs
// into clusters and writes the outputs). Package stages is their
// sequence and the workers' registry.
//
// A stage hands what later stages need to them through Job's typed
// results (Mapped, Reduced, Verified, Clusters), set by its Done, and,
// for their tasks, through task input files (WriteTaskInputs), so that a
// task reads its own column of an earlier stage's results. Where those
// results are a matrix of chunks × partitions, their tasks write their
// rows to route tables, which Transpose reads a window at a time to write
// the input files (WriteEdgeInputs, WriteGatheredInputs), and Done reads
// the results one at a time (EachResult): the coordinator never holds a
// stage's results whole. Drive runs the stages in order through an
// Executor: the queue's, or stages.Local in this process.
//
// Every stage is idempotent: run again on the same inputs, it writes the
// same files.
package stage
