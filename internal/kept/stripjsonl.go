package kept

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/formats"
	"github.com/neardup/neardup/pkg/records"
)

// bom is a UTF-8 byte order mark, which the JSONL reader passes over at
// the start of a file.
const bom = "\xef\xbb\xbf"

// strippedJSONL writes a JSONL file stripped of its repeated units
// (--strip-paragraphs) as JSONL: each kept document's line with its text
// member's value stripped and every other member as it was; a document
// left too short is listed (f.short) instead; the lines of dropped
// documents are left out and the lines that are no documents written
// as they are, as jsonl does. Annotating, a line gets its "neardup"
// member; a duplicate's line (written then) is not stripped. Each
// document's line is read whole before it is chosen (f.write), for a
// document left too short is not written.
func (f *fileJob) strippedJSONL(file storage.File) error {
	gz := gzipShards(f.out)
	texts := formats.NewJSONLText(f.w.params.ReadOptions())
	var value bytes.Buffer // the stripped text as a JSON string
	enc := json.NewEncoder(&value)
	enc.SetEscapeHTML(false)
	var line, built []byte // the document's line; the line written in its place
	write := func(b []byte, start int64) error {
		if _, err := gz.Write(b); err != nil {
			return fmt.Errorf("%s: offset %d: %w", f.in.Path, start, err)
		}
		return nil
	}
	return f.lines(file, f.otherLines, func(records.DocRecord) (bool, error) { return true, nil },
		func(frag []byte, start int64, whole bool) error {
			if whole {
				line = append(line, frag...)
				return nil
			}
			return write(frag, start)
		}, func(d records.DocRecord, start int64) error {
			defer func() { line = line[:0] }()
			out := line
			if !contains(f.w.dups, d.Doc) {
				skip := 0 // the byte order mark the reader passed over
				if start == 0 && bytes.HasPrefix(line, []byte(bom)) {
					skip = len(bom)
				}
				text, from, to, ok := texts.Find(line[skip:])
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
					return nil
				}
				value.Reset()
				if err := enc.Encode(string(stripped)); err != nil { // invalid UTF-8 becomes U+FFFD
					return fmt.Errorf("%s: offset %d: %w", f.in.Path, start, err)
				}
				built = append(append(append(built[:0], line[:skip+from]...), bytes.TrimSuffix(value.Bytes(), []byte("\n"))...), line[skip+to:]...)
				out = built
			}
			if ok, err := f.write(d); err != nil || !ok {
				return err
			}
			if f.w.ann != nil {
				var err error
				if out, err = annotateLine(nil, out, f.annotation()); err != nil {
					return fmt.Errorf("%s: offset %d: %w", f.in.Path, start, err)
				}
			}
			return write(out, start)
		})
}
