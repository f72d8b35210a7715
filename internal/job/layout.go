package job

import (
	"fmt"
)

// The names of a job's files, relative to the output directory.
const (
	WorkDir      = "_work"
	SpecFile     = WorkDir + "/job.json"
	PlanFile     = WorkDir + "/plan.json"
	MapStageFile = WorkDir + "/stage-map.json"
	NATSDir      = WorkDir + "/nats"
	// WorkDoneFile, written just before SuccessFile (or PartialFile) when
	// the work area is not kept, says the work area is to be removed once
	// the job is finished, and what else goes with it: a later command
	// that finds the job finished and this file removes them (a process
	// stopped between the marker and the removal leaves them).
	WorkDoneFile   = WorkDir + "/REMOVE-AFTER-SUCCESS"
	SuccessFile    = "_SUCCESS"
	PartialFile    = "_PARTIAL"      // a partial result accepted with --allow-partial
	LockFile       = ".neardup.lock" // held by the running coordinator
	ManifestFile   = "manifest.json"
	ClustersFile   = "clusters.parquet"
	DuplicatesFile = "duplicates.parquet"
	ExactFile      = "exact.parquet"
	DocsDir        = "docs"
	BandsDir       = "bands"
	CandidatesDir  = "candidates"
	PairsDir       = "pairs"
	RejectsDir     = "rejects"
	// IndexDir holds what later jobs need to match against this one
	// (--against) and what query reads: see package index.
	IndexDir = "index"
	// IndexFile describes the index; written last, it marks it complete.
	IndexFile = IndexDir + "/index.json"
)

// BandFile names a chunk's band records in a partition in the layout of
// index versions 1 and 2 (still read; see package index).
func BandFile(part, chunk int) string {
	return fmt.Sprintf("%s/part=%05d/chunk-%06d.parquet", BandsDir, part, chunk)
}

// BandRunWorkFile holds run r of a chunk's band records for every
// partition, in the work area (layout 3: see stage's band run files);
// the reduce tasks read it and write bands/ (ReduceBandFile).
func BandRunWorkFile(chunk, run int) string {
	return fmt.Sprintf("%s/chunk-%06d-run%04d.bnd", BandRunsDir, chunk, run)
}

// BandRunsDir holds the band run files (BandRunWorkFile) and the id run
// files (IDRunWorkFile).
const BandRunsDir = WorkDir + "/bandruns"

// IDRunWorkFile holds run r of a chunk's id records, in the format of a
// band run file: a hash of each document's id, by partition, from which
// the reduce tasks count the documents that share an id.
func IDRunWorkFile(chunk, run int) string {
	return fmt.Sprintf("%s/chunk-%06d-run%04d.ids", BandRunsDir, chunk, run)
}

// ReduceBandFile holds the band records of partitions first to last,
// written by one reduce task (layout 3): a row group per partition.
func ReduceBandFile(first, last int) string {
	return fmt.Sprintf("%s/parts-%05d-%05d.parquet", BandsDir, first, last)
}

// UnitRunsDir holds the unit run files of the paragraph pass
// (UnitRunWorkFile).
const UnitRunsDir = WorkDir + "/unitruns"

// UnitRunWorkFile holds run r of a chunk's unit records (--paragraphs),
// in the format of a band run file: a record for every unit of every
// document, its hash the key, by partition; the paragraphs tasks read it
// and write paragraphs/ (ParagraphFile).
func UnitRunWorkFile(chunk, run int) string {
	return fmt.Sprintf("%s/chunk-%06d-run%04d.units", UnitRunsDir, chunk, run)
}

// UnitDocsDir holds, for each paragraphs task, the bytes of text in
// repeated units of every document holding some (UnitDocsWorkFile).
const UnitDocsDir = WorkDir + "/unitdocs"

// UnitDocsWorkFile holds the repeated bytes by document (doc, bytes;
// sorted by doc) of the units in partitions first to last, written by
// one paragraphs task; the job's end sums them by host and input file
// (the manifest's rates).
func UnitDocsWorkFile(first, last int) string {
	return fmt.Sprintf("%s/parts-%05d-%05d.parquet", UnitDocsDir, first, last)
}

// DocBytes is a row of a UnitDocsWorkFile: a document's bytes of text
// in the repeated units of the file's partitions (a unit held by two
// documents or more, each occurrence counted).
type DocBytes struct {
	Doc   int64 `parquet:"doc"`
	Bytes int64 `parquet:"bytes"`
}

// StripDir holds the work files of --shingle-after-strip: kept until
// verify, which sketches documents again, has run (the paragraph pass
// removes UnitRunsDir after its own stage).
const StripDir = WorkDir + "/strip"

