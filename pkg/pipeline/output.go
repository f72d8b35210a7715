package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path"
	"strings"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// The rows of a job's datasets, as package records defines them (their
// fields are the Parquet columns).
type (
	// Pair is a row of pairs/: two near-duplicate documents, A < B.
	Pair = records.Pair
	// Cluster is a row of clusters.parquet: a document in a cluster of
	// two or more.
	Cluster = records.ClusterRecord
	// Duplicate is a row of duplicates.parquet: a document to drop, with
	// the one kept in its place.
	Duplicate = records.Duplicate
	// Reject is a row of rejects/: an input record skipped, and why.
	Reject = records.RejectRecord
	// Paragraph is a row of paragraphs/: an occurrence of a unit (a line
	// or a paragraph) that two documents or more hold.
	Paragraph = records.Paragraph
)

// Pairs returns the near-duplicate pairs of the complete job in out (a
// local directory or an object-store URL), every pair once, in the order
// of pairs/ files. A job that is not complete yields ErrNotComplete; the
// iteration stops after the first error.
func Pairs(ctx context.Context, out string) iter.Seq2[Pair, error] {
	return rows[Pair](ctx, out, job.PairsDir)
}

// Clusters returns the rows of clusters.parquet of the complete job in
// out: every document in a cluster of two or more, and whether it is the
// one kept.
func Clusters(ctx context.Context, out string) iter.Seq2[Cluster, error] {
	return rows[Cluster](ctx, out, job.ClustersFile)
}

// Duplicates returns the documents to drop of the complete job in out
// (duplicates.parquet), each with the document kept in its place.
func Duplicates(ctx context.Context, out string) iter.Seq2[Duplicate, error] {
	return rows[Duplicate](ctx, out, job.DuplicatesFile)
}

// Rejects returns the input records the complete job in out skipped, and
// why (rejects/).
func Rejects(ctx context.Context, out string) iter.Seq2[Reject, error] {
	return rows[Reject](ctx, out, job.RejectsDir)
}

// Paragraphs returns the occurrences of repeated units the paragraph
// pass (Options.Paragraphs) of the complete job in out found
// (paragraphs/), by unit hash, document and unit index within each file;
// a job without the pass has none.
func Paragraphs(ctx context.Context, out string) iter.Seq2[Paragraph, error] {
	return rows[Paragraph](ctx, out, job.ParagraphsDir)
}

// rows yields the rows of a dataset of the complete job in out: a file, or
// a directory whose .parquet files are read in the order of their names.
func rows[T any](ctx context.Context, out, dataset string) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		fail := func(err error) { yield(zero, fmt.Errorf("neardup: %s of %s: %w", dataset, out, err)) }
		d, err := openComplete(ctx, out)
		if err != nil {
			yield(zero, err)
			return
		}
		defer d.Close()
		files := []string{dataset}
		if !strings.HasSuffix(dataset, ".parquet") {
			names, err := d.List(ctx, dataset)
			if err != nil {
				fail(err)
				return
			}
			files = files[:0]
			for _, n := range names {
				if path.Dir(n) == dataset && strings.HasSuffix(n, ".parquet") {
					files = append(files, n)
				}
			}
		}
		for _, name := range files {
			more, err := readRows(ctx, d, name, yield)
			if err != nil {
				fail(err)
				return
			}
			if !more {
				return
			}
		}
	}
}

// readRows yields the rows of one file; more is false when yield asked to
// stop.
func readRows[T any](ctx context.Context, d *storage.Dir, name string, yield func(T, error) bool) (more bool, err error) {
	r, err := pqfile.Open[T](ctx, d, name, nil)
	if err != nil {
		return false, err
	}
	defer r.Close()
	buf := make([]T, 1024)
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		n, err := r.Read(buf)
		for _, row := range buf[:n] {
			if !yield(row, nil) {
				return false, nil
			}
		}
		if errors.Is(err, io.EOF) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// openComplete opens the output at out, which must hold a complete job
// (_SUCCESS); else the error wraps ErrNotComplete and says what it holds.
func openComplete(ctx context.Context, out string) (*storage.Dir, error) {
	l, err := storage.ParseLocation(out)
	if err != nil {
		return nil, fmt.Errorf("neardup: %w", err)
	}
	if l.Local() { // storage.Open would create it
		if _, err := os.Stat(l.Path); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s: it does not exist (%w)", ErrNotComplete, out, err)
		} else if err != nil {
			return nil, fmt.Errorf("neardup: %w", err)
		}
	}
	d, err := storage.Open(ctx, out)
	if err != nil {
		return nil, fmt.Errorf("neardup: %w", err)
	}
	has := func(name string) bool {
		f, err := d.Open(ctx, name)
		if err == nil {
			f.Close()
		}
		return err == nil
	}
	if f, err := d.Open(ctx, job.SuccessFile); err == nil {
		f.Close()
		return d, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		d.Close()
		return nil, fmt.Errorf("neardup: %s: %w", out, err)
	}
	defer d.Close()
	why := "it holds no job"
	switch {
	case has(job.PartialFile):
		why = "it is partial (" + job.PartialFile + ", no " + job.SuccessFile + "): the documents of its failed map tasks are missing"
	case has(job.ManifestFile) || has(job.SpecFile):
		why = "its job is not finished (no " + job.SuccessFile + "): run it again to its end"
	}
	return nil, fmt.Errorf("%w: %s: %s", ErrNotComplete, out, why)
}
