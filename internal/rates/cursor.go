package rates

import (
	"errors"
	"fmt"
	"io"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
)

// factsLost is tallyPart's error for the chunk at of its chunks whose
// facts file is missing or damaged.
type factsLost struct {
	at  int
	err error
}

func (e *factsLost) Error() string { return e.err.Error() }
func (e *factsLost) Unwrap() error { return e.err }

// dupCursor walks duplicates.parquet in document order from document lo
// (the rows before it, which a seek leaves, are passed over).
type dupCursor struct {
	r    *pqfile.Reader[dupRow]
	buf  []dupRow
	i, n int
	eof  bool
	lo   int64
}

// peek returns the next duplicate without taking it; ok is false at the
// end.
func (c *dupCursor) peek() (dupRow, bool, error) {
	for {
		for c.i < c.n && c.buf[c.i].Doc < c.lo {
			c.i++
		}
		if c.i < c.n {
			return c.buf[c.i], true, nil
		}
		if c.eof {
			return dupRow{}, false, nil
		}
		n, err := c.r.Read(c.buf)
		c.i, c.n = 0, n
		if errors.Is(err, io.EOF) {
			c.eof = true
		} else if err != nil {
			return dupRow{}, false, err
		}
	}
}

// match returns the duplicate of document doc, nil when doc is none;
// documents come in increasing order, and a duplicate passed over (of a
// document that docs/ does not hold) is an error.
func (c *dupCursor) match(doc int64) (*dupRow, error) {
	d, ok, err := c.peek()
	switch {
	case err != nil:
		return nil, err
	case !ok || d.Doc > doc:
		return nil, nil
	case d.Doc < doc:
		return nil, fmt.Errorf("%s lists document %d, which no docs/ file of the job holds (the next document read is %d)", job.DuplicatesFile, d.Doc, doc)
	}
	c.i++
	return &d, nil
}
