package job

import (
	"cmp"
	"slices"

	"github.com/neardup/neardup/internal/fileinfo"
)

// MapResult is what a map task reports.
type MapResult struct {
	Chunk      int   `json:"chunk"`
	Docs       int64 `json:"docs"`
	Empty      int64 `json:"empty"`
	Rejected   int64 `json:"rejected"`
	TextBytes  int64 `json:"text_bytes"`
	InputBytes int64 `json:"input_bytes"`
	// UnreadFiles counts the pieces of input that could not be read (or
	// not to their end), UnreadBytes their bytes: listed in rejects/ as
	// "unreadable", their documents are missing.
	UnreadFiles int64 `json:"unread_files,omitempty"`
	UnreadBytes int64 `json:"unread_bytes,omitempty"`
	// DamagedRanges counts the damaged ranges the readers skipped: WARC/WET
	// ranges skipped to the next record (each lost the record it began
	// with, as far as can be known) and Parquet row groups whose pages
	// could not be read to their end; DamagedBytes their bytes,
	// DamagedRows the records known to be lost in them (Parquet rows).
	DamagedRanges int64 `json:"damaged_ranges,omitempty"`
	DamagedBytes  int64 `json:"damaged_bytes,omitempty"`
	DamagedRows   int64 `json:"damaged_rows,omitempty"`
	// ChangedFiles names the input files whose size or modification time
	// differ from the plan's: they were read as they are now, in the
	// pieces planned for them.
	ChangedFiles []string `json:"changed_files,omitempty"`
	// RejectReasons counts the rejects by the kind of their reason (see
	// mapper.RejectKind).
	RejectReasons map[string]int64 `json:"reject_reasons,omitempty"`
	Shingles      int64            `json:"shingles"`
	// Scripts counts the documents by their script
	// (shingle.DominantScript's name), with their shingle counts.
	Scripts     map[string]*ScriptStats `json:"scripts,omitempty"`
	BandRecords int64                   `json:"band_records"`
	// KeepUnranked counts the documents the job's --keep rule ranks by a
	// field that have no usable value of it (ranked after those that
	// have one), and KeepProblem says why for the first of them, naming
	// its file and offset.
	KeepUnranked int64         `json:"keep_unranked,omitempty"`
	KeepProblem  string        `json:"keep_problem,omitempty"`
	DocFile      fileinfo.Info `json:"doc_file"`
	// SigFile is the chunk's record file: its text store (TextFile), or
	// in the index of an earlier job made before index version 3, its
	// signature file (package sigfile).
	SigFile fileinfo.Info `json:"sig_file"`
	// SetFile is the chunk's set file (SetWorkFile) in a job with
	// GatherSets: the records of SigFile's documents as a signature file
	// holds them (package sigfile), for verify. Read by record, each with
	// its checksum, never whole: its Checksum is 0 (fileinfo.NewCounter).
	SetFile    *fileinfo.Info `json:"set_file,omitempty"`
	RejectFile *fileinfo.Info `json:"reject_file,omitempty"`
	// RatesFile is the chunk's facts file (RatesWorkFile), which the
	// rates pass at the job's end reads instead of DocFile; nil for a
	// chunk mapped by a build that wrote none.
	RatesFile *fileinfo.Info `json:"rates_file,omitempty"`
	// BandFiles and BandRuns are a chunk's band files in the layout of
	// index versions 1 and 2 (BandFile, and the JSON file listing its
	// later runs' files by partition): what Reduce reads of an earlier
	// job's index of that version.
	BandFiles map[int]fileinfo.Info `json:"band_files"`
	BandRuns  *fileinfo.Info        `json:"band_runs,omitempty"`
	// Dropped is, for a chunk of an earlier job's index, the list of its
	// documents that job dropped; nil when the index does not record it
	// (made before it did).
	Dropped *DroppedList `json:"dropped,omitempty"`
	// BandRunFiles are the chunk's band run files (BandRunWorkFile), one
	// per run, each holding every partition's records: what the map
	// stage writes now, instead of BandFiles and BandRuns.
	BandRunFiles []fileinfo.Info `json:"band_run_files,omitempty"`
	// UnitRunFiles are the chunk's unit run files (UnitRunWorkFile) of
	// the paragraph pass; Units counts the units cut from its documents,
	// UnitBytes their bytes.
	UnitRunFiles []fileinfo.Info `json:"unit_run_files,omitempty"`
	Units        int64           `json:"units,omitempty"`
	UnitBytes    int64           `json:"unit_bytes,omitempty"`
	// IDRunFiles are the chunk's id run files (IDRunWorkFile): its
	// documents' ids, hashed, for the reduce tasks to count those that
	// share one.
	IDRunFiles []fileinfo.Info `json:"id_run_files,omitempty"`
	Seconds    float64         `json:"seconds"`
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
	BoundedBuckets   int64           `json:"bounded_buckets"`
	PairsNotCompared int64           `json:"pairs_not_compared"`
	Bounded          []BoundedBucket `json:"bounded,omitempty"`
	File             fileinfo.Info   `json:"file"`
	// EdgeFiles holds, by chunk, the range of EdgeFile(Part) holding the
	// candidates and claims whose first document is in the chunk: the
	// verify task's input. RequestFiles holds, by chunk, the range of
	// RequestFile(Part) that lists which of the chunk's documents
	// (signatures and shingle sets) the verify task of which chunk
	// needs: the gather stage's input. A reduce task's result leaves
	// both out (partitions × chunks entries): its Routes say the same.
	EdgeFiles    map[int]fileinfo.Info `json:"edge_files,omitempty"`
	RequestFiles map[int]fileinfo.Info `json:"request_files,omitempty"`
	Seconds      float64               `json:"seconds"`
}

