package pipeline

import (
	"fmt"

	"github.com/neardup/neardup/pkg/report"
)

// The names of a job's files, relative to the output directory.
const (
	workDir        = "_work"
	specFile       = workDir + "/job.json"
	planFile       = workDir + "/plan.json"
	mapStageFile   = workDir + "/stage-map.json"
	reduceStgFile  = workDir + "/stage-reduce.json"
	natsDir        = workDir + "/nats"
	successFile    = "_SUCCESS"
	lockFile       = ".neardup.lock" // held by the running coordinator
	manifestFile   = "manifest.json"
	clustersFile   = "clusters.parquet"
	duplicatesFile = "duplicates.parquet"
	exactFile      = "exact.parquet"
	docsDir        = "docs"
	bandsDir       = "bands"
	candidatesDir  = "candidates"
	pairsDir       = "pairs"
	rejectsDir     = "rejects"
)

// outputNames are what --overwrite removes.
func outputNames() []string {
	return []string{successFile, manifestFile, clustersFile, duplicatesFile, exactFile,
		report.HTMLFile, report.SCurveFile, report.SimilarityFile, report.ClustersFile, report.StagesFile,
		bandsDir, candidatesDir, pairsDir, docsDir, rejectsDir, workDir}
}

func bandFile(part, chunk int) string {
	return fmt.Sprintf("%s/part=%05d/chunk-%06d.parquet", bandsDir, part, chunk)
}
func docFile(chunk int) string    { return fmt.Sprintf("%s/chunk-%06d.parquet", docsDir, chunk) }
func rejectFile(chunk int) string { return fmt.Sprintf("%s/chunk-%06d.parquet", rejectsDir, chunk) }
func sigFile(chunk int) string    { return fmt.Sprintf("%s/sigs/chunk-%06d.sig", workDir, chunk) }
func candidateFile(part int) string {
	return fmt.Sprintf("%s/part=%05d.parquet", candidatesDir, part)
}
func edgeFile(part, chunk int) string {
	return fmt.Sprintf("%s/edges/part=%05d/chunk-%06d.edges", workDir, part, chunk)
}
func pairFile(chunk int) string { return fmt.Sprintf("%s/chunk-%06d.parquet", pairsDir, chunk) }
func verifiedFile(chunk int) string {
	return fmt.Sprintf("%s/verified/chunk-%06d.parquet", workDir, chunk)
}
func membersFile(chunk int) string {
	return fmt.Sprintf("%s/members/chunk-%06d.parquet", workDir, chunk)
}

// chunkOf is the chunk of a document ordinal.
func chunkOf(doc int64) int { return int(uint64(doc) >> 32) }

// ordinal is the stable number of the i-th document of a chunk.
func ordinal(chunk, i int) int64 { return int64(uint64(chunk)<<32 | uint64(uint32(i))) }
