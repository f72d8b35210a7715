package kept

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// checkEvery is how many records go by between two checks of the context.
const checkEvery = 1024

// decompress returns the decompressed content of an input file, read
// sequentially from its start, and what releases the decompressor.
func decompress(file storage.File, comp, name string) (io.Reader, func(), error) {
	src := bufio.NewReaderSize(io.NewSectionReader(file, 0, file.Size()), 256<<10)
	switch comp {
	case "gzip":
		zr, err := gzip.NewReader(src)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: offset 0: not a readable gzip stream: %w", name, err)
		}
		return zr, func() { zr.Close() }, nil
	case "zstd":
		zr, err := zstd.NewReader(src, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: offset 0: not a readable zstd stream: %w", name, err)
		}
		return zr, zr.Close, nil
	}
	return src, func() {}, nil
}

// gzipShards has each output file of f written through one gzip stream
// and returns that stream.
func gzipShards(out *shards) *gzip.Writer {
	gz := gzip.NewWriter(io.Discard)
	out.begin = func(w io.Writer) error {
		gz.Reset(w)
		return nil
	}
	out.end = gz.Close
	return gz
}

// jsonl copies the lines of a JSONL file, as they are, except those of
// the documents dropped; annotating, a document's line gets a "neardup"
// member (appendJSON) before its closing brace.
func (f *fileJob) jsonl(file storage.File) error {
	gz := gzipShards(f.out)
	var line []byte // an annotated document's line, wanted whole
	return f.lines(file, f.otherLines, f.write, func(frag []byte, start int64, whole bool) error {
		if whole && f.w.ann != nil {
			line = append(line, frag...)
			return nil
		}
		if _, err := gz.Write(frag); err != nil {
			return fmt.Errorf("%s: offset %d: %w", f.in.Path, start, err)
		}
		return nil
	}, func(d records.DocRecord, start int64) error {
		defer func() { line = line[:0] }()
		if f.w.ann == nil {
			return nil
		}
		out, err := annotateLine(nil, line, f.annotation())
		if err == nil {
			_, err = gz.Write(out)
		}
		if err != nil {
			return fmt.Errorf("%s: offset %d: %w", f.in.Path, start, err)
		}
		return nil
	})
}

// otherLines writes a JSONL file's lines that are no documents (blank,
// rejected) as they are.
func (f *fileJob) otherLines(isDoc bool) (bool, error) {
	if !isDoc {
		return true, f.out.ensure()
	}
	return true, nil
}

// lines reads the lines of a JSONL file, telling each to the caller:
// before a line, other(isDoc) says whether a line that is no document
// is written (isDoc false), and pick(d) whether document d's line is
// (f.write, or a caller's own choice made once it has the line);
// then the line's bytes go to frag, in pieces (whole says it is a
// document's, written), and a document's line written ends with doc.
func (f *fileJob) lines(file storage.File, other func(isDoc bool) (bool, error), pick func(d records.DocRecord) (bool, error),
	frag func(b []byte, start int64, whole bool) error, doc func(d records.DocRecord, start int64) error) error {
	src, done, err := decompress(file, compressionOf(f.in), f.in.Path)
	if err != nil {
		return err
	}
	defer done()
	br := bufio.NewReaderSize(src, 256<<10)
	var off int64
	for n := 1; ; n++ {
		if n%checkEvery == 0 {
			if err := f.ctx.Err(); err != nil {
				return fmt.Errorf("%s: offset %d: %w", f.in.Path, off, err)
			}
		}
		if _, err := br.Peek(1); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("%s: offset %d: %w", f.in.Path, off, err)
		}
		d, isDoc, err := f.docs.at(off)
		if err != nil {
			return err
		}
		write, err := other(isDoc)
		if err == nil && isDoc {
			write, err = pick(d)
		}
		if err != nil {
			return err
		}
		start := off
		for {
			b, err := br.ReadSlice('\n')
			off += int64(len(b))
			if write {
				if ferr := frag(b, start, isDoc); ferr != nil {
					return ferr
				}
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("%s: offset %d: %w", f.in.Path, off, err)
			}
			break
		}
		if write && isDoc {
			if err := doc(d, start); err != nil {
				return err
			}
		}
	}
}

// annotateLine appends to dst the JSON object line with a member
// "neardup" (an, as appendJSON writes it) added before its closing brace;
// the rest of the line, its end of line included, is unchanged.
func annotateLine(dst, line []byte, an *Annotation) ([]byte, error) {
	end := len(bytes.TrimRight(line, " \t\r\n")) - 1
	if end < 0 || line[end] != '}' {
		return nil, errors.New("a document's line does not end with '}'")
	}
	dst = append(dst, line[:end]...)
	if prev := bytes.TrimRight(line[:end], " \t\r\n"); len(prev) > 0 && prev[len(prev)-1] != '{' {
		dst = append(dst, ',')
	}
	dst = append(dst, `"neardup":`...)
	dst = appendJSON(dst, an)
	return append(dst, line[end:]...), nil
}
