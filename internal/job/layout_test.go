package job

import (
	"math"
	"testing"
)

// TestLayoutNames pins the names of a job's files: outputs that users
// query, and work files that workers of one job must agree on.
func TestLayoutNames(t *testing.T) {
	tests := []struct{ got, want string }{
		{BandFile(3, 12), "bands/part=00003/chunk-000012.parquet"},
		{BandFile(99999, 0), "bands/part=99999/chunk-000000.parquet"},
		{DocFile(7), "docs/chunk-000007.parquet"},
		{RejectFile(1234567), "rejects/chunk-1234567.parquet"},
		{TextFile(0), "index/text/chunk-000000.txz"},
		{CandidateFile(31), "candidates/part=00031.parquet"},
		{EdgeFile(2), "_work/edges/part=00002.edges"},
		{RequestFile(2), "_work/requests/part=00002.req"},
		{GatherFile(5), "_work/gather/chunk-000005.sigs"},
		{PairFile(40), "pairs/chunk-000040.parquet"},
		{VerifiedFile(1), "_work/verified/chunk-000001.pairs"},
		{MembersFile(1), "_work/members/chunk-000001.members"},
		{ClusterStepFile("cluster-ls-02"), "_work/cluster/cluster-ls-02.json"},
		{ClusterTaskFile("cluster-ls-02", 3, "edges"), "_work/cluster/cluster-ls-02/00003.edges"},
		{SpecFile, "_work/job.json"},
		{PlanFile, "_work/plan.json"},
		{MapStageFile, "_work/stage-map.json"},
		{TaskInputFile(InputsEdges, 7), "_work/inputs/edges/000007.json"},
		{NATSDir, "_work/nats"},
		{ManifestFile, "manifest.json"},
		{ClustersFile, "clusters.parquet"},
		{DuplicatesFile, "duplicates.parquet"},
		{ExactFile, "exact.parquet"},
		{SuccessFile, "_SUCCESS"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%q, want %q", tt.got, tt.want)
		}
	}
	// Names of one kind sort in chunk order, as readers list them.
	if !(DocFile(9) < DocFile(10) && PairFile(99999) < PairFile(100000)) {
		t.Error("chunk file names do not sort in chunk order")
	}
}

// TestOrdinals checks that an ordinal gives back its chunk and index, and
// that ordinals sort as (chunk, index) do, at the extremes too.
func TestOrdinals(t *testing.T) {
	tests := []struct {
		chunk, index int
		want         int64
	}{
		{0, 0, 0},
		{0, 1, 1},
		{0, math.MaxUint32, 1<<32 - 1},
		{1, 0, 1 << 32},
		{3, 7, 3<<32 | 7},
		{math.MaxInt32, math.MaxUint32, math.MaxInt64},
	}
	var prev int64 = -1
	for _, tt := range tests {
		ord := Ordinal(tt.chunk, tt.index)
		if ord != tt.want || ChunkOf(ord) != tt.chunk || int(uint32(ord)) != tt.index {
			t.Errorf("Ordinal(%d, %d) = %#x (chunk %d, index %d), want %#x", tt.chunk, tt.index, ord, ChunkOf(ord), uint32(ord), tt.want)
		}
		if ord <= prev {
			t.Errorf("Ordinal(%d, %d) = %#x does not sort after %#x", tt.chunk, tt.index, ord, prev)
		}
		prev = ord
	}
}
