package kept

import (
	"context"
	"fmt"
	"io"

	"github.com/neardup/neardup/internal/storage"
)

// shards are the output files of one input file: one, or a new one every
// per documents. Each appears whole, under its name, when it is complete.
// An encoder may wrap each file (begin when it starts, end before it is
// committed).
type shards struct {
	ctx   context.Context
	fs    storage.Creator
	stem  string
	ext   string
	per   int64 // documents per file; 0: one file
	w     storage.Writer
	name  string // the current file's, "" when none is open
	docs  int64  // documents in the current file
	names []string
	bytes int64 // written to every file, the current one too
	begin func(w io.Writer) error
	end   func() error
}

func newShards(ctx context.Context, fs storage.Creator, stem, ext string, per int64) *shards {
	return &shards{ctx: ctx, fs: fs, stem: stem, ext: ext, per: per}
}

// Write writes to the current file, which ensure or forDoc opened.
func (s *shards) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.bytes += int64(n)
	if err != nil {
		err = fmt.Errorf("write %s: %w", s.name, err)
	}
	return n, err
}

// ensure opens a file if none is open, for what comes before a document.
func (s *shards) ensure() error {
	if s.name != "" {
		return nil
	}
	name := s.stem + s.ext
	if s.per > 0 {
		name = fmt.Sprintf("%s-%05d%s", s.stem, len(s.names), s.ext)
	}
	w, err := s.fs.Create(s.ctx, name)
	if err != nil {
		return err
	}
	s.w, s.name, s.docs = w, name, 0
	if s.begin != nil {
		if err := s.begin(s); err != nil {
			s.abort()
			return err
		}
	}
	return nil
}

// full reports whether the next document starts a new file.
func (s *shards) full() bool { return s.name != "" && s.per > 0 && s.docs >= s.per }

// forDoc makes room for one more document: it opens a file, or a new one
// when the current one holds per documents.
func (s *shards) forDoc() error {
	if s.full() {
		if err := s.commit(); err != nil {
			return err
		}
	}
	if err := s.ensure(); err != nil {
		return err
	}
	s.docs++
	return nil
}

// commit completes the current file.
func (s *shards) commit() error {
	if s.end != nil {
		if err := s.end(); err != nil {
			s.abort()
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	if err := s.w.Commit(); err != nil {
		s.name = ""
		return err
	}
	s.names = append(s.names, s.name)
	s.name = ""
	return nil
}

// finish completes the last file, if one is open.
func (s *shards) finish() error {
	if s.name == "" {
		return nil
	}
	return s.commit()
}

// abort discards the current file.
func (s *shards) abort() {
	if s.name != "" {
		s.w.Abort()
		s.name = ""
	}
}
