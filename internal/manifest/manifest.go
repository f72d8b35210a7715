// Package manifest is the one definition of a job's manifest.json: the
// record written at the end of every job (parameters, inputs, counts,
// timings, versions, the largest clusters and the example pairs), and
// how it is encoded, decoded, written and read. The pipeline fills it;
// the report, write-kept and the command line read it.
//
// The JSON is the schema: the fields keep their names, order and
// omitempty, and a manifest written by an earlier version still decodes
// (a field it lacks keeps its zero value).
package manifest

import (
	"time"

	"github.com/neardup/neardup/internal/job"
)

// Manifest is the job's record: parameters, inputs, counts, timings and
// versions. It is written as manifest.json (job.ManifestFile).
type Manifest struct {
	// Status is StatusComplete when every input record was processed or
	// listed as rejected (and _SUCCESS is written), StatusPartial when
	// map tasks failed for good and their chunks are missing.
	Status   string            `json:"status"`
	Job      string            `json:"job"`
	Epoch    string            `json:"epoch"`
	Started  time.Time         `json:"started"`
	Finished time.Time         `json:"finished"`
	Seconds  float64           `json:"seconds"`
	Versions map[string]string `json:"versions"`
	Params   job.Params        `json:"params"`
	// Derived is what the job derived from --against: where its own
	// chunks begin and the earlier jobs it was matched against (keys
	// first_chunk and against, left out for a job matched against none;
	// versions before it left job.Params wrote them in params, see
	// Decode).
	job.Derived
	Curve  *CurveSummary `json:"curve,omitempty"` // MinHash only
	Inputs []job.Input   `json:"inputs"`
	// ChangedInputs are the input files whose size or modification time
	// changed between planning and reading, sorted.
	ChangedInputs []string `json:"changed_inputs,omitempty"`
	// SkippedInputs are the files under input directories, prefixes or
	// patterns that were not read: of no known kind, or not regular files
	// (rejected, and listed in rejects/ too), and the directories passed
	// over whole (dir: the job's output, an earlier job's).
	SkippedInputs []job.Skipped `json:"skipped_inputs"`
	Chunks        int           `json:"chunks"`
	Counts        Counts        `json:"counts"`
	Stages        []StageTiming `json:"stages"`
	Failures      []Failure     `json:"failures"`
	// RejectReasons counts the rejected records by the kind of their
	// reason (see mapper.RejectKind; rejects/ holds each one's whole
	// reason), most frequent first.
	RejectReasons []ReasonCount `json:"reject_reasons"`
	// Histograms of similarity in 20 bins of width 0.05, and of cluster
	// sizes (index i: size i+2; the last bin, all larger).
	VerifiedHist    []int64 `json:"verified_similarity_hist"`
	RejectedHist    []int64 `json:"rejected_similarity_hist"`
	ClusterSizeHist []int64 `json:"cluster_size_hist"`
	// The edges of those bins: similarity bin i holds the similarities
	// edges[i] ≤ s < edges[i+1] (the last bin also s = 1), cluster size
	// bin i the clusters of edges[i] ≤ size < edges[i+1], where a null
	// edge is no bound.
	SimilarityEdges  []float64 `json:"similarity_hist_edges"`
	ClusterSizeEdges []*int64  `json:"cluster_size_hist_edges"`
	// LargestClusters lists the largest clusters, largest first.
	LargestClusters []ClusterSummary `json:"largest_clusters"`
	// BoundedBuckets lists the largest band buckets whose pairs were not
	// all compared (--max-bucket); BoundedClusters the clusters with the
	// most pairs among those whose pairs/ lists only the kept document's
	// pairs (--max-cluster-pairs).
	BoundedBuckets  []job.BoundedBucket `json:"bounded_buckets"`
	BoundedClusters []BoundedCluster    `json:"bounded_clusters"`
	// Scripts counts the documents by script (the script of most of
	// their letters), most documents first: thin ones and the median
	// number of shingles.
	Scripts []job.ScriptSummary `json:"scripts"`
	// Warnings name what a person should look at before dropping documents.
	Warnings []string `json:"warnings"`
	// DuplicateIDExamples are a few ids that several documents of the
	// job have (Counts.DuplicateIDs counts those documents).
	DuplicateIDExamples []string `json:"duplicate_id_examples,omitempty"`
	// Rates are the job's duplicates and the text bytes they remove by
	// host, by input file and by the job of their kept document (see
	// Rates); nil in manifests of earlier versions.
	Rates *Rates `json:"rates,omitempty"`
	// Kept is the corpus the job wrote in its write-kept stage
	// (--write-kept), nil when it wrote none.
	Kept *Kept `json:"kept,omitempty"`
	// Paragraphs is what the paragraph pass found (--paragraphs), nil
	// when it did not run.
	Paragraphs *Paragraphs `json:"paragraphs,omitempty"`
	// StripSet is what the sketches left out (--shingle-after-strip),
	// nil without it.
	StripSet *StripSet `json:"shingle_after_strip,omitempty"`
	// ExamplePairs are the few pairs the report shows side by side
	// (report-pairs.html), chosen from the pairs listed by an
	// ExampleChooser as pairs/ is written.
	ExamplePairs []Example `json:"example_pairs"`

	// written is the counts object as Decode read it (see CountList):
	// nil for a manifest made in memory.
	written []Count
}

