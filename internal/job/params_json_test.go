package job

import (
	"bytes"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/neardup/neardup/pkg/formats"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// flatKeys are the keys of params in JSON, every version's: the job
// state, specs, indexes and manifests of earlier versions have them.
var flatKeys = []string{
	"method", "sketch", "k", "bands", "rows", "words", "tokenizer", "char_grams", "digits_to_zero",
	"strip_diacritics", "hamming", "simhash_weights", "threshold", "fp_weight", "fn_weight", "seed",
	"partitions", "verify", "gather", "keep", "index", "first_chunk", "against", "max_bucket",
	"max_cluster_pairs", "id_field", "text_field", "max_doc_bytes", "chunk_bytes", "input_format",
	"strict", "fsync",
}

// everyParam is params with every field set, none to its default or zero
// value, so that the JSON holds every key.
func everyParam() Params {
	return Params{
		LSHParams: LSHParams{Method: MethodSimHash, Sketch: SketchClassic, K: 64, Bands: 5, Rows: 12, Hamming: 6,
			SimHashWeights: WeightsTF, Threshold: 0.7, FPWeight: 0.2, FNWeight: 0.8, Seed: 7, MaxBucket: 99},
		ShingleParams: ShingleParams{Words: 3, Tokenizer: TokenizeWordsOnly, CharGrams: 4, DigitsToZero: true, StripDiacritics: true},
		ExecParams: ExecParams{Partitions: 40, Verify: VerifyEstimate, Gather: GatherOn, Keep: KeepLongest, Index: true,
			MaxClusterPairs: 77, Strict: true, Fsync: true},
		InputParams: InputParams{IDField: "uid", TextField: "body", MaxDocBytes: 1000, ChunkBytes: 4096, InputFormat: formats.KindParquet},
		Derived:     Derived{FirstChunk: 3, Against: []Against{{Job: "j1", Out: "/jobs/1", FirstChunk: 0, Chunks: 3, Docs: 120}}},
	}
}

// TestParamsJSONGolden checks the encoding of params with every field set
// against testdata/params.golden.json (-update rewrites it), as an index
// writes it: one flat object, the values spelt as their flags take them;
// and that it decodes to the same params.
func TestParamsJSONGolden(t *testing.T) {
	p := everyParam()
	got, err := json.MarshalIndent(p, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "params.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("params encode as\n%s\nwant (%s)\n%s", got, golden, want)
	}
	var back Params
	if err := json.Unmarshal(want, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, p) {
		t.Errorf("%s decodes to\n%+v\nwant\n%+v", golden, back, p)
	}
}

// TestParamsJSONKeys checks that params encode as one flat object with
// the keys of every earlier version, whatever the golden file says.
func TestParamsJSONKeys(t *testing.T) {
	data, err := json.Marshal(everyParam())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if got, want := slices.Sorted(maps.Keys(m)), slices.Sorted(slices.Values(flatKeys)); !slices.Equal(got, want) {
		t.Errorf("keys %q, want %q", got, want)
	}
	for _, k := range []string{"method", "sketch", "simhash_weights", "verify", "gather", "keep", "tokenizer", "input_format"} {
		if _, ok := m[k].(string); !ok {
			t.Errorf("%s is %T, want a string", k, m[k])
		}
	}
}

// TestSpecJSONBefore decodes what earlier versions wrote: the job state
// of the version before the groups (testdata/spec-before-groups.json,
// written by it for a job matched against an earlier one, with
// --input-format text), whose job a later version resumes; and params of
// the version before the tokenizer. Encoded again, the params have the
// same keys and values but the input format, now spelt as its kind.
func TestSpecJSONBefore(t *testing.T) {
	before := DefaultParams()
	before.Tokenizer = TokenizeWordsOnly
	before.Bands, before.Rows, before.Partitions, before.CharGrams, before.DigitsToZero = 16, 8, 32, 5, true
	withAgainst := DefaultParams()
	withAgainst.Bands, withAgainst.Rows, withAgainst.Partitions = 16, 8, 32
	withAgainst.Gather, withAgainst.Keep, withAgainst.Fsync, withAgainst.InputFormat = GatherOn, KeepLongest, true, formats.KindText
	withAgainst.FirstChunk = 1
	withAgainst.Against = []Against{{Job: "jb8d2bcf584976cbc", Out: "/tmp/params-old-a", FirstChunk: 0, Chunks: 1, Docs: 2000}}
	tests := []struct {
		name    string
		json    []byte
		want    Spec
		changed map[string]any // keys whose value is encoded otherwise now
	}{
		{"before the groups", mustRead(t, filepath.Join("testdata", "spec-before-groups.json")),
			Spec{Job: "j185d3b1363854776", Epoch: "33b1e848bd1095c6", Out: ".", Params: withAgainst},
			map[string]any{"input_format": "txt"}},
		{"before the tokenizer", []byte(`{"job":"j","epoch":"e","out":"/o","params":{"method":"minhash","sketch":"dart","k":128,` +
			`"bands":16,"rows":8,"words":5,"char_grams":5,"digits_to_zero":true,"hamming":3,"simhash_weights":"none","threshold":0.8,` +
			`"fp_weight":0.05,"fn_weight":0.95,"seed":1,"partitions":32,"verify":"exact","gather":"auto","keep":"first","index":true,` +
			`"max_bucket":5000,"max_cluster_pairs":1000000,"id_field":"id","text_field":"text","max_doc_bytes":16777216,` +
			`"chunk_bytes":33554432,"input_format":"auto","strict":false}}`),
			Spec{Job: "j", Epoch: "e", Out: "/o", Params: before},
			map[string]any{"tokenizer": "words-only"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Spec
			if err := json.Unmarshal(tt.json, &s); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s, tt.want) {
				t.Fatalf("decoded\n%+v\nwant\n%+v", s, tt.want)
			}
			var old struct {
				Params map[string]any `json:"params"`
			}
			if err := json.Unmarshal(tt.json, &old); err != nil {
				t.Fatal(err)
			}
			maps.Copy(old.Params, tt.changed)
			data, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var now struct {
				Params map[string]any `json:"params"`
			}
			if err := json.Unmarshal(data, &now); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(now.Params, old.Params) {
				t.Errorf("encoded again:\n%v\nwant\n%v", now.Params, old.Params)
			}
		})
	}
}

// mustRead returns the content of the file at path.
func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
