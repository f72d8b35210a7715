package kept

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/paragraph"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// ShortDir holds the lists of the documents that stripping left too
// short (--min-kept-chars), one file per input file that has any:
// ShortDir/NNNNN-STEM.parquet, rows of ShortDoc.
const ShortDir = "short"

// ShortDoc is a document dropped because stripping its repeated units
// left it too short.
type ShortDoc struct {
	Doc    int64  `parquet:"doc"`
	ID     string `parquet:"id"`
	Chars  int64  `parquet:"chars"`
	Reason string `parquet:"reason"`
}

// stripper strips the repeated units of the documents written
// (--strip-paragraphs): it holds the hash of every unit held by at least
// MinCount documents, with the first document holding it (16 bytes a
// unit: the repeated units of the job, not its units).
type stripper struct {
	cut   *paragraph.Cutter
	units map[uint64]int64
	o     job.Strip
	// Units and Bytes count what was stripped.
	Units, Bytes int64
}

// CheckStrip refuses stripping into a format that keeps records as they
// are: a stripped document is written as a document (id, url, text).
func CheckStrip(s *job.Strip, format string) error {
	if s != nil && format != FormatJSONL && format != FormatParquet {
		return fmt.Errorf("--strip-paragraphs writes each document's id, url and stripped text: it needs --format jsonl or parquet, not %s", format)
	}
	return nil
}

// loadStripper reads the units to strip from the job's paragraphs/
// files (each checked against its writer's record where known).
func loadStripper(ctx context.Context, src storage.Opener, files []fileinfo.Info, p job.Params, s job.Strip) (*stripper, error) {
	if !p.Paragraphs {
		return nil, fmt.Errorf("--strip-paragraphs: the job ran no paragraph pass (--paragraphs): it found no repeated units to strip")
	}
	cut, err := paragraph.NewCutter(p.ParagraphUnit, p.ShingleOptions())
	if err != nil {
		return nil, err
	}
	st := &stripper{cut: cut, units: map[uint64]int64{}, o: s}
	for _, f := range files {
		err := pqfile.Stream(ctx, src, f.Name, docInfo(f), 4096, func(rows []records.Paragraph) error {
			for _, r := range rows {
				if r.Holders >= int64(s.MinCount) {
					st.units[uint64(r.UnitHash)] = r.FirstDoc
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("the repeated units to strip: %w", err)
		}
	}
	return st, nil
}

// paragraphFiles lists a finished job's paragraphs/ files.
func paragraphFiles(ctx context.Context, s *storage.Dir) ([]fileinfo.Info, error) {
	names, err := s.List(ctx, job.ParagraphsDir)
	if err != nil {
		return nil, err
	}
	var files []fileinfo.Info
	for _, n := range names {
		if strings.HasSuffix(n, ".parquet") {
			files = append(files, fileinfo.Info{Name: n})
		}
	}
	return files, nil
}

// strip returns the text of document doc without its units to strip;
// short, when stripping left fewer than MinKeptChars characters (of the
// text trimmed of white space), and their number.
func (s *stripper) strip(doc int64, text []byte) (out []byte, chars int, short bool, err error) {
	stripped, err := s.cut.Strip(string(text), func(u paragraph.Unit) bool {
		first, ok := s.units[u.Hash]
		if !ok || s.o.KeepFirst && first == doc {
			return false
		}
		s.Units++
		s.Bytes += int64(u.Length)
		return true
	})
	if err != nil {
		return nil, 0, false, err
	}
	chars = utf8.RuneCountInString(strings.TrimSpace(stripped))
	return []byte(stripped), chars, chars < s.o.MinKeptChars, nil
}

// shortReason says why a document of chars characters left was dropped.
func (s *stripper) shortReason(chars int) string {
	return fmt.Sprintf("%d characters left after stripping its repeated units, fewer than --min-kept-chars %d", chars, s.o.MinKeptChars)
}

// writeShort writes the list of an input's documents left too short.
func (f *fileJob) writeShort(i int) error {
	if len(f.short) == 0 {
		return nil
	}
	name := fmt.Sprintf("%s/%05d-%s.parquet", ShortDir, i, stem(f.in.Path))
	if _, err := pqfile.Write(f.ctx, f.w.dst, name, f.short, pqfile.Sorted("doc")); err != nil {
		return err
	}
	f.sum.ShortFile = name
	return nil
}
