package kept

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// batchRows is how many rows are read from a job's Parquet files at a time.
const batchRows = 4096

// readManifest checks that the job in s is finished (_SUCCESS or
// _PARTIAL) and reads its manifest.
func readManifest(ctx context.Context, s storage.Opener, where string) (*manifest.Manifest, error) {
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
	m, err := manifest.Read(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return m, nil
}

// ReadDuplicates returns the ordinals of the job's duplicates.parquet in s,
// sorted.
func ReadDuplicates(ctx context.Context, s storage.Opener) ([]int64, error) {
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

// docFiles returns the files of docs/ in the order of their chunks (by
// name only: what their writers recorded is not known).
func docFiles(ctx context.Context, s *storage.Dir) ([]fileinfo.Info, error) {
	names, err := s.List(ctx, job.DocsDir)
	if err != nil {
		return nil, err
	}
	type chunk struct {
		name string
		n    int
	}
	var chunks []chunk
	for _, name := range names {
		var n int
		if _, err := fmt.Sscanf(path.Base(name), "chunk-%d.parquet", &n); err == nil && strings.HasSuffix(name, ".parquet") {
			chunks = append(chunks, chunk{name, n})
		}
	}
	slices.SortFunc(chunks, func(a, b chunk) int { return cmp.Compare(a.n, b.n) })
	files := make([]fileinfo.Info, len(chunks))
	for i, c := range chunks {
		files[i] = fileinfo.Info{Name: c.name}
	}
	return files, nil
}

// membersOnly reads docs/ once and returns the input files all of whose
// documents are gzip members of their own.
func membersOnly(ctx context.Context, s storage.Opener, files []fileinfo.Info) (map[string]bool, error) {
	members := map[string]bool{}
	for _, f := range files {
		name := f.Name
		err := pqfile.Stream(ctx, s, name, docInfo(f), batchRows, func(rows []records.DocRecord) error {
			for _, r := range rows {
				own := r.CompressedOffset != nil && r.CompressedLength != nil
				if m, ok := members[r.File]; !ok || m {
					members[r.File] = own
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return members, nil
}

// docCursor walks the rows of docs/, chunk after chunk, alongside the
// inputs: a job's chunks are runs of the inputs' pieces in the order of
// the manifest, and a chunk lists its documents in the order it read
// them, so the documents of input i come after those of the inputs
// before it, in the order of their offsets. One pass over docs/ serves
// every input. The rows of the inputs before the first written (a file
// that ends in the first chunk of a task of the write-kept stage) are
// passed over.
type docCursor struct {
	ctx    context.Context
	s      storage.Opener
	chunks []fileinfo.Info // docs/ files not yet opened
	order  map[string]int  // input index by path
	first  int             // index of the first input written
	cur    int             // index of the input being written
	path   string
	r      *pqfile.Reader[records.DocRecord]
	buf    []records.DocRecord
	rows   []records.DocRecord // unread rows of buf
	last   int64               // offset of the last document taken
}

// newDocCursor returns a cursor over the files of docs/ (in chunk order)
// for the inputs, from input first.
func newDocCursor(ctx context.Context, s storage.Opener, chunks []fileinfo.Info, inputs []job.Input, first int) *docCursor {
	c := &docCursor{ctx: ctx, s: s, chunks: chunks, order: map[string]int{}, first: first, cur: -1}
	for i, in := range inputs {
		c.order[in.Path] = i
	}
	return c
}

// begin starts on input i, whose path is path.
func (c *docCursor) begin(i int, path string) {
	c.cur, c.path, c.last = i, path, -1
}

// row returns the next row of docs/ without consuming it, or nil after
// the last.
func (c *docCursor) row() (*records.DocRecord, error) {
	for len(c.rows) == 0 {
		if c.r == nil {
			if len(c.chunks) == 0 {
				return nil, nil
			}
			r, err := pqfile.Open[records.DocRecord](c.ctx, c.s, c.chunks[0].Name, docInfo(c.chunks[0]))
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
	return &c.rows[0], nil
}

// peek returns the next document of the current input without consuming
// it, or nil after its last.
func (c *docCursor) peek() (*records.DocRecord, error) {
	r, err := c.row()
	if err != nil || r == nil {
		return nil, err
	}
	i, ok := c.order[r.File]
	for ok && i < c.first { // an input before those written
		c.rows = c.rows[1:]
		if r, err = c.row(); err != nil || r == nil {
			return nil, err
		}
		i, ok = c.order[r.File]
	}
	switch {
	case !ok:
		return nil, fmt.Errorf("docs/ lists document %d (id %q) of %s, which is not among the job's inputs", r.Doc, r.ID, r.File)
	case i < c.cur:
		return nil, fmt.Errorf("%s: docs/ lists document %d (id %q) at offset %d after documents of the inputs that follow it", r.File, r.Doc, r.ID, r.Offset)
	case i > c.cur:
		return nil, nil // a later input's
	case r.Offset <= c.last:
		return nil, fmt.Errorf("%s: docs/ lists document %d at offset %d after one at offset %d: not in the order of the file", c.path, r.Doc, r.Offset, c.last)
	}
	return r, nil
}

// take consumes the document peek returned.
func (c *docCursor) take() records.DocRecord {
	d := c.rows[0]
	c.rows = c.rows[1:]
	c.last = d.Offset
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

// nextOffset is the offset of the current input's next document, or -1
// after its last.
func (c *docCursor) nextOffset() (int64, error) {
	d, err := c.peek()
	if err != nil || d == nil {
		return -1, err
	}
	return d.Offset, nil
}

// finish checks that every document listed for the current input was met.
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

// close releases the docs/ file being read.
func (c *docCursor) close() {
	if c.r != nil {
		c.r.Close()
		c.r = nil
	}
}
