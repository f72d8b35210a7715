package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/pkg/pipeline"
)

// TestRowsCommand runs a job on the sample with --paragraphs (all its
// files: pairs, clusters, duplicates, rejects and paragraphs all have
// rows), then `coordinator rows`
// on each dataset, and checks that it prints exactly the rows of
// pkg/pipeline's reader of that dataset, in its order: one JSON object a
// line whose members are the Parquet columns, named and valued as written
// out here column by column (a nil pointer as null), in the order
// `--columns` gives.
func TestRowsCommand(t *testing.T) {
	out := runSample(t, filepath.Join("..", "..", "testdata", "sample"), "--paragraphs")
	var stdout, stderr bytes.Buffer
	ctx := context.Background()
	tests := []struct {
		dataset string
		want    [][]byte // the reader's rows, as JSON objects
		columns string
	}{
		{"pairs", expectRows(t, pipeline.Pairs(ctx, out), func(p pipeline.Pair) map[string]any {
			return map[string]any{"a": p.A, "b": p.B, "a_id": p.AID, "b_id": p.BID, "similarity": p.Similarity, "estimate": p.Estimate,
				"method": p.Method, "hamming": p.Hamming, "bands_collided": p.BandsCollided, "first_band": p.FirstBand,
				"a_url": p.AURL, "b_url": p.BURL, "a_job": p.AJob, "a_out": p.AOut, "a_published": p.APublished}
		}), `[{"name":"a","type":"int64","nullable":false},{"name":"b","type":"int64","nullable":false},{"name":"a_id","type":"string","nullable":false},{"name":"b_id","type":"string","nullable":false},{"name":"similarity","type":"double","nullable":false},{"name":"estimate","type":"double","nullable":false},{"name":"method","type":"string","nullable":false},{"name":"hamming","type":"int32","nullable":true},{"name":"bands_collided","type":"int32","nullable":false},{"name":"first_band","type":"int32","nullable":false},{"name":"a_url","type":"string","nullable":false},{"name":"b_url","type":"string","nullable":false},{"name":"a_job","type":"string","nullable":true},{"name":"a_out","type":"string","nullable":true},{"name":"a_published","type":"bool","nullable":true}]`},
		{"clusters", expectRows(t, pipeline.Clusters(ctx, out), func(c pipeline.Cluster) map[string]any {
			return map[string]any{"doc": c.Doc, "id": c.ID, "cluster": c.Cluster, "cluster_size": c.ClusterSize, "keep": c.Keep, "url": c.URL, "job": c.Job}
		}), `[{"name":"doc","type":"int64","nullable":false},{"name":"id","type":"string","nullable":false},{"name":"cluster","type":"int64","nullable":false},{"name":"cluster_size","type":"int32","nullable":false},{"name":"keep","type":"bool","nullable":false},{"name":"url","type":"string","nullable":false},{"name":"job","type":"string","nullable":true}]`},
		{"duplicates", expectRows(t, pipeline.Duplicates(ctx, out), func(d pipeline.Duplicate) map[string]any {
			return map[string]any{"doc": d.Doc, "id": d.ID, "url": d.URL, "cluster": d.Cluster, "kept_doc": d.KeptDoc, "kept_id": d.KeptID, "kept_url": d.KeptURL, "kept_job": d.KeptJob}
		}), `[{"name":"doc","type":"int64","nullable":false},{"name":"id","type":"string","nullable":false},{"name":"url","type":"string","nullable":false},{"name":"cluster","type":"int64","nullable":false},{"name":"kept_doc","type":"int64","nullable":false},{"name":"kept_id","type":"string","nullable":false},{"name":"kept_url","type":"string","nullable":false},{"name":"kept_job","type":"string","nullable":true}]`},
		{"rejects", expectRows(t, pipeline.Rejects(ctx, out), func(r pipeline.Reject) map[string]any {
			return map[string]any{"chunk": r.Chunk, "file": r.File, "byte_offset": r.Offset, "line": r.Line, "reason": r.Reason}
		}), `[{"name":"chunk","type":"int32","nullable":false},{"name":"file","type":"string","nullable":false},{"name":"byte_offset","type":"int64","nullable":false},{"name":"line","type":"int64","nullable":false},{"name":"reason","type":"string","nullable":false}]`},
		{"paragraphs", expectRows(t, pipeline.Paragraphs(ctx, out), func(p pipeline.Paragraph) map[string]any {
			return map[string]any{"unit_hash": p.UnitHash, "doc": p.Doc, "unit_index": p.UnitIndex, "id": p.ID, "byte_offset": p.ByteOffset,
				"byte_length": p.ByteLength, "holders": p.Holders, "first_doc": p.FirstDoc, "first_job": p.FirstJob}
		}), `[{"name":"unit_hash","type":"int64","nullable":false},{"name":"doc","type":"int64","nullable":false},{"name":"unit_index","type":"int32","nullable":false},{"name":"id","type":"string","nullable":false},{"name":"byte_offset","type":"int64","nullable":false},{"name":"byte_length","type":"int32","nullable":false},{"name":"holders","type":"int64","nullable":false},{"name":"first_doc","type":"int64","nullable":false},{"name":"first_job","type":"string","nullable":false}]`},
	}
	for _, tt := range tests {
		t.Run(tt.dataset, func(t *testing.T) {
			if len(tt.want) == 0 {
				t.Fatalf("the sample job has no %s: the test checks nothing", tt.dataset)
			}
			stdout.Reset()
			stderr.Reset()
			if exit := Main("coordinator", []string{"rows", "--columns", tt.dataset}, Coordinator(), &stdout, &stderr); exit != 0 {
				t.Fatalf("rows --columns: exit %d:\n%s", exit, stderr.String())
			}
			if got := strings.TrimSpace(stdout.String()); got != tt.columns {
				t.Errorf("--columns:\n%s\nwant\n%s", got, tt.columns)
			}
			var cols []rowColumn
			if err := json.Unmarshal(stdout.Bytes(), &cols); err != nil {
				t.Fatal(err)
			}
			stdout.Reset()
			if exit := Main("coordinator", []string{"rows", tt.dataset, out}, Coordinator(), &stdout, &stderr); exit != 0 || stderr.Len() != 0 {
				t.Fatalf("rows: exit %d:\n%s", exit, stderr.String())
			}
			lines := bytes.Split(bytes.TrimSuffix(stdout.Bytes(), []byte("\n")), []byte("\n"))
			if len(lines) != len(tt.want) {
				t.Fatalf("%d rows, want the reader's %d", len(lines), len(tt.want))
			}
			for i, line := range lines {
				if got := canonical(t, line); !bytes.Equal(got, tt.want[i]) {
					t.Fatalf("row %d:\n%s\nwant\n%s", i+1, got, tt.want[i])
				}
				if keys := objectKeys(t, line); !slices.Equal(keys, columnNames(cols)) {
					t.Fatalf("row %d: members %v, want the columns in order %v", i+1, keys, columnNames(cols))
				}
			}
		})
	}
}

// runSample runs a job (embedded NATS) on input, and returns its output.
func runSample(t *testing.T, input string, flags ...string) string {
	t.Helper()
	t.Setenv("NATS_URL", "")
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	if exit := Main("coordinator", append(append([]string{"--out", out, "--quiet"}, flags...), input), Coordinator(), &stdout, &stderr); exit != 0 {
		t.Fatalf("job: exit %d:\n%s", exit, stderr.String())
	}
	return out
}

// expectRows returns the rows of a reader as JSON objects of the columns
// that row gives each (keys sorted, as canonical gives a printed row).
func expectRows[T any](t *testing.T, rows iter.Seq2[T, error], row func(T) map[string]any) [][]byte {
	t.Helper()
	var out [][]byte
	for r, err := range rows {
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(row(r))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// canonical returns a JSON object with its members sorted by name, its
// numbers as written.
func canonical(t *testing.T, line []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// objectKeys returns the member names of a JSON object, in order.
func objectKeys(t *testing.T, line []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", line)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func columnNames(cols []rowColumn) []string {
	var names []string
	for _, c := range cols {
		names = append(names, c.Name)
	}
	return names
}