// Kept is the kept corpus of a job (--write-kept): its documents but the
// duplicates, in Dir.
type Kept struct {
	Dir    string `json:"dir"`
	Format string `json:"format"`
	// Docs is the documents of the inputs (rows of docs/), Kept those
	// written and Dropped the others, which are Duplicates (the rows of
	// duplicates.parquet); Bytes is the size of the files written.
	Docs       int64      `json:"docs"`
	Kept       int64      `json:"kept"`
	Dropped    int64      `json:"dropped"`
	Duplicates int64      `json:"duplicates"`
	Bytes      int64      `json:"bytes"`
	Files      []KeptFile `json:"files"`
	// Stripped counts the units stripped (--strip-paragraphs) and their
	// bytes; Short the documents it left too short, dropped.
	Stripped      int64 `json:"stripped,omitempty"`
	StrippedBytes int64 `json:"stripped_bytes,omitempty"`
	Short         int64 `json:"short,omitempty"`
}

// StripSet counts the units the documents were sketched without
// (--shingle-after-strip): of the Distinct unit hashes of the job,
// LeftOut are held by MinCount documents or more.
type StripSet struct {
	Unit     string `json:"unit"`
	MinCount int    `json:"min_count"`
	Distinct int64  `json:"distinct"`
	LeftOut  int64  `json:"left_out"`
}

// Paragraphs is what the paragraph pass found: the units (lines or
// paragraphs) cut from the documents, and those held by two documents or
// more, listed in paragraphs/.
type Paragraphs struct {
	// Unit is the kind of unit: line or paragraph.
	Unit string `json:"unit"`
	// Units counts the units cut (stretches of text with a token), and
	// UnitBytes their bytes; Distinct the distinct units (by the hash of
	// their normalised text).
	Units     int64 `json:"units"`
	UnitBytes int64 `json:"unit_bytes"`
	Distinct  int64 `json:"distinct"`
	// Repeated counts the distinct units held by two documents or more;
	// Occurrences their occurrences, RepeatedBytes the bytes of those.
	// ExtraBytes is the bytes of their occurrences outside the first
	// document holding each: what stripping them (keeping the first)
	// would remove. The shares are of the documents' text bytes.
	Repeated      int64   `json:"repeated"`
	Occurrences   int64   `json:"occurrences"`
	RepeatedBytes int64   `json:"repeated_bytes"`
	ExtraBytes    int64   `json:"extra_bytes"`
	RepeatedShare float64 `json:"repeated_share"`
	ExtraShare    float64 `json:"extra_share"`
	// Bounded counts the units held by more than --max-bucket
	// documents of the job, whose rows in paragraphs/ are those of their
	// first max-bucket documents; RowsNotListed the occurrences left out.
	Bounded       int64 `json:"bounded"`
	RowsNotListed int64 `json:"rows_not_listed"`
	// Top are the units held by the most documents, most first.
	Top []TopUnit `json:"top"`
	// Earlier says whose units the counts include beside the job's own,
	// for a job matched against earlier ones (--against); nil otherwise.
	// With it, a unit is repeated when two documents hold it, of this
	// job or of the earlier jobs counted, and the counts above
	// (repeated, occurrences, bytes, shares) are of the job's own
	// occurrences of such units; extra_bytes counts all of those of a
	// unit an earlier job held first.
	Earlier *EarlierUnits `json:"earlier,omitempty"`
	// IndexUnits counts the rows of the unit table written into the
	// job's index (index/units/): its distinct units and those of the
	// earlier jobs counted; 0 without an index.
	IndexUnits int64 `json:"index_units,omitempty"`
}

// EarlierUnits says how the paragraph pass counted the units of the
// earlier jobs (--against), through the unit tables of their indexes.
type EarlierUnits struct {
	// Counted names the earlier jobs whose documents the counts include
	// (the jobs given and those their tables merged), by first chunk.
	Counted []string `json:"counted"`
	// NotCounted are the earlier jobs whose units are not counted, and
	// why: their documents are matched as pairs but hold no unit here.
	NotCounted []job.UnitsNotCounted `json:"not_counted"`
	// Held counts the job's distinct units that a document of an
	// earlier job counted holds too.
	Held int64 `json:"held"`
}

