package kept

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/formats"
)

// strippedJSONL writes a JSONL file stripped of its repeated units
// (--strip-paragraphs) as JSONL: each kept document's line with its text
// member's value stripped and every other member as it was; a document
// left too short is listed (f.short) instead; the lines of dropped
// documents are left out and the lines that are no documents written
// as they are, as jsonl does. Annotating, a line gets its "neardup"
// member; a duplicate's line (written then) is not stripped.
func (f *fileJob) strippedJSONL(file storage.File) error {
	src, done, err := decompress(file, compressionOf(f.in), f.in.Path)
	if err != nil {
		return err
	}
	defer done()
	gz := gzipShards(f.out)
	texts := formats.NewJSONLText(f.w.params.ReadOptions())
	br := bufio.NewReaderSize(src, 256<<10)
	var line, out, value []byte
	var off int64
	for n := 1; ; n++ {
		if n%checkEvery == 0 {
			if err := f.ctx.Err(); err != nil {
				return fmt.Errorf("%s: offset %d: %w", f.in.Path, off, err)
			}
		}
		start := off
		line = line[:0]
		for {
			b, err := br.ReadSlice('\n')
			line = append(line, b...)
			off += int64(len(b))
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("%s: offset %d: %w", f.in.Path, off, err)
			}
			break
		}
		if len(line) == 0 {
			return nil
		}
		d, isDoc, err := f.docs.at(start)
		if err != nil {
			return err
		}
		if !isDoc {
			if err := f.out.ensure(); err != nil {
				return err
			}
			if _, err := gz.Write(line); err != nil {
				return fmt.Errorf("%s: offset %d: %w", f.in.Path, start, err)
			}
			continue
		}
		out = append(out[:0], line...)
		if !contains(f.w.dups, d.Doc) {
			bom := 0 // a UTF-8 byte order mark the reader passed over
			if start == 0 && bytes.HasPrefix(line, []byte("\xef\xbb\xbf")) {
				bom = 3
			}
			text, from, to, ok := texts.Find(trimEOL(line[bom:]))
			if !ok {
				return fmt.Errorf("%s: offset %d: docs/ places document %d (id %q) here, but the line has no text member the job read", f.in.Path, start, d.Doc, d.ID)
			}
			stripped, chars, short, err := f.w.strip.strip(d.Doc, text)
			if err != nil {
				return fmt.Errorf("%s: offset %d: %w", f.in.Path, start, err)
			}
			if short {
				f.sum.Docs++
				f.sum.Short++
				f.short = append(f.short, ShortDoc{Doc: d.Doc, ID: d.ID, Chars: int64(chars), Reason: f.w.strip.shortReason(chars)})
				continue
			}
			if value, err = jsonString(value[:0], stripped); err != nil {
				return fmt.Errorf("%s: offset %d: %w", f.in.Path, start, err)
			}
			out = append(append(append(out[:0], line[:bom+from]...), value...), line[bom+to:]...)
		}
		if write, err := f.write(d); err != nil || !write {
			if err != nil {
				return err
			}
			continue
		}
		if f.w.ann != nil {
			if out, err = annotateLine(nil, out, f.annotation()); err != nil {
				return fmt.Errorf("%s: offset %d: %w", f.in.Path, start, err)
			}
		}
		if _, err := gz.Write(out); err != nil {
			return fmt.Errorf("%s: offset %d: %w", f.in.Path, start, err)
		}
	}
}

// trimEOL is line without its line end.
func trimEOL(line []byte) []byte {
	for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
		line = line[:len(line)-1]
	}
	return line
}

// jsonString appends text to dst as a JSON string, as encoding/json
// writes it without escaping HTML (invalid UTF-8 becomes U+FFFD).
func jsonString(dst, text []byte) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(string(text)); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
