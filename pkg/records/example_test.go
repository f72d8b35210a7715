package records_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/pkg/records"
)

// The datasets of a job are Parquet files of these rows: read them with
// parquet-go (or DuckDB, Spark, pandas).
func Example() {
	dir, _ := os.MkdirTemp("", "records-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "pairs.parquet")
	err := parquet.WriteFile(path, []records.Pair{
		{A: 1, B: 4294967296, AID: "doc-1", BID: "doc-9", Similarity: 0.875, Estimate: 0.86, Method: "exact"},
	})
	if err != nil {
		panic(err)
	}
	rows, err := parquet.ReadFile[records.Pair](path)
	if err != nil {
		panic(err)
	}
	for _, r := range rows {
		fmt.Printf("%s ~ %s: %.3f (%s); b is document %d of chunk %d\n", r.AID, r.BID, r.Similarity, r.Method, uint32(r.B), r.B>>32)
	}
	// Output:
	// doc-1 ~ doc-9: 0.875 (exact); b is document 0 of chunk 1
}