// TopUnit is a unit held by many documents.
type TopUnit struct {
	// Hash is the unit's hash (paragraphs/'s unit_hash).
	Hash int64 `json:"hash"`
	// Docs counts the documents holding it, Occurrences its occurrences.
	Docs        int64 `json:"docs"`
	Occurrences int64 `json:"occurrences"`
	// FirstDoc is the first document of the job holding it, and Offset
	// and Length where it is in that document's text; Sample is the
	// start of its text there ("" when the text could not be read).
	FirstDoc int64  `json:"first_doc"`
	Offset   int64  `json:"offset"`
	Length   int64  `json:"length"`
	Sample   string `json:"sample"`
	// FirstJob names the earlier job (--against) whose document held it
	// first, when one did (paragraphs/' first_job); empty otherwise.
	FirstJob string `json:"first_job,omitempty"`
}

// KeptFile is what the corpus holds of one input file.
type KeptFile struct {
	Input string `json:"input"`
	// Outputs are the files written of it in Kept.Dir: none when every
	// document was dropped.
	Outputs []string `json:"outputs"`
	Docs    int64    `json:"docs"`
	Kept    int64    `json:"kept"`
	Dropped int64    `json:"dropped"`
	Bytes   int64    `json:"bytes"`
	// Short counts the documents dropped because stripping their
	// repeated units (--strip-paragraphs) left them shorter than
	// --min-kept-chars; ShortFile lists them, with the reason.
	Short     int64  `json:"short,omitempty"`
	ShortFile string `json:"short_file,omitempty"`
}

// Rates say where a job's duplicates are: Total over every document,
// Hosts by the host of the document's URL, Files by its input file,
// Earlier by the job of the document kept in its place. Hosts lists the
// TopHosts hosts with the most duplicates (then the most bytes removed,
// then by name), followed, when there are more, by one row named
// OtherHosts that sums the rest; HostCount counts the distinct hosts.
// Past rates.MaxHosts distinct hosts, HostCount is an estimate
// (HostCountEstimated) and each listed host's tallies may fall short of
// its own by up to HostsBound duplicates (and their documents): the
// other hosts' row holds the difference, so every row still sums to
// Total.
// Files lists every input file that had documents, in input order.
// Earlier has a row for the job itself (named ThisJob) and for each
// earlier job (--against, --series) whose documents were kept in place of
// some of this job's, in the order of the job's against list: its Docs
// are that job's documents, its Duplicates this job's documents dropped
// for one of them.
type Rates struct {
	Total     Rate   `json:"total"`
	Hosts     []Rate `json:"hosts"`
	HostCount int64  `json:"host_count"`
	// HostCountEstimated: HostCount is estimated from the hosts' hashes.
	HostCountEstimated bool `json:"host_count_estimated,omitempty"`
	// HostsBound is the most duplicates a listed host's row may lack (0:
	// every row exact).
	HostsBound int64  `json:"hosts_bound,omitempty"`
	Files      []Rate `json:"files"`
	Earlier    []Rate `json:"earlier"`
	// Repeated: the paragraph pass ran (--paragraphs), and every row
	// counts its documents' bytes of text in repeated units.
	Repeated bool `json:"repeated,omitempty"`
}

// Rate is one row of Rates: of Docs documents holding Bytes bytes of
// text, Duplicates are dropped, which hold BytesRemoved bytes.
type Rate struct {
	Name         string `json:"name,omitempty"` // none in Rates.Total
	Docs         int64  `json:"docs"`
	Bytes        int64  `json:"bytes"`
	Duplicates   int64  `json:"duplicates"`
	BytesRemoved int64  `json:"bytes_removed"`
	// RepeatedBytes are the bytes of the documents' text in units (lines
	// or paragraphs) that two documents or more hold, each occurrence
	// counted (with --paragraphs: Rates.Repeated).
	RepeatedBytes int64 `json:"repeated_bytes,omitempty"`
}

// The names of Rates' rows that are no host or job, and the number of
// hosts listed.
const (
	OtherHosts = "(other hosts)"
	NoHost     = "(no host)"
	ThisJob    = "(this job)"
	TopHosts   = 20
)

// The statuses of a finished job.
const (
	StatusComplete = "complete"
	StatusPartial  = "partial"
)

// ReasonCount is how many records were rejected for one kind of reason.
type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int64  `json:"count"`
}

// CurveSummary describes the chosen S-curve.
type CurveSummary struct {
	ApproxThreshold float64 `json:"approx_threshold"`
	Steepest        float64 `json:"steepest"`
	PAtThreshold    float64 `json:"p_at_threshold"`
	PAtThreshold05  float64 `json:"p_at_threshold_plus_0.05"`
}

