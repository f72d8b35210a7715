package control

import "github.com/neardup/neardup/internal/job"

// Params are the parameters of a job (see job.Params): equal params and
// inputs give byte-identical pairs and clusters.
type Params = job.Params

// DefaultParams are the parameters used unless told otherwise; Bands and
// Rows are chosen from the threshold when the job starts.
func DefaultParams() Params { return job.DefaultParams() }
