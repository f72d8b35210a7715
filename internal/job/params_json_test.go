package job

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/pkg/formats"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// flatKeys are the keys of params in JSON, every version's: the job
// state, specs, indexes and manifests of earlier versions have them.
var flatKeys = []string{
	"method", "sketch", "k", "bands", "rows", "words", "tokenizer", "char_grams", "digits_to_zero",
	"strip_diacritics", "hamming", "simhash_weights", "threshold", "fp_weight", "fn_weight", "seed",
	"partitions", "verify", "gather", "keep", "index", "max_bucket",
	"max_cluster_pairs", "id_field", "text_field", "max_doc_bytes", "chunk_bytes", "input_format",
	"strict", "fsync", "paragraphs", "paragraph_unit", "shingle_after_strip",
}

// derivedKeys are the keys of the derived state (Derived), which earlier
// versions wrote in params too, and this one beside them.
var derivedKeys = []string{"first_chunk", "against"}

// everyParam is params with every field set, none to its default or zero
// value, so that the JSON holds every key.
func everyParam() Params {
	return Params{
		LSHParams: LSHParams{Method: MethodSimHash, Sketch: SketchClassic, K: 64, Bands: 5, Rows: 12, Hamming: 6,
			SimHashWeights: WeightsTF, Threshold: 0.7, FPWeight: 0.2, FNWeight: 0.8, Seed: 7, MaxBucket: 99},
		ShingleParams: ShingleParams{Words: 3, Tokenizer: TokenizeWordsOnly, CharGrams: 4, DigitsToZero: true, StripDiacritics: true},
		ExecParams: ExecParams{Partitions: 40, Verify: VerifyEstimate, Gather: GatherOn, Keep: KeepLongest, Index: true,
			MaxClusterPairs: 77, Strict: true, Fsync: true, Paragraphs: true, ParagraphUnit: "paragraph", ShingleAfterStrip: 7},
		InputParams: InputParams{IDField: "uid", TextField: "body", MaxDocBytes: 1000, ChunkBytes: 4096, InputFormat: formats.KindParquet},
	}
}

// someDerived is the derived state of a job matched against one earlier
// job.
func someDerived() Derived {
	return Derived{FirstChunk: 3, Against: []Against{{Job: "j1", Out: "/jobs/1", FirstChunk: 0, Chunks: 3, Docs: 120}}}
}

// TestParamsJSONGolden checks the encoding of params with every field set
// against testdata/params.golden.json (-update rewrites it), as an index
// writes it: one flat object, the values spelt as their flags take them;
// and that it decodes to the same params.
func TestParamsJSONGolden(t *testing.T) {
	checkGolden(t, "params.golden.json", " ", everyParam())
}

// checkGolden checks the JSON of v, indented by indent, against
// testdata/name (-update rewrites it), and that the file decodes to v.
func checkGolden[T any](t *testing.T, name, indent string, v T) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", indent)
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := mustRead(t, golden)
	if !bytes.Equal(got, want) {
		t.Errorf("%T encodes as\n%s\nwant (%s)\n%s", v, got, golden, want)
	}
	var back T
	if err := json.Unmarshal(want, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, v) {
		t.Errorf("%s decodes to\n%+v\nwant\n%+v", golden, back, v)
	}
}

// TestParamsJSONKeys checks that params encode as one flat object with
// the keys of every earlier version but the derived state's, whatever the
// golden file says.
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

// TestSpecJSONBefore decodes what earlier versions wrote, whose jobs a
// later version resumes: the job state of the version before the groups
// (testdata/spec-before-groups.json, written by it for a job matched
// against an earlier one, with --input-format text), that of the version
// with the groups, before the derived state left params
// (testdata/spec-grouped-against.json, its _work/job.json kept with
// --keep-work, of a job matched against an earlier one), and params of
// the version before the tokenizer. Decoded, their first_chunk and
// against are in Spec.Derived; encoded again, the params have the same
// keys and values but those two, now beside params with the same values,
// and the input format, now spelt as its kind.
func TestSpecJSONBefore(t *testing.T) {
	before := DefaultParams()
	before.Tokenizer = TokenizeWordsOnly
	before.Bands, before.Rows, before.Partitions, before.CharGrams, before.DigitsToZero = 16, 8, 32, 5, true
	ungrouped := DefaultParams()
	ungrouped.Bands, ungrouped.Rows, ungrouped.Partitions = 16, 8, 32
	ungrouped.Gather, ungrouped.Keep, ungrouped.Fsync, ungrouped.InputFormat = GatherOn, KeepLongest, true, formats.KindText
	grouped := DefaultParams()
	grouped.Bands, grouped.Rows, grouped.Partitions, grouped.Gather = 16, 8, 32, GatherOff
	// Files of those versions hold the chunk size as resolved (32 MiB was
	// the default then; 0, automatic, now).
	for _, p := range []*Params{&before, &ungrouped, &grouped} {
		p.ChunkBytes = 32 << 20
	}
	tests := []struct {
		name    string
		json    []byte
		want    Spec
		changed map[string]any // keys whose value is encoded otherwise now
	}{
		{"before the groups", mustRead(t, filepath.Join("testdata", "spec-before-groups.json")),
			Spec{Job: "j185d3b1363854776", Epoch: "33b1e848bd1095c6", Out: ".", Params: ungrouped,
				Derived: Derived{FirstChunk: 1, Against: []Against{{Job: "jb8d2bcf584976cbc", Out: "/tmp/params-old-a", FirstChunk: 0, Chunks: 1, Docs: 2000}}}},
			map[string]any{"input_format": "txt"}},
		{"grouped, derived in params", mustRead(t, filepath.Join("testdata", "spec-grouped-against.json")),
			Spec{Job: "jb8298f33681f93d8", Epoch: "5a0bde8eb8cc22e1", Out: ".", Params: grouped,
				Derived: Derived{FirstChunk: 1, Against: []Against{{Job: "j7b5d5924289277cb", Out: "/tmp/derived-fix/A", FirstChunk: 0, Chunks: 1, Docs: 600}}}},
			nil},
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
			var now map[string]any
			if err := json.Unmarshal(data, &now); err != nil {
				t.Fatal(err)
			}
			for _, k := range derivedKeys {
				if !reflect.DeepEqual(now[k], old.Params[k]) {
					t.Errorf("encoded again, %s is %v beside params, want %v (in params before)", k, now[k], old.Params[k])
				}
				delete(old.Params, k)
			}
			if !reflect.DeepEqual(now["params"], map[string]any(old.Params)) {
				t.Errorf("encoded again:\n%v\nwant\n%v", now["params"], old.Params)
			}
		})
	}
}

