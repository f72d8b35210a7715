package rates

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
)

// repeatedCursor walks the paragraph pass's files of repeated bytes by
// document (job.UnitDocsWorkFile: one a task, each sorted by document; a
// document's units are in several), merged: the files' next rows are
// held in a heap by document.
type repeatedCursor struct {
	files []*docBytesFile
	heap  docBytesHeap
}

// docBytesFile is one file of repeated bytes being read.
type docBytesFile struct {
	name string
	r    *pqfile.Reader[job.DocBytes]
	buf  []job.DocBytes
	i, n int
	last int64 // the document of the row read before, to check the order
}

// openRepeated opens files (each checked against what its task recorded)
// at their first row of document lo or after.
func openRepeated(ctx context.Context, st storage.Opener, files []fileinfo.Info, lo int64) (*repeatedCursor, error) {
	c := &repeatedCursor{}
	for i := range files {
		f := &files[i]
		r, err := pqfile.Open[job.DocBytes](ctx, st, f.Name, f)
		if err != nil {
			c.Close()
			return nil, err
		}
		df := &docBytesFile{name: f.Name, r: r, buf: make([]job.DocBytes, 4096), last: -1}
		c.files = append(c.files, df)
		if lo != math.MinInt64 {
			if err := r.SeekSorted("doc", lo); err != nil {
				c.Close()
				return nil, err
			}
		}
		ok, err := df.fill()
		for ok && err == nil && df.head().Doc < lo { // a seek stops at a page's start
			df.i++
			ok, err = df.fill()
		}
		if err != nil {
			c.Close()
			return nil, err
		}
		if ok {
			c.heap = append(c.heap, df)
		}
	}
	heap.Init(&c.heap)
	return c, nil
}

// Close closes the files.
func (c *repeatedCursor) Close() {
	for _, f := range c.files {
		f.r.Close()
	}
}

// fill reads the file's next rows when its buffer is spent; ok is false
// at its end.
func (f *docBytesFile) fill() (ok bool, err error) {
	for f.i == f.n {
		n, err := f.r.Read(f.buf)
		f.i, f.n = 0, n
		if errors.Is(err, io.EOF) {
			return n > 0, nil
		}
		if err != nil {
			return false, err
		}
	}
	return true, nil
}

// head is the file's next row.
func (f *docBytesFile) head() job.DocBytes { return f.buf[f.i] }

// match returns the repeated bytes of document doc (0 when none);
// documents come in increasing order, and a row passed over (of a
// document that docs/ does not hold) is an error, as is a file out of
// order.
func (c *repeatedCursor) match(doc int64) (int64, error) {
	var sum int64
	for len(c.heap) > 0 {
		f := c.heap[0]
		h := f.head()
		switch {
		case h.Doc > doc:
			return sum, nil
		case h.Doc < doc:
			return 0, fmt.Errorf("%s lists document %d, which no docs/ file of the job holds (the next document read is %d)", f.name, h.Doc, doc)
		case h.Doc <= f.last:
			return 0, fmt.Errorf("%s: document %d after %d: the rows are out of order", f.name, h.Doc, f.last)
		}
		sum += h.Bytes
		f.last = h.Doc
		f.i++
		ok, err := f.fill()
		if err != nil {
			return 0, err
		}
		if ok {
			heap.Fix(&c.heap, 0)
		} else {
			heap.Pop(&c.heap)
		}
	}
	return sum, nil
}

// rest returns a row no document took, if any: the first of the heap.
func (c *repeatedCursor) rest() (name string, doc int64, ok bool) {
	if len(c.heap) == 0 {
		return "", 0, false
	}
	return c.heap[0].name, c.heap[0].head().Doc, true
}

// docBytesHeap orders the files by their next document (then by name:
// the order in which equal documents are summed does not matter).
type docBytesHeap []*docBytesFile

func (h docBytesHeap) Len() int { return len(h) }
func (h docBytesHeap) Less(i, j int) bool {
	a, b := h[i].head().Doc, h[j].head().Doc
	return a < b || a == b && h[i].name < h[j].name
}
func (h docBytesHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *docBytesHeap) Push(x any)   { *h = append(*h, x.(*docBytesFile)) }
func (h *docBytesHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