// StripUnitRunWorkFile holds run r of a chunk's unit records written by
// the strip-units stage (--shingle-after-strip), as UnitRunWorkFile.
func StripUnitRunWorkFile(chunk, run int) string {
	return fmt.Sprintf("%s/chunk-%06d-run%04d.units", StripDir, chunk, run)
}

// StripSetWorkFile holds the hashes of the units held by
// --shingle-after-strip documents or more, of partitions first to last,
// written by one strip-count task (workfile.WriteHashes).
func StripSetWorkFile(first, last int) string {
	return fmt.Sprintf("%s/parts-%05d-%05d.hashes", StripDir, first, last)
}

// StripSetList lists the StripSetWorkFile files of the job (their
// fileinfo.Info, JSON): the map and verify tasks of a job with
// --shingle-after-strip read it.
const StripSetList = StripDir + "/set.json"

// ParagraphsDir holds the repeated units' occurrences (--paragraphs).
const ParagraphsDir = "paragraphs"

// ParagraphFile holds the occurrences of the repeated units of
// partitions first to last, written by one paragraphs task.
func ParagraphFile(first, last int) string {
	return fmt.Sprintf("%s/parts-%05d-%05d.parquet", ParagraphsDir, first, last)
}

// UnitTableDir holds an index's unit table (--paragraphs with --index):
// every distinct unit hash of the documents it counts, with their number
// and the first of them (records.Unit), a file per paragraphs task.
const UnitTableDir = IndexDir + "/units"

// UnitTableFile holds the unit table's rows of partitions first to last,
// written by one paragraphs task (or by index compaction).
func UnitTableFile(first, last int) string {
	return fmt.Sprintf("%s/parts-%05d-%05d.parquet", UnitTableDir, first, last)
}

func DocFile(chunk int) string    { return fmt.Sprintf("%s/chunk-%06d.parquet", DocsDir, chunk) }
func RejectFile(chunk int) string { return fmt.Sprintf("%s/chunk-%06d.parquet", RejectsDir, chunk) }

// PlannedRejectFile lists the files found under the inputs at planning
// that are not regular files (Skipped.Rejected): named pipes, sockets,
// devices. Its rows have chunk -1 and offset -1.
const PlannedRejectFile = RejectsDir + "/planned.parquet"

// TextFile names a chunk's text store (package textstore): its
// documents' ids, urls and texts, from which verify and query sketch them
// again. Indexes before version 3 held signature files instead
// (index/sigs/chunk-CCCCCC.sig, package sigfile), named in index.json.
func TextFile(chunk int) string { return fmt.Sprintf("%s/text/chunk-%06d.txz", IndexDir, chunk) }

// DroppedIndexFile lists the documents the job dropped: a copy of
// duplicates.parquet, whose rows are in document order (DroppedList says
// where each chunk's rows are; a compacted index's, one row group a
// chunk): what a later job matched against the index learns of
// which earlier documents were never published. One file for the job, not
// one a chunk: a chunk's list is small, and index/ keeps to large files.
const DroppedIndexFile = IndexDir + "/dropped.parquet"

// DroppedFile is a chunk's list of the documents its job dropped in the
// indexes of the builds before DroppedIndexFile (one file a chunk): still
// read, never written.
func DroppedFile(chunk int) string {
	return fmt.Sprintf("%s/dropped/chunk-%06d.parquet", IndexDir, chunk)
}
func CandidateFile(part int) string {
	return fmt.Sprintf("%s/part=%05d.parquet", CandidatesDir, part)
}
func EdgeFile(part int) string {
	return fmt.Sprintf("%s/edges/part=%05d.edges", WorkDir, part)
}

// TaskInputFile lists what task i of a kind reads of the results of the
// tasks before it: its column of their results, written by the coordinator
// before the tasks run, so that no task reads every result of a stage
// (chunks × partitions entries). Kinds: InputsBands (by reduce task: its
// partitions and the band run files), InputsEdges (by chunk: the edge and
// request ranges), InputsGathered (by chunk: the gathered signatures).
//
// InputsReduce names the list of a partition of an index of version 1 or
// 2 (index/parts/: every chunk's band files in the partition), which
// query and a later job's reduce tasks still read.
func TaskInputFile(kind string, i int) string {
	if kind == InputsReduce {
		return fmt.Sprintf("%s/parts/part=%05d.json", IndexDir, i)
	}
	return fmt.Sprintf("%s/inputs/%s/%06d.json", WorkDir, kind, i)
}

