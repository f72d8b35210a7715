package cluster

import (
	"github.com/neardup/neardup/internal/pqfile"
)

// pairOptions are the options of every pairs/ file of a job: zstd's
// default level (pqfile.Options.Dense) when its pairs repeat their
// documents (see densePairs), else its fastest.
func pairOptions(dense bool) pqfile.Options {
	return pqfile.Options{SortedBy: []string{"a", "b"}, RowGroupRows: pairsGroupRows, Dict: []string{"a_url", "b_url"}, Dense: dense}
}

// densePairsPerDoc is the least edges (verified pairs and group members)
// a document of a job whose pairs/ files are Dense: zstd's default level
// finds the ids and urls a document's many pairs repeat at a distance its
// fastest does not look back to (the templated corpus at 0.5, 68 pairs a
// document: 18.7 against 21.5 MB of pairs/; the sites corpus, 24: 9.2
// against 10.4 MB), and costs the CPU of a level for bytes it barely
// saves where a document is in a pair or two (the 100k benchmark job,
// 0.5 edges a document: 3.30 against 3.41 MB, and 2% of the job's time).
const densePairsPerDoc = 2

// densePairs tells whether a job of edges edges and docs documents writes
// Dense pairs/ files.
func densePairs(edges, docs int64) bool { return edges >= densePairsPerDoc*docs }
