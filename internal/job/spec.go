package job

import (
	"encoding/json"
	"fmt"
)

// Spec is everything a worker needs to run a job's tasks. It encodes as
// an object of job, epoch, out and params, with the derived state's keys
// first_chunk and against beside params when the job has earlier jobs.
type Spec struct {
	Job string `json:"job"`
	// Epoch is new with every fresh start of the job (not with a resume):
	// task results of an earlier epoch never count for this one.
	Epoch  string `json:"epoch"`
	Out    string `json:"out"` // output directory, as every worker sees it
	Params Params `json:"params"`
	// Derived is what the job derived from --against at its start.
	Derived
	// Kept is the corpus the job writes in its write-kept stage
	// (--write-kept), nil for none.
	Kept *KeptOutput `json:"kept,omitempty"`
	// Format is the spec's format (SpecFormat when the job began; 0
	// before formats were numbered): a worker refuses a spec of a format
	// it does not know instead of misreading it.
	Format int `json:"format,omitempty"`
}

// KeptOutput is where and how a job writes its kept corpus.
type KeptOutput struct {
	// Dir is the corpus's directory: an absolute path or an object-store
	// URL, as every worker sees it.
	Dir string `json:"dir"`
	// Format is what its files are (kept.Formats).
	Format string `json:"format"`
	// Strip strips the repeated units from its documents
	// (--strip-paragraphs); nil for none.
	Strip *Strip `json:"strip,omitempty"`
}

// SpecFormat is the format of the specs this version writes: 1 has the
// derived state beside the params (before, inside them); 2 says that the
// reduce, gather and cluster tasks report route tables (Routes) instead
// of their ranges by chunk or partition, which a coordinator of format 1
// would not see; 3 may name a kept corpus (Kept), whose write-kept stage
// a worker of format 2 has not; 4 may ask for the paragraph pass
// (Params.Paragraphs), whose unit records a worker of format 3 would not
// write; 5 may ask for --shingle-after-strip (Params.ShingleAfterStrip),
// whose map tasks a worker of format 4 would sketch with the whole text;
// 6 has the paragraphs tasks of a job with --against count the earlier
// jobs' unit tables and, with --index, write the job's own (index.UnitTable),
// which a worker of format 5 would skip, counting the job's units alone.
// A coordinator that resumes a job of an
// earlier format runs it in this one (its results of the old shape it
// reads).
const SpecFormat = 6

// CheckFormat refuses, on a worker, a spec of another format than this
// version's: a newer one it would misread; an older one is from an
// earlier version's coordinator, which would misread this version's task
// results.
func (s *Spec) CheckFormat() error {
	switch {
	case s.Format > SpecFormat:
		return fmt.Errorf("job %s: its spec has format %d, and this binary reads formats up to %d: run the same version of neardup as the coordinator", s.Job, s.Format, SpecFormat)
	case s.Format < SpecFormat:
		return fmt.Errorf("job %s: its spec has format %d, from a coordinator of an earlier version, which would misread the results of this binary's tasks (format %d): run the same version of neardup as the coordinator", s.Job, s.Format, SpecFormat)
	}
	return nil
}

// UnmarshalJSON decodes a spec as encoded by encoding/json, or as a
// version before Derived left Params wrote it: its first_chunk and against
// inside params (the job state and the spec file of a job such a version
// began, which this one resumes).
func (s *Spec) UnmarshalJSON(data []byte) error {
	type plain Spec // without this method
	q := plain(*s)  // fields the JSON leaves out keep their values
	if err := json.Unmarshal(data, &q); err != nil {
		return err
	}
	if err := q.Derived.ReadParams(data); err != nil {
		return err
	}
	*s = Spec(q)
	return nil
}