// ReduceTaskResult is what a reduce task reports: the results of its
// partitions, First to Last, and the bands/ file it wrote of them.
type ReduceTaskResult struct {
	First int            `json:"first"`
	Last  int            `json:"last"`
	Parts []ReduceResult `json:"parts"`
	Bands fileinfo.Info  `json:"bands"`
	// Routes are the ranges of its partitions' edge and request files by
	// chunk (two slots a partition, in the order of Parts: its
	// EdgeFile, then its RequestFile); nil if it wrote none. A result of
	// an earlier version has none, but ranges in Parts.
	Routes *Routes `json:"routes,omitempty"`
	// DuplicateIDs counts the documents of its partitions' ids that
	// share their id with an earlier document (by ordinal) of the job;
	// DuplicateIDDocs names a few of them, the first of their ids.
	DuplicateIDs    int64   `json:"duplicate_ids,omitempty"`
	DuplicateIDDocs []int64 `json:"duplicate_id_docs,omitempty"`
}

// GatherResult is what a gather task reports: it read its chunk's
// signature file once, in order, and wrote the records each verify task
// asked of it to GatherFile(Chunk), grouped by that task's chunk.
type GatherResult struct {
	Chunk int `json:"chunk"`
	// Requests counts the (document, verify task) requests, Records the
	// distinct documents read.
	Requests int64 `json:"requests"`
	Records  int64 `json:"records"`
	// Ranges holds, by the chunk of the verify task, its range of the
	// gather file. A gather task's result leaves it out (chunks entries):
	// its Routes say the same, with one slot, GatherFile(Chunk).
	Ranges  map[int]fileinfo.Info `json:"ranges,omitempty"`
	Routes  *Routes               `json:"routes,omitempty"`
	Seconds float64               `json:"seconds"`
}

