package pipeline

import (
	"context"
	"fmt"

	"github.com/neardup/neardup/internal/query"
)

// Index is the index of one or more finished jobs, open for queries. It
// keeps files open between queries: Close it. It is not safe for
// concurrent use.
type Index struct {
	s *query.Searcher
}

// Doc is a document to look up.
type Doc struct {
	ID   string
	Text string
}

// QueryResult is what a query found for one document: its matches, most
// similar first (then by index, in the order given to OpenIndex, and by
// document); empty, not nil, when there are none.
type QueryResult struct {
	// ID is the queried document's ID.
	ID      string
	Matches []Match
}

// Match is an indexed document found near a queried one.
type Match struct {
	// Index is the index's location as given to OpenIndex, Job the name
	// of the document's job (of a compacted index, the job it holds the
	// document for).
	Index, Job string
	// Doc is the document's ordinal in its job (the doc column of its
	// datasets), ID and URL its id and url.
	Doc     int64
	ID, URL string
	// Similarity is the exact Jaccard similarity of the two shingle sets
	// (Method "exact"), or the signatures' estimate when the index holds
	// no sets (Method "minhash" or "simhash").
	Similarity float64
	// Estimate is the signatures' estimate of the similarity.
	Estimate float64
	Method   string
}

// OpenIndex opens the indexes (index/) of finished jobs for queries: each
// location is a job's output directory or object-store URL, as given to
// Options.Out. Their jobs must have kept their index (not
// Options.NoIndex).
//
// A document is sketched with each index's own parameters and compared
// with the indexed documents it shares a band with, as in a job: a
// near-duplicate is found with the probability a job would find it.
func OpenIndex(ctx context.Context, o IndexOptions, locations ...string) (*Index, error) {
	qo, err := o.options()
	if err != nil {
		return nil, err
	}
	s, err := query.Open(ctx, locations, qo)
	if err != nil {
		return nil, fmt.Errorf("neardup: open index: %w", err)
	}
	return &Index{s: s}, nil
}

// Query looks up the near-duplicates of docs in the indexes and returns
// one QueryResult per document, in the order of docs. Documents queried
// together share their reads: a batch is cheaper than its documents one by
// one.
func (ix *Index) Query(ctx context.Context, docs []Doc) ([]QueryResult, error) {
	res, _, err := ix.s.Query(ctx, queryDocs(docs))
	if err != nil {
		return nil, fmt.Errorf("neardup: query: %w", err)
	}
	return queryResults(res), nil
}

// Close releases the index's files.
func (ix *Index) Close() error {
	ix.s.Close()
	return nil
}