// Counts are the numbers of every stage.
type Counts struct {
	InputBytes    int64 `json:"input_bytes"`
	TextBytes     int64 `json:"text_bytes"`
	Docs          int64 `json:"docs"`
	Rejected      int64 `json:"rejected"`
	UnreadFiles   int64 `json:"unread_files"`
	UnreadBytes   int64 `json:"unread_bytes"`
	DamagedRanges int64 `json:"damaged_ranges"`
	DamagedBytes  int64 `json:"damaged_bytes"`
	DamagedRows   int64 `json:"damaged_rows"`
	ChangedFiles  int64 `json:"changed_files"`
	Empty         int64 `json:"empty"`
	// Thin counts the documents with 1 to job.ThinShingles-1 shingles.
	Thin         int64 `json:"thin"`
	Shingles     int64 `json:"shingles"`
	BandRecords  int64 `json:"band_records"`
	BandGroups   int64 `json:"band_groups"`
	MaxBandGroup int64 `json:"max_band_group"`
	// CandidateRows counts the rows of candidates/: a pair that collides
	// in several partitions is a row of each. Candidates is its old name,
	// kept for older readers. UniquePairs counts the distinct pairs.
	CandidateRows int64 `json:"candidate_rows"`
	Candidates    int64 `json:"candidates"`
	// Gathered counts the signature records the gather stage sent to
	// verify tasks (a document once per verify task that needs it).
	Gathered       int64 `json:"signatures_gathered"`
	UniquePairs    int64 `json:"candidate_pairs_checked"`
	Prefiltered    int64 `json:"prefiltered"`
	ExactChecked   int64 `json:"exact_checked"`
	SigPassed      int64 `json:"signature_passed"`
	SigPassedExact int64 `json:"signature_passed_exact"`
	Verified       int64 `json:"verified_pairs"`
	ExactGroups    int64 `json:"exact_groups"`
	ExactDups      int64 `json:"exact_duplicates"`
	Pairs          int64 `json:"pairs"`
	// PairsAgainst counts the pairs with a document of an earlier job
	// (--against): pairs_against new-vs-old, pairs - pairs_against
	// new-vs-new.
	PairsAgainst   int64 `json:"pairs_against"`
	BoundedBuckets int64 `json:"bounded_buckets"`
	NotCompared    int64 `json:"pairs_not_compared"`
	BoundedClust   int64 `json:"bounded_clusters"`
	NotListed      int64 `json:"pairs_not_listed"`
	Clusters       int64 `json:"clusters"`
	ClusteredDocs  int64 `json:"clustered_docs"`
	Duplicates     int64 `json:"duplicates"`
	NearDups       int64 `json:"near_duplicates"`
	LargestCluster int64 `json:"largest_cluster"`
	FailedChunks   int64 `json:"failed_chunks"`
	// DuplicateIDs counts the documents whose id an earlier document of
	// the job (by ordinal) has too: documents minus distinct ids.
	DuplicateIDs int64 `json:"duplicate_ids"`
}

// StageTiming is how long a stage took.
type StageTiming struct {
	Name    string  `json:"name"`
	Tasks   int     `json:"tasks"`
	Failed  int     `json:"failed"`
	Seconds float64 `json:"seconds"`
}

// Failure is what is recorded of a task that failed for good: in the
// job's state while it runs, and in the manifest.
type Failure struct {
	Stage    string `json:"stage"`
	Index    int    `json:"index"`
	Attempts int    `json:"attempts"`
	Error    string `json:"error"`
}

// ClusterSummary describes one of the largest clusters for the report.
type ClusterSummary struct {
	Cluster int64    `json:"cluster"`
	Size    int      `json:"size"`
	KeptID  string   `json:"kept_id"`
	KeptURL string   `json:"kept_url"`
	Members []string `json:"member_ids"` // the first few, by ordinal
}

// BoundedCluster is a cluster whose complete pair list exceeds
// MaxClusterPairs: pairs/ lists only the pairs of its kept document.
type BoundedCluster struct {
	Cluster   int64  `json:"cluster"`
	Size      int64  `json:"size"`
	KeptID    string `json:"kept_id"`
	Pairs     int64  `json:"pairs"`      // its complete pair list
	Listed    int64  `json:"listed"`     // the pairs of its kept document
	NotListed int64  `json:"not_listed"` // Pairs - Listed
}

// Example is one example pair as manifest.json lists it
// (example_pairs): its pairs/ row and why it was chosen.
type Example struct {
	A             int64   `json:"a"`
	B             int64   `json:"b"`
	AID           string  `json:"a_id"`
	BID           string  `json:"b_id"`
	Similarity    float64 `json:"similarity"`
	Estimate      float64 `json:"estimate"`
	Method        string  `json:"method"`
	Hamming       *int32  `json:"hamming,omitempty"`
	BandsCollided int32   `json:"bands_collided"`
	FirstBand     int32   `json:"first_band"`
	Why           string  `json:"why"`
}
