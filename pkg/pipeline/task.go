package pipeline

import (
	"fmt"

	"github.com/neardup/neardup/pkg/pqfile"
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
	Part       int                 `json:"part"`
	Records    int64               `json:"records"`
	Groups     int64               `json:"groups"`
	MaxGroup   int64               `json:"max_group"`
	Candidates int64               `json:"candidates"`
	File       pqfile.Info         `json:"file"`
	EdgeFiles  map[int]pqfile.Info `json:"edge_files"`
	Seconds    float64             `json:"seconds"`
}

// VerifyResult is what a verify task reports.
type VerifyResult struct {
	Chunk    int   `json:"chunk"`
	Checked  int64 `json:"checked"`
	Verified int64 `json:"verified"`
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