// The kinds of TaskInputFile.
const (
	InputsReduce   = "reduce"
	InputsEdges    = "edges"
	InputsGathered = "gathered"
	// InputsBands (by reduce task) lists the partitions of a reduce task
	// and the band run files it reads (layout 3).
	InputsBands = "bands"
	// InputsKept (by chunk) lists the input files a task of the
	// write-kept stage writes, the docs/ files of their documents and
	// the ordinals of the duplicates among them.
	InputsKept = "kept"
	// InputsUnits (by paragraphs task) lists the partitions of a task of
	// the paragraph pass, the unit run files it reads and the docs/
	// files that name their documents.
	InputsUnits = "units"
	// InputsStrip (by strip-count task) lists the partitions of a task
	// counting the units of --shingle-after-strip and the unit run files
	// it reads.
	InputsStrip = "strip"
)

// ResultFile holds the result of a task too large for the job's NATS
// bucket (see pipeline's storeResult).
func ResultFile(epoch, stage string, task int) string {
	return fmt.Sprintf("%s/results/%s/%s-%06d.json", WorkDir, epoch, stage, task)
}

// RouteFile holds the route table of task i of a stage (Routes): where,
// in the files the task wrote, its rows for each chunk are.
func RouteFile(stage string, i int) string {
	return fmt.Sprintf("%s/routes/%s-%06d.routes", WorkDir, stage, i)
}

// RequestsDir and GatherDir hold what the gather stage reads and
// writes for the verify tasks: once these are done, nothing reads them.
const (
	RequestsDir = WorkDir + "/requests"
	GatherDir   = WorkDir + "/gather"
)

// RequestFile lists, by chunk, the documents a reduce partition's
// candidates need verified, and for which verify task.
func RequestFile(part int) string {
	return fmt.Sprintf("%s/part=%05d.req", RequestsDir, part)
}

// RatesDir holds the chunks' facts files (RatesWorkFile).
const RatesDir = WorkDir + "/rates"

// RatesWorkFile holds what the rates pass at the job's end counts of each
// document of a chunk (the host of its URL, its input file and its bytes
// of text), written by the chunk's map task (package rates).
func RatesWorkFile(chunk int) string { return fmt.Sprintf("%s/chunk-%06d.facts", RatesDir, chunk) }

// SetsDir holds the chunks' set files (GatherSets): each document's
// record for verification, written by map, read by verify, removed once
// verify is done.
const SetsDir = WorkDir + "/sets"

// SetWorkFile is the set file of a chunk (package sigfile's layout).
func SetWorkFile(chunk int) string { return fmt.Sprintf("%s/chunk-%06d.sig", SetsDir, chunk) }

// GatherFile holds the signature records a chunk's gather task read for
// the verify tasks, grouped by verify task.
func GatherFile(chunk int) string {
	return fmt.Sprintf("%s/chunk-%06d.sigs", GatherDir, chunk)
}
func PairFile(chunk int) string { return fmt.Sprintf("%s/chunk-%06d.parquet", PairsDir, chunk) }

// VerifiedFile and MembersFile hold a verify task's verified pairs and
// confirmed exact-group members for the cluster stage, in a format of
// their own (see stage's verifiedrun.go).
func VerifiedFile(chunk int) string {
	return fmt.Sprintf("%s/verified/chunk-%06d.pairs", WorkDir, chunk)
}
func MembersFile(chunk int) string {
	return fmt.Sprintf("%s/members/chunk-%06d.members", WorkDir, chunk)
}

// ClusterDir holds the cluster stage's steps and what their tasks pass on.
const ClusterDir = WorkDir + "/cluster"

// ClusterStepFile describes one step of the cluster stage to its tasks.
func ClusterStepFile(step string) string { return fmt.Sprintf("%s/%s.json", ClusterDir, step) }

// ClusterRunsFile lists what every task of the step before wrote for one
// partition: the column of the runs its task reads.
func ClusterRunsFile(step string, part int) string {
	return fmt.Sprintf("%s/%s/runs-%05d.json", ClusterDir, step, part)
}

// ClusterTaskFile is a file written by a task of a cluster step; name
// tells the files of one task apart.
func ClusterTaskFile(step string, task int, name string) string {
	return fmt.Sprintf("%s/%s/%05d.%s", ClusterDir, step, task, name)
}

// chunkOf is the chunk of a document ordinal.
func ChunkOf(doc int64) int { return int(uint64(doc) >> 32) }

// ordinal is the stable number of the i-th document of a chunk.
func Ordinal(chunk, i int) int64 { return int64(uint64(chunk)<<32 | uint64(uint32(i))) }

// SlotOf is the place of a document in its chunk, the i of Ordinal: its
// slot in the chunk's record file.
func SlotOf(doc int64) int { return int(uint32(doc)) }
