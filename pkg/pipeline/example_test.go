package pipeline_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/neardup/neardup/pkg/pipeline"
)

// Run a job on the bundled sample (2,601 documents in JSONL, WET and WARC
// files, and 3 broken records) and read what it found.
func ExampleRun() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "neardup-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	res, err := pipeline.Run(ctx, pipeline.Options{
		Inputs:  []string{"../../testdata/sample"},
		Out:     filepath.Join(dir, "out"),
		Workers: 2,
	})
	if err != nil {
		log.Fatal(err)
	}
	c := res.Counts
	fmt.Println("status:", res.Status)
	fmt.Println("documents:", c.Docs, "rejected:", c.Rejected)
	fmt.Println("pairs:", c.Pairs, "clusters:", c.Clusters, "to drop:", c.Duplicates)

	exact := 0
	for p, err := range pipeline.Pairs(ctx, res.Out) {
		if err != nil {
			log.Fatal(err)
		}
		if p.Similarity == 1 {
			exact++
		}
	}
	fmt.Println("pairs of identical shingle sets:", exact)

	n := 0
	for d, err := range pipeline.Duplicates(ctx, res.Out) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("drop", d.ID, "keep", d.KeptID)
		if n++; n == 3 {
			break
		}
	}
	// Output:
	// status: complete
	// documents: 2601 rejected: 3
	// pairs: 1703 clusters: 160 to drop: 615
	// pairs of identical shingle sets: 180
	// drop doc-0000063 keep doc-0000042
	// drop doc-0000079 keep doc-0000031
	// drop doc-0000087 keep doc-0000052
}

// Look up the near-duplicates of a document in a finished job's index:
// here an edited copy of a document of the sample.
func ExampleOpenIndex() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "neardup-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(ctx, pipeline.Options{Inputs: []string{"../../testdata/sample"}, Out: out, Workers: 2}); err != nil {
		log.Fatal(err)
	}

	ix, err := pipeline.OpenIndex(ctx, pipeline.IndexOptions{}, out)
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	text := sampleText("doc-0000019")
	res, err := ix.Query(ctx, []pipeline.Doc{
		{ID: "edited", Text: strings.Replace(text, " the ", " a ", 3)},
		{ID: "unrelated", Text: "a sentence found in no document of the sample, not even close"},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range res {
		fmt.Println(r.ID, "matches", len(r.Matches))
		for _, m := range r.Matches {
			fmt.Printf("  %s %.3f\n", m.ID, m.Similarity)
		}
	}
	// Output:
	// edited matches 3
	//   doc-0000019 0.955
	//   doc-0001534 0.920
	//   doc-0001786 0.911
	// unrelated matches 0
}

// sampleText returns the text of a document of the sample's JSONL file.
func sampleText(id string) string {
	f, err := os.Open("../../testdata/sample/sample.jsonl.gz")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		log.Fatal(err)
	}
	sc := bufio.NewScanner(z)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var d struct{ ID, Text string }
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			log.Fatal(err)
		}
		if d.ID == id {
			return d.Text
		}
	}
	log.Fatalf("%s: not in the sample (%v)", id, sc.Err())
	return ""
}
