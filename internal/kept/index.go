package kept

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// batchRows is how many rows are read from a job's Parquet files at a time.
const batchRows = 4096

// manifest is what write-kept needs of a job's manifest.json.
type manifest struct {
	Status string      `json:"status"`
	Params job.Params  `json:"params"`
	Inputs []job.Input `json:"inputs"`
}

// readManifest checks that the job in s is finished (_SUCCESS or
// _PARTIAL) and reads its manifest.
func readManifest(ctx context.Context, s storage.Opener, where string) (*manifest, error) {
	finished := false
	for _, marker := range []string{job.SuccessFile, job.PartialFile} {
		f, err := s.Open(ctx, marker)
		if err == nil {
			f.Close()
			finished = true
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if !finished {
		return nil, fmt.Errorf("%s: %w: no %s or %s (run the job to its end first)", where, ErrNotFinished, job.SuccessFile, job.PartialFile)
	}
	data, err := storage.ReadFile(ctx, s, job.ManifestFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", where, job.ManifestFile, err)
	}
	return &m, nil
}

// readDuplicates returns the ordinals of duplicates.parquet, sorted.
func readDuplicates(ctx context.Context, s storage.Opener) ([]int64, error) {
	var dups []int64
	err := pqfile.Stream(ctx, s, job.DuplicatesFile, nil, batchRows, func(rows []records.Duplicate) error {
		for _, r := range rows {
			dups = append(dups, r.Doc)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", job.DuplicatesFile, err)
	}
	slices.Sort(dups)
	for i := 1; i < len(dups); i++ {
		if dups[i] == dups[i-1] {
			return nil, fmt.Errorf("%s: document %d is listed twice", job.DuplicatesFile, dups[i])
		}
	}
	return dups, nil
}

// contains reports whether the sorted set holds v.
func contains(set []int64, v int64) bool {
	_, ok := slices.BinarySearch(set, v)
	return ok
}

// fileIndex is what a pass over docs/ tells of one input file.
type fileIndex struct {
	docs int64
	// chunks maps the docs/ files holding the file's documents to the
	// smallest offset among them: the order to read them in.
	chunks map[string]int64
	// members is true when every document of the file is a gzip member
	// of its own.
	members bool
}

// docsIndex reads docs/ once and returns, by input file, how many
// documents it has and which docs/ files hold them.
func docsIndex(ctx context.Context, s *storage.Dir) (map[string]*fileIndex, error) {
	names, err := s.List(ctx, job.DocsDir)
	if err != nil {
		return nil, err
	}
	idx := map[string]*fileIndex{}
	for _, name := range names {
		if !strings.HasSuffix(name, ".parquet") {
			continue
		}
		err := pqfile.Stream(ctx, s, name, nil, batchRows, func(rows []records.DocRecord) error {
			for _, r := range rows {
				fi := idx[r.File]
				if fi == nil {
					fi = &fileIndex{chunks: map[string]int64{}, members: true}
					idx[r.File] = fi
				}
				fi.docs++
				if off, ok := fi.chunks[name]; !ok || r.Offset < off {
					fi.chunks[name] = r.Offset
				}
				fi.members = fi.members && r.CompressedOffset != nil && r.CompressedLength != nil
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return idx, nil
}

// docCursor walks the documents of one input file in the order of their
// offsets, reading the docs/ files that hold them one after the other.
type docCursor struct {
	ctx    context.Context
	s      storage.Opener
	path   string
	chunks []string
	r      *pqfile.Reader[records.DocRecord]
	buf    []records.DocRecord
	rows   []records.DocRecord // unread rows of buf
	peeked *records.DocRecord
	last   int64 // offset of the last document returned
	seen   int64 // documents returned
}

// newDocCursor returns a cursor over the documents of path that fi
// indexes (nil: none).
func newDocCursor(ctx context.Context, s storage.Opener, path string, fi *fileIndex) *docCursor {
	c := &docCursor{ctx: ctx, s: s, path: path, last: -1}
	if fi != nil {
		for name := range fi.chunks {
			c.chunks = append(c.chunks, name)
		}
		slices.SortFunc(c.chunks, func(a, b string) int {
			return cmp.Or(cmp.Compare(fi.chunks[a], fi.chunks[b]), strings.Compare(a, b))
		})
	}
	return c
}

// peek returns the next document without consuming it, or nil after the
// last.
func (c *docCursor) peek() (*records.DocRecord, error) {
	if c.peeked != nil {
		return c.peeked, nil
	}
	for {
		for len(c.rows) > 0 {
			r := &c.rows[0]
			c.rows = c.rows[1:]
			if r.File != c.path {
				continue
			}
			if r.Offset <= c.last {
				return nil, fmt.Errorf("%s: docs/ lists document %d at offset %d after one at offset %d: not in the order of the file", c.path, r.Doc, r.Offset, c.last)
			}
			c.peeked = r
			return r, nil
		}
		if c.r == nil {
			if len(c.chunks) == 0 {
				return nil, nil
			}
			r, err := pqfile.Open[records.DocRecord](c.ctx, c.s, c.chunks[0], nil)
			if err != nil {
				return nil, err
			}
			c.r, c.chunks = r, c.chunks[1:]
			if c.buf == nil {
				c.buf = make([]records.DocRecord, batchRows)
			}
		}
		n, err := c.r.Read(c.buf)
		c.rows = c.buf[:n]
		if errors.Is(err, io.EOF) {
			c.r.Close()
			c.r = nil
		} else if err != nil {
			return nil, err
		}
	}
}

// take consumes the document peek returned.
func (c *docCursor) take() records.DocRecord {
	d := *c.peeked
	c.peeked = nil
	c.last = d.Offset
	c.seen++
	return d
}

// at returns the document at offset off, if the next one starts there.
// A document listed before off was not found in the file where docs/
// says it starts: that is an error.
func (c *docCursor) at(off int64) (records.DocRecord, bool, error) {
	d, err := c.peek()
	switch {
	case err != nil:
		return records.DocRecord{}, false, err
	case d == nil || d.Offset > off:
		return records.DocRecord{}, false, nil
	case d.Offset < off:
		return records.DocRecord{}, false, fmt.Errorf("%s: offset %d: docs/ lists document %d (id %q) here, but no record of the file starts there", c.path, d.Offset, d.Doc, d.ID)
	}
	return c.take(), true, nil
}

// nextOffset is the offset of the next document, or -1 after the last.
func (c *docCursor) nextOffset() (int64, error) {
	d, err := c.peek()
	if err != nil || d == nil {
		return -1, err
	}
	return d.Offset, nil
}

// close releases the docs/ file being read.
func (c *docCursor) close() {
	if c.r != nil {
		c.r.Close()
		c.r = nil
	}
}

// finish checks that every document listed for the file was met.
func (c *docCursor) finish() error {
	d, err := c.peek()
	if err != nil {
		return err
	}
	if d != nil {
		return fmt.Errorf("%s: offset %d: docs/ lists document %d (id %q) here, past the last record read", c.path, d.Offset, d.Doc, d.ID)
	}
	return nil
}
