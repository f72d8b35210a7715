package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// manifest is what the report reads of manifest.json. Only the JSON schema
// ties it to the pipeline that writes the file.
type manifest struct {
	Job             string            `json:"job"`
	Epoch           string            `json:"epoch"`
	Started         time.Time         `json:"started"`
	Finished        time.Time         `json:"finished"`
	Seconds         float64           `json:"seconds"`
	Versions        map[string]string `json:"versions"`
	Params          params            `json:"params"`
	Curve           curve             `json:"curve"`
	Inputs          []input           `json:"inputs"`
	SkippedInputs   []skippedInput    `json:"skipped_inputs"`
	Chunks          int               `json:"chunks"`
	Counts          counts            `json:"counts"`
	Stages          []stage           `json:"stages"`
	Failures        []failure         `json:"failures"`
	RejectReasons   []reasonCount     `json:"reject_reasons"`
	VerifiedHist    []int64           `json:"verified_similarity_hist"`
	RejectedHist    []int64           `json:"rejected_similarity_hist"`
	ClusterSizeHist []int64           `json:"cluster_size_hist"`
	LargestClusters []cluster         `json:"largest_clusters"`
	BoundedBuckets  []boundedBucket   `json:"bounded_buckets"`
	BoundedClusters []boundedCluster  `json:"bounded_clusters"`
	Warnings        []string          `json:"warnings"`
	Scripts         []script          `json:"scripts"`
	ExamplePairs    []Example         `json:"example_pairs"`
}

// script is the count of one script's documents.
type script struct {
	Script         string `json:"script"`
	Covered        bool   `json:"covered"`
	Docs           int64  `json:"docs"`
	Thin           int64  `json:"thin"`
	MedianShingles int64  `json:"median_shingles"`
}

// boundedBucket is a band bucket whose pairs were not all compared.
type boundedBucket struct {
	Band            int32 `json:"band"`
	Key             int64 `json:"key"`
	Docs            int64 `json:"docs"`
	Representatives int64 `json:"representatives"`
	Hubs            int64 `json:"hubs"`
	FirstDoc        int64 `json:"first_doc"`
}

// boundedCluster is a cluster whose pairs were listed against its kept
// document only.
type boundedCluster struct {
	Cluster   int64  `json:"cluster"`
	Size      int64  `json:"size"`
	KeptID    string `json:"kept_id"`
	Pairs     int64  `json:"pairs"`
	Listed    int64  `json:"listed"`
	NotListed int64  `json:"not_listed"`
}

// params are the job's parameters.
type params struct {
	Method          string       `json:"method"`
	Hamming         int          `json:"hamming"`
	SimHashWeights  string       `json:"simhash_weights"`
	Sketch          string       `json:"sketch"`
	K               int          `json:"k"`
	Bands           int          `json:"bands"`
	Rows            int          `json:"rows"`
	Words           int          `json:"words"`
	CharGrams       int          `json:"char_grams"`
	Tokenizer       string       `json:"tokenizer"`
	DigitsToZero    bool         `json:"digits_to_zero"`
	StripDiacritics bool         `json:"strip_diacritics"`
	Threshold       float64      `json:"threshold"`
	FPWeight        float64      `json:"fp_weight"`
	FNWeight        float64      `json:"fn_weight"`
	Seed            uint64       `json:"seed"`
	Partitions      int          `json:"partitions"`
	Verify          string       `json:"verify"`
	Keep            string       `json:"keep"`
	MaxBucket       int          `json:"max_bucket"`
	MaxClusterPairs int64        `json:"max_cluster_pairs"`
	Against         []earlierJob `json:"against"`
}

// earlierJob is an earlier job the job was matched against (--against).
type earlierJob struct {
	Job  string `json:"job"`
	Out  string `json:"out"`
	Docs int64  `json:"docs"`
}

// curve summarises the chosen S-curve.
type curve struct {
	ApproxThreshold float64 `json:"approx_threshold"`
	Steepest        float64 `json:"steepest"`
	PAtThreshold    float64 `json:"p_at_threshold"`
	PAtThreshold05  float64 `json:"p_at_threshold_plus_0.05"`
}

// input is one input file.
type input struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
	Size int64  `json:"size"`
}

// skippedInput is a file under an input that was not read, and why.
type skippedInput struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// stage is the timing of one stage.
type stage struct {
	Name    string  `json:"name"`
	Tasks   int     `json:"tasks"`
	Failed  int     `json:"failed"`
	Seconds float64 `json:"seconds"`
}

// failure is a task that failed on every delivery.
type failure struct {
	Stage    string `json:"stage"`
	Index    int    `json:"index"`
	Attempts int    `json:"attempts"`
	Error    string `json:"error"`
}

// reasonCount is how many records were rejected for one kind of reason.
type reasonCount struct {
	Reason string `json:"reason"`
	Count  int64  `json:"count"`
}

// cluster summarises one of the largest clusters.
type cluster struct {
	Cluster int64    `json:"cluster"`
	Size    int      `json:"size"`
	KeptID  string   `json:"kept_id"`
	KeptURL string   `json:"kept_url"`
	Members []string `json:"member_ids"`
}

// counts holds the manifest's "counts" object in its own order, so the
// report shows every count, also those added after it was written.
type counts struct {
	fields []countField
}

// countField is one count: its JSON name and its number as written.
type countField struct {
	name  string
	value json.Number
}

// UnmarshalJSON reads a JSON object of numbers, keeping the order.
func (c *counts) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil {
		return fmt.Errorf("counts: %w", err)
	} else if t == nil {
		c.fields = nil
		return nil
	} else if t != json.Delim('{') {
		return fmt.Errorf("counts: %v is not an object", t)
	}
	c.fields = nil
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fmt.Errorf("counts: %w", err)
		}
		name, _ := t.(string)
		var v json.Number
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("counts: %s: %w", name, err)
		}
		c.fields = append(c.fields, countField{name: name, value: v})
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("counts: %w", err)
	}
	return nil
}

// get returns the count called name, 0 when it is absent or not an
// integer.
func (c counts) get(name string) int64 {
	for _, f := range c.fields {
		if f.name == name {
			n, err := f.value.Int64()
			if err != nil {
				return 0
			}
			return n
		}
	}
	return 0
}

// decodeManifest parses manifest.json and checks what the report relies
// on.
func decodeManifest(data []byte) (*manifest, error) {
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("report: decoding the manifest: %w", err)
	}
	if err := m.bandParams().Validate(); err != nil {
		return nil, fmt.Errorf("report: manifest params: %w", err)
	}
	if v, r := len(m.VerifiedHist), len(m.RejectedHist); v != r && v != 0 && r != 0 {
		return nil, fmt.Errorf("report: verified_similarity_hist has %d bins, rejected_similarity_hist %d", v, r)
	}
	return &m, nil
}
