package pipeline

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/neardup/neardup/internal/pqfile"
)

// The stages of a job, in order.
const (
	StageMap    = "map"
	StageReduce = "reduce"
	StageVerify = "verify"
)

// Task is the message that asks a worker to run one task. It is small: the
// worker reads everything else from the job's spec and files.
type Task struct {
	Job   string `json:"job"`
	Run   string `json:"run"`
	Stage string `json:"stage"`
	Index int    `json:"index"`
}

func (t Task) id() string { return fmt.Sprintf("%s.%s.%06d", t.Run, t.Stage, t.Index) }

// KV keys of the job-state bucket.
const specKey = "spec"

// Task state keys start with the run, so that a late result of an earlier
// run of the same job can never be taken for one of this run.
func stageKeys(run, stage string) string { return run + "." + stage }
func doneKey(run, stage string, i int) string {
	return fmt.Sprintf("%s.done.%06d", stageKeys(run, stage), i)
}
func failedKey(run, stage string, i int) string {
	return fmt.Sprintf("%s.failed.%06d", stageKeys(run, stage), i)
}

// MapResult is what a map task reports.
type MapResult struct {
	Chunk       int                 `json:"chunk"`
	Docs        int64               `json:"docs"`
	Empty       int64               `json:"empty"`
	Rejected    int64               `json:"rejected"`
	TextBytes   int64               `json:"text_bytes"`
	InputBytes  int64               `json:"input_bytes"`
	Shingles    int64               `json:"shingles"`
	BandRecords int64               `json:"band_records"`
	DocFile     pqfile.Info         `json:"doc_file"`
	SigFile     pqfile.Info         `json:"sig_file"`
	RejectFile  *pqfile.Info        `json:"reject_file,omitempty"`
	BandFiles   map[int]pqfile.Info `json:"band_files"`
	Seconds     float64             `json:"seconds"`
}

// ReduceResult is what a reduce task reports.
type ReduceResult struct {
	Part       int   `json:"part"`
	Records    int64 `json:"records"`
	Groups     int64 `json:"groups"` // buckets
	MaxGroup   int64 `json:"max_group"`
	Candidates int64 `json:"candidates"`
	// ExactClaims counts the documents claimed for the exact-duplicate
	// group of another (its representative).
	ExactClaims int64 `json:"exact_claims"`
	// BoundedBuckets counts the buckets of more than MaxBucket
	// representatives, and PairsNotCompared the pairs of theirs that were
	// not candidates; Bounded lists the largest of them.
	BoundedBuckets   int64               `json:"bounded_buckets"`
	PairsNotCompared int64               `json:"pairs_not_compared"`
	Bounded          []BoundedBucket     `json:"bounded,omitempty"`
	File             pqfile.Info         `json:"file"`
	EdgeFiles        map[int]pqfile.Info `json:"edge_files"`
	Seconds          float64             `json:"seconds"`
}

// BoundedBucket describes a bucket too large to compare all its pairs.
type BoundedBucket struct {
	Band            int32 `json:"band"`
	Key             int64 `json:"key"`
	Docs            int64 `json:"docs"`
	Representatives int64 `json:"representatives"`
	Hubs            int64 `json:"hubs"` // each representative was compared with this many smallest ones
	FirstDoc        int64 `json:"first_doc"`
}

// boundedListed is how many bounded buckets a result and the manifest list.
const boundedListed = 10

// noteBounded keeps the boundedListed largest bounded buckets, largest
// first, ties by (band, key).
func (r *ReduceResult) noteBounded(b BoundedBucket) {
	r.Bounded = insertBounded(r.Bounded, b)
}

func insertBounded(list []BoundedBucket, b BoundedBucket) []BoundedBucket {
	list = append(list, b)
	slices.SortFunc(list, func(x, y BoundedBucket) int {
		if c := cmp.Compare(y.Docs, x.Docs); c != 0 {
			return c
		}
		if c := cmp.Compare(x.Band, y.Band); c != 0 {
			return c
		}
		return cmp.Compare(x.Key, y.Key)
	})
	return list[:min(len(list), boundedListed)]
}

// VerifyResult is what a verify task reports.
type VerifyResult struct {
	Chunk int `json:"chunk"`
	// Checked counts the distinct candidate pairs, Prefiltered those
	// rejected by their signatures alone, Exact those whose exact
	// similarity was computed, Verified those that passed.
	Checked      int64        `json:"checked"`
	Prefiltered  int64        `json:"prefiltered"`
	Exact        int64        `json:"exact_checked"`
	Verified     int64        `json:"verified"`
	ExactMembers int64        `json:"exact_members"` // confirmed claims
	MembersFile  *pqfile.Info `json:"members_file,omitempty"`
	// With exact verification: the pairs the signatures alone would have
	// passed, and how many of those the exact Jaccard confirmed.
	SigPassed      int64        `json:"signature_passed"`
	SigPassedExact int64        `json:"signature_passed_exact"`
	File           *pqfile.Info `json:"file,omitempty"`
	// Histograms of the similarity of verified pairs and of the candidates
	// that failed verification, in bins of width 1/len.
	VerifiedHist []int64 `json:"verified_hist"`
	RejectedHist []int64 `json:"rejected_hist"`
	Seconds      float64 `json:"seconds"`
}

// histBins is the number of similarity histogram bins.
const histBins = 20

// Failure is what is recorded of a task that failed for good.
type Failure struct {
	Stage    string `json:"stage"`
	Index    int    `json:"index"`
	Attempts int    `json:"attempts"`
	Error    string `json:"error"`
}
