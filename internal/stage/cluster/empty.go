package cluster

import (
	"github.com/neardup/neardup/internal/pqfile"
)

// pairOptions are the options of every pairs/ file.
func pairOptions() pqfile.Options {
	return pqfile.Options{SortedBy: []string{"a", "b"}, RowGroupRows: pairsGroupRows, Dict: []string{"a_url", "b_url"}, Dense: true}
}