// TestSpecJSONGolden checks the encoding of a spec with every parameter,
// the derived state and a kept corpus set against
// testdata/spec.golden.json (-update rewrites it): the derived state's
// keys beside params, not in them; that it decodes to the same spec; and
// that a spec without derived state and kept corpus has the keys every
// version wrote for a job matched against none.
func TestSpecJSONGolden(t *testing.T) {
	s := Spec{Job: "j2", Epoch: "e2", Out: ".", Params: everyParam(), Derived: someDerived(), Kept: &KeptOutput{Dir: "/corpus/w48", Format: "parquet", Strip: &Strip{MinCount: 4, KeepFirst: true, MinKeptChars: 50}}, Format: SpecFormat}
	checkGolden(t, "spec.golden.json", "  ", s)
	for _, tt := range []struct {
		name string
		spec Spec
		keys []string
	}{
		{"derived", s, []string{"against", "epoch", "first_chunk", "format", "job", "kept", "out", "params"}},
		{"none", Spec{Job: "j", Params: everyParam()}, []string{"epoch", "job", "out", "params"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data, err := json.Marshal(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(m)); !slices.Equal(got, tt.keys) {
				t.Errorf("keys %q, want %q", got, tt.keys)
			}
		})
	}
}

// TestSpecJSONDerived checks where a spec's derived state is read from:
// beside params (this version), inside them (earlier versions), beside
// them when both have it, and that a bad one inside params is an error.
func TestSpecJSONDerived(t *testing.T) {
	d := someDerived()
	const a = `[{"job":"j1","out":"/jobs/1","first_chunk":0,"chunks":3,"docs":120}]`
	const other = `[{"job":"j9","out":"/jobs/9","first_chunk":0,"chunks":1,"docs":1}]`
	tests := []struct {
		name    string
		json    string
		want    Derived
		wantErr bool
	}{
		{"beside params", `{"job":"j","params":{"k":64},"first_chunk":3,"against":` + a + `}`, d, false},
		{"in params", `{"job":"j","params":{"k":64,"first_chunk":3,"against":` + a + `}}`, d, false},
		{"both", `{"job":"j","params":{"first_chunk":1,"against":` + other + `},"first_chunk":3,"against":` + a + `}`, d, false},
		{"none", `{"job":"j","params":{"k":64}}`, Derived{}, false},
		{"no params", `{"job":"j"}`, Derived{}, false},
		{"bad in params", `{"job":"j","params":{"against":1}}`, Derived{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Spec
			err := json.Unmarshal([]byte(tt.json), &s)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want one: %v", err, tt.wantErr)
			}
			if err == nil && !reflect.DeepEqual(s.Derived, tt.want) {
				t.Errorf("derived %+v, want %+v", s.Derived, tt.want)
			}
			if err == nil && s.Job != "j" {
				t.Errorf("job %q, want j", s.Job)
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

// TestSpecFormat checks that a worker reads the specs of its own format
// and refuses a newer one (which it would misread) and an older one
// (whose coordinator would misread its results: before format 2, their
// ranges by chunk or partition, not route tables), naming both and
// saying what to do.
func TestSpecFormat(t *testing.T) {
	tests := []struct {
		format int
		ok     bool
	}{{0, false}, {SpecFormat - 1, false}, {SpecFormat, true}, {SpecFormat + 1, false}}
	for _, tt := range tests {
		s := Spec{Job: "j", Format: tt.format}
		err := s.CheckFormat()
		if (err == nil) != tt.ok {
			t.Errorf("format %d: %v, want ok %v", tt.format, err, tt.ok)
		}
		if err != nil && (!strings.Contains(err.Error(), fmt.Sprintf("format %d", tt.format)) || !strings.Contains(err.Error(), "run the same version of neardup as the coordinator")) {
			t.Errorf("format %d: %q does not name it or say what to do", tt.format, err)
		}
	}
}
