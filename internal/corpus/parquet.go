package corpus

import (
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// parquetDoc is a row of a FormatParquet file.
type parquetDoc struct {
	ID   string `parquet:"id"`
	URL  string `parquet:"url"`
	Text string `parquet:"text"`
}

// writeParquet writes documents [lo, hi) as a Parquet table, in row
// groups of at most 10,000 rows.
func writeParquet(g Source, w io.Writer, lo, hi int) error {
	pw := parquet.NewGenericWriter[parquetDoc](w, parquet.Compression(&parquet.Zstd), parquet.MaxRowsPerRowGroup(DocsPerFile))
	for i := lo; i < hi; i++ {
		d := g.Doc(i)
		if _, err := pw.Write([]parquetDoc{{ID: d.ID, URL: d.URL, Text: d.Text}}); err != nil {
			return fmt.Errorf("write %s: %w", d.ID, err)
		}
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("finish parquet file: %w", err)
	}
	return nil
}