// Routes describes a task's route table (RouteFile, or a cluster task's
// file), which says where, in the files the task wrote, its rows for
// each key are: for a key (a chunk, a partition), a range of each slot's
// file, or none. A stage whose tasks each write rows for every chunk or
// partition (partitions × chunks in all) reports them so: the
// coordinator reads the tables a window of keys at a time, to give each
// task of the next stage its column (see stage.Transpose), instead of
// holding every result's ranges at once. The layout is workfile's
// (WriteRoutes).
type Routes struct {
	// File is the table: its name, size and checksum; Rows is Keys.
	File fileinfo.Info `json:"file"`
	// Keys is one past the largest key with a range.
	Keys int `json:"keys"`
	// Slots are the files the ranges are of, each key's in this order.
	Slots []string `json:"slots"`
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
const BoundedListed = 10

// NoteBounded keeps the boundedListed largest bounded buckets, largest
// first, ties by (band, key).
func (r *ReduceResult) NoteBounded(b BoundedBucket) {
	r.Bounded = InsertBounded(r.Bounded, b)
}

func InsertBounded(list []BoundedBucket, b BoundedBucket) []BoundedBucket {
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
	return list[:min(len(list), BoundedListed)]
}

// VerifyResult is what a verify task reports.
type VerifyResult struct {
	Chunk int `json:"chunk"`
	// Checked counts the distinct candidate pairs, Prefiltered those
	// rejected by their signatures alone, Exact those whose exact
	// similarity was computed, Verified those that passed.
	Checked      int64          `json:"checked"`
	Prefiltered  int64          `json:"prefiltered"`
	Exact        int64          `json:"exact_checked"`
	Verified     int64          `json:"verified"`
	ExactMembers int64          `json:"exact_members"` // confirmed claims
	MembersFile  *fileinfo.Info `json:"members_file,omitempty"`
	// With exact verification: the pairs the signatures alone would have
	// passed, and how many of those the exact Jaccard confirmed.
	SigPassed      int64          `json:"signature_passed"`
	SigPassedExact int64          `json:"signature_passed_exact"`
	File           *fileinfo.Info `json:"file,omitempty"`
	// Histograms of the similarity of verified pairs and of the candidates
	// that failed verification, in bins of width 1/len.
	VerifiedHist []int64 `json:"verified_hist"`
	RejectedHist []int64 `json:"rejected_hist"`
	// Loads counts the documents the task read and decoded (a text
	// store's sketched again): a document again when it had left the
	// task's cache, or when a pair needed the shingle set its cached
	// entry had dropped.
	Loads   int64   `json:"loads,omitempty"`
	Seconds float64 `json:"seconds"`
}

// HistBins is the number of similarity histogram bins: bin i holds the
// similarities s with i ≤ HistBins·s < i+1, the last bin also s = 1.
const HistBins = 20

// HistBin is the similarity histogram bin of s: the i with
// histEdge(i) ≤ s < histEdge(i+1), the last bin also s = 1 (s·HistBins
// alone rounds a few similarities just below an edge up to it).
func HistBin(s float64) int {
	i := max(0, min(int(s*HistBins), HistBins-1))
	switch {
	case s < histEdge(i) && i > 0:
		i--
	case s >= histEdge(i+1) && i < HistBins-1:
		i++
	}
	return i
}

// histEdge is edge i of the similarity histogram's bins.
func histEdge(i int) float64 { return float64(i) / HistBins }

// HistEdges are the HistBins+1 edges of the similarity histogram's bins
// (see HistBin): 0, 0.05, ... 1.
func HistEdges() []float64 {
	edges := make([]float64, HistBins+1)
	for i := range edges {
		edges[i] = histEdge(i)
	}
	return edges
}

// DroppedList is what an index records of a chunk's documents its job
// dropped: Docs rows of duplicates.parquet from row First of File
// (DroppedIndexFile, the job's; in indexes of earlier builds the chunk's
// own DroppedFile, First 0), File nil when it dropped none.
type DroppedList struct {
	File  *fileinfo.Info `json:"file,omitempty"`
	Docs  int64          `json:"docs"`
	First int64          `json:"first,omitempty"`
}

// NoteUnranked counts a document without a value to rank by, and keeps
// why for the first.
func (m *MapResult) NoteUnranked(why string) {
	m.KeepUnranked++
	if m.KeepProblem == "" {
		m.KeepProblem = why
	}
}
