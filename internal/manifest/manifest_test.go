package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/golden"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden/")

// checkGolden compares got with testdata/golden/name, or rewrites it
// under -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name), got, *update)
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// full is a manifest with every field set, omitempty ones too.
func full() *Manifest {
	p := job.DefaultParams()
	p.Bands, p.Rows, p.Partitions, p.ChunkBytes = 16, 8, 4, 32<<20 // as a job resolves them
	hamming := int32(2)
	size := int64(2)
	return &Manifest{
		Status: StatusPartial, Job: "j1", Epoch: "e1",
		Started:  time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		Finished: time.Date(2026, 1, 2, 3, 4, 7, 0, time.UTC),
		Seconds:  2.5, Versions: map[string]string{"go": "go1.26.8", "neardup": "v1.0.0"}, Params: p,
		Derived:       job.Derived{FirstChunk: 3, Against: []job.Against{{Job: "j0", Out: "/out/j0", FirstChunk: 0, Chunks: 3, Docs: 120}}},
		Curve:         &CurveSummary{ApproxThreshold: 0.7, Steepest: 0.69, PAtThreshold: 0.94, PAtThreshold05: 0.99},
		Inputs:        []job.Input{{Path: "/in/a.jsonl", Kind: "jsonl", Size: 10, ModTime: 5}},
		ChangedInputs: []string{"/in/a.jsonl"},
		SkippedInputs: []job.Skipped{{Path: "/in/b.csv", Reason: "unknown kind"}, {Path: "/in/pipe", Reason: "not a regular file: named pipe (FIFO)", Rejected: true},
			{Path: "/in/out", Reason: "the job's output directory (--out): not an input", Dir: true}},
		Chunks: 2,
		Counts: Counts{InputBytes: 1, TextBytes: 2, Docs: 3, Rejected: 4, UnreadFiles: 5, UnreadBytes: 6, DamagedRanges: 7,
			DamagedBytes: 8, DamagedRows: 9, ChangedFiles: 10, Empty: 11, Thin: 12, Shingles: 13, BandRecords: 14, BandGroups: 15,
			MaxBandGroup: 16, CandidateRows: 17, Candidates: 18, Gathered: 19, UniquePairs: 20, Prefiltered: 21, ExactChecked: 22,
			SigPassed: 23, SigPassedExact: 24, Verified: 25, ExactGroups: 26, ExactDups: 27, Pairs: 28, PairsAgainst: 29,
			BoundedBuckets: 30, NotCompared: 31, BoundedClust: 32, NotListed: 33, Clusters: 34, ClusteredDocs: 35, Duplicates: 36,
			NearDups: 37, LargestCluster: 38, FailedChunks: 39, DuplicateIDs: 40},
		Stages:              []StageTiming{{Name: "map", Tasks: 2, Failed: 1, Seconds: 1.25}},
		Failures:            []Failure{{Stage: "map", Index: 1, Attempts: 4, Error: "boom"}},
		RejectReasons:       []ReasonCount{{Reason: "invalid JSON", Count: 4}},
		VerifiedHist:        []int64{1, 2},
		RejectedHist:        []int64{3, 4},
		ClusterSizeHist:     []int64{5},
		SimilarityEdges:     []float64{0, 0.5, 1},
		ClusterSizeEdges:    []*int64{&size, nil},
		LargestClusters:     []ClusterSummary{{Cluster: 1, Size: 3, KeptID: "a", KeptURL: "https://a.example", Members: []string{"a", "b"}}},
		BoundedBuckets:      []job.BoundedBucket{{Band: 1, Key: 2, Docs: 3, Representatives: 4, Hubs: 5, FirstDoc: 6}},
		BoundedClusters:     []BoundedCluster{{Cluster: 1, Size: 3, KeptID: "a", Pairs: 3, Listed: 2, NotListed: 1}},
		Scripts:             []job.ScriptSummary{{Script: "Latin", Covered: true, Docs: 3, Thin: 1, MedianShingles: 40}},
		Warnings:            []string{"look"},
		DuplicateIDExamples: []string{"a"},
		ExamplePairs: []Example{{A: 1, B: 2, AID: "a", BID: "b", Similarity: 0.9, Estimate: 0.875, Method: "exact",
			Hamming: &hamming, BandsCollided: 3, FirstBand: 1, Why: "near the threshold"}},
	}
}

