package control_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/control"
	"github.com/neardup/neardup/pkg/records"
)

// Run runs a whole job in this process (an embedded NATS server and
// in-process workers) and returns its manifest; the pairs, clusters and
// the documents to drop are Parquet files under Out.
func ExampleRun() {
	dir, _ := os.MkdirTemp("", "control-example")
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "docs.jsonl")
	os.WriteFile(in, []byte(`{"id":"a","text":"it was the best of times it was the worst of times it was the age of wisdom"}
{"id":"b","text":"it was the best of times it was the worst of times it was the age of wisdom"}
{"id":"c","text":"it was the best of times it was the worst of times it was the age of foolishness"}
{"id":"d","text":"call me ishmael some years ago never mind how long precisely"}
`), 0o644)

	p := control.DefaultParams()
	p.Threshold = 0.7
	man, err := control.Run(context.Background(), control.Config{
		Out: filepath.Join(dir, "out"), Inputs: []string{in}, Params: p, Workers: 1,
	})
	if err != nil {
		panic(err)
	}
	c := man.Counts
	fmt.Println("documents:", c.Docs, "pairs:", c.Pairs, "exact groups:", c.ExactGroups, "to drop:", c.Duplicates)
	files, _ := filepath.Glob(filepath.Join(dir, "out", "pairs", "*.parquet"))
	for _, f := range files {
		rows, _ := parquet.ReadFile[records.Pair](f)
		for _, r := range rows {
			fmt.Printf("%s %s %.3f\n", r.AID, r.BID, r.Similarity)
		}
	}
	// Output:
	// documents: 4 pairs: 3 exact groups: 1 to drop: 2
	// a b 1.000
	// a c 0.857
	// b c 0.857
}