// TestEncodeGolden checks the JSON of manifests made in memory against
// golden files, and that decoding the JSON and encoding it again gives
// the same bytes.
func TestEncodeGolden(t *testing.T) {
	tests := []struct {
		name string
		m    *Manifest
	}{
		{"full", full()},
		// Nothing set but the tokenizer (params without one decode as
		// words-only): nil lists are null, omitempty fields absent.
		{"zero", &Manifest{Params: job.Params{ShingleParams: job.ShingleParams{Tokenizer: job.TokenizeScripts}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := mustEncode(t, tc.m)
			checkGolden(t, tc.name+".json", data)
			if again := mustEncode(t, mustDecode(t, string(data))); !bytes.Equal(again, data) {
				t.Errorf("decoded and encoded again:\n%s\nwant:\n%s", again, data)
			}
		})
	}
}

// TestDecode checks manifests of this and earlier versions: the sample
// job's, as the coordinator wrote it (it must come back byte for byte),
// and older ones without the fields added since.
func TestDecode(t *testing.T) {
	sampleCounts := []string{"input_bytes", "text_bytes", "docs", "rejected", "unread_files", "unread_bytes",
		"damaged_ranges", "damaged_bytes", "damaged_rows", "changed_files", "empty", "thin", "shingles", "band_records",
		"band_groups", "max_band_group", "candidate_rows", "candidates", "signatures_gathered", "candidate_pairs_checked",
		"prefiltered", "exact_checked", "signature_passed", "signature_passed_exact", "verified_pairs", "exact_groups",
		"exact_duplicates", "pairs", "pairs_against", "bounded_buckets", "pairs_not_compared", "bounded_clusters",
		"pairs_not_listed", "clusters", "clustered_docs", "duplicates", "near_duplicates", "largest_cluster", "failed_chunks",
		"duplicate_ids"}
	// Written before duplicate_ids.
	ungroupedCounts := sampleCounts[:len(sampleCounts)-1]
	oldCounts := []string{"input_bytes", "text_bytes", "docs", "rejected", "empty", "shingles", "band_records",
		"band_groups", "max_band_group", "candidates", "candidate_pairs_checked", "signature_passed",
		"signature_passed_exact", "verified_pairs", "clusters", "clustered_docs", "duplicates", "largest_cluster", "failed_chunks"}
	tests := []struct {
		fixture    string
		roundTrips bool // Encode gives the fixture's bytes back
		status     string
		tokenizer  job.Tokenizer
		docs, thin int64
		scripts    int
		examples   int
		counts     []string // CountList's names
	}{
		{"sample.json", true, StatusComplete, "scripts", 2601, 18, 2, 5, sampleCounts},
		// The manifest of the same job before the parameters were grouped:
		// the same keys and values, params in another order.
		{"sample-ungrouped.json", false, StatusComplete, "scripts", 2601, 18, 2, 5, ungroupedCounts},
		// Without status, tokenizer, gather, index, input_format, mtime,
		// skipped_inputs, the bin edges, bounded lists, scripts, example
		// pairs and the counts added since.
		{"old.json", false, "", "words-only", 2601, 0, 0, 0, oldCounts},
	}
	for _, tc := range tests {
		t.Run(tc.fixture, func(t *testing.T) {
			data := readFixture(t, tc.fixture)
			m, err := Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			if m.Status != tc.status || m.Params.Tokenizer != tc.tokenizer || m.Counts.Docs != tc.docs || m.Counts.Thin != tc.thin ||
				len(m.Scripts) != tc.scripts || len(m.ExamplePairs) != tc.examples {
				t.Errorf("status %q, tokenizer %q, docs %d, thin %d, %d scripts, %d examples; want %q, %q, %d, %d, %d, %d",
					m.Status, m.Params.Tokenizer, m.Counts.Docs, m.Counts.Thin, len(m.Scripts), len(m.ExamplePairs),
					tc.status, tc.tokenizer, tc.docs, tc.thin, tc.scripts, tc.examples)
			}
			var names []string
			for _, c := range m.CountList() {
				names = append(names, c.Name)
			}
			if !slices.Equal(names, tc.counts) {
				t.Errorf("CountList %v, want %v", names, tc.counts)
			}
			again := mustEncode(t, m)
			if got := bytes.Equal(again, data); got != tc.roundTrips {
				t.Errorf("encoded again equal to %s: %v, want %v:\n%s", tc.fixture, got, tc.roundTrips, again)
			}
		})
	}
}

// TestDecodeDerived checks where Decode finds the derived state of a job
// matched against earlier ones: in params in a manifest an earlier
// version wrote (testdata/against-in-params.json, the manifest of a job
// matched against one earlier job, written by the version before
// job.Derived left job.Params), beside params in one this version
// writes (that manifest encoded again: no longer in params), beside them
// when both have it, and nowhere for a job matched against none.
func TestDecodeDerived(t *testing.T) {
	before := readFixture(t, "against-in-params.json")
	d := job.Derived{FirstChunk: 1, Against: []job.Against{{Job: "j7b5d5924289277cb", Out: "/tmp/derived-fix/A", FirstChunk: 0, Chunks: 1, Docs: 600}}}
	now := mustEncode(t, mustDecode(t, string(before)))
	const a = `[{"job":"j7b5d5924289277cb","out":"/tmp/derived-fix/A","first_chunk":0,"chunks":1,"docs":600}]`
	tests := []struct {
		name     string
		data     []byte
		want     job.Derived
		inParams bool // the data has the derived state in params
	}{
		{"before", before, d, true},
		{"now", now, d, false},
		{"both", []byte(`{"params":{"first_chunk":7,"against":[]},"first_chunk":1,"against":` + a + `}`), d, true},
		{"none", readFixture(t, "sample.json"), job.Derived{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var raw struct {
				Params map[string]json.RawMessage `json:"params"`
			}
			if err := json.Unmarshal(tc.data, &raw); err != nil {
				t.Fatal(err)
			}
			if _, ok := raw.Params["against"]; ok != tc.inParams {
				t.Errorf("params.against in the manifest: %v, want %v", ok, tc.inParams)
			}
			m := mustDecode(t, string(tc.data))
			if !reflect.DeepEqual(m.Derived, tc.want) {
				t.Errorf("derived %+v, want %+v", m.Derived, tc.want)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
	}{
		{"not JSON", "{"},
		{"an array", "[]"},
		{"counts not an object", `{"counts": [1]}`},
		{"count not a number", `{"counts": {"docs": "many"}}`},
		{"count not an integer", `{"counts": {"docs": 1.5}}`},
		{"unknown count not a number", `{"counts": {"future_count": {}}}`},
		{"params not an object", `{"params": 1}`},
		{"earlier jobs in params not a list", `{"params": {"against": 1}}`},
		{"earlier jobs not a list", `{"against": {}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode([]byte(tc.data))
			if err == nil {
				t.Fatalf("Decode succeeded: %+v", m)
			}
			if !strings.Contains(err.Error(), job.ManifestFile) {
				t.Errorf("error %q does not name %s", err, job.ManifestFile)
			}
		})
	}
}

// TestCountList checks the counts of manifests made in memory, decoded,
// and decoded then changed.
func TestCountList(t *testing.T) {
	encoded := mustEncode(t, full())
	inMemory, err := parseCounts(rawCounts(t, encoded)) // what Encode writes, in order
	if err != nil {
		t.Fatal(err)
	}
	changed := mustDecode(t, `{"counts": {"docs": 1, "future_count": 2.5}}`)
	changed.Counts.Docs = 7
	tests := []struct {
		name string
		m    *Manifest
		want []Count
	}{
		{"in memory", full(), inMemory},
		{"decoded", mustDecode(t, `{"counts": {"docs": 3, "future_count": 1e3, "empty": 0}}`),
			[]Count{{"docs", "3"}, {"future_count", "1e3"}, {"empty", "0"}}},
		{"decoded then changed", changed, []Count{{"docs", "7"}, {"future_count", "2.5"}}},
		{"no counts", mustDecode(t, `{}`), []Count{}},
		{"null counts", mustDecode(t, `{"counts": null}`), []Count{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.m.CountList(); !slices.Equal(got, tc.want) {
				t.Errorf("CountList %v, want %v", got, tc.want)
			}
		})
	}
	if len(inMemory) != 40 || inMemory[0] != (Count{"input_bytes", "1"}) || inMemory[39] != (Count{"duplicate_ids", "40"}) {
		t.Errorf("Encode wrote counts %v, want the 40 of full() in order", inMemory)
	}
}

// rawCounts returns the "counts" object of encoded manifest data.
func rawCounts(t *testing.T, data []byte) []byte {
	t.Helper()
	var raw struct {
		Counts json.RawMessage `json:"counts"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	return raw.Counts
}

func mustEncode(t *testing.T, m *Manifest) []byte {
	t.Helper()
	data, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustDecode(t *testing.T, data string) *Manifest {
	t.Helper()
	m, err := Decode([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestWriteRead checks that Read gives back what Write wrote, as
// job.ManifestFile, and fails on a job without it.
func TestWriteRead(t *testing.T) {
	st, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Read(t.Context(), st); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), job.ManifestFile) {
		t.Errorf("Read of a job without a manifest: %v, want an error wrapping fs.ErrNotExist naming %s", err, job.ManifestFile)
	}
	want := full()
	if err := Write(t.Context(), st, want); err != nil {
		t.Fatal(err)
	}
	written, err := storage.ReadFile(t.Context(), st, job.ManifestFile)
	if err != nil {
		t.Fatal(err)
	}
	wantData := mustEncode(t, want)
	if !bytes.Equal(written, wantData) {
		t.Errorf("%s holds\n%s\nwant Encode's\n%s", job.ManifestFile, written, wantData)
	}
	got, err := Read(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	gotData := mustEncode(t, got)
	if !bytes.Equal(gotData, wantData) {
		t.Errorf("Read gave\n%s\nwant\n%s", gotData, wantData)
	}
}
