package kept

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/formats"
)

// A document of a WARC, WET or text file is written, in FormatJSONL and
// FormatParquet, as its id, URL and text as the job read them
// (formats.Doc): a JSON object {"id", "url", "text"} or a row of the
// string columns id, url, text, in that order (those of a JSONL line with
// these members, so that DuckDB reads a corpus of both as one table); a
// URL the input has not is null.

// docObject is the JSON object of a document; Neardup is its annotation.
type docObject struct {
	ID      string          `json:"id"`
	URL     *string         `json:"url"`
	Text    string          `json:"text"`
	Neardup json.RawMessage `json:"neardup,omitempty"`
}

// docTable is the table of the rows of documents.
func docTable() *table {
	t := &table{}
	for _, name := range []string{"id", "url", "text"} {
		t.cols = append(t.cols, column{name: name, kinds: kindString, typ: colString})
	}
	t.build()
	return t
}

// docWriter writes documents as JSON objects or Parquet rows.
type docWriter interface {
	add(d formats.Doc, an *Annotation) error
}

// docLines writes documents as JSON lines, gzipped.
type docLines struct {
	gz  io.Writer
	buf bytes.Buffer
	enc *json.Encoder
}

func (w *docLines) add(d formats.Doc, an *Annotation) error {
	o := docObject{ID: d.ID, Text: string(d.Text)}
	if d.URL != "" {
		o.URL = &d.URL
	}
	if an != nil {
		o.Neardup = appendJSON(nil, an)
	}
	w.buf.Reset()
	if err := w.enc.Encode(o); err != nil {
		return err
	}
	_, err := w.gz.Write(w.buf.Bytes())
	return err
}

// docRows writes documents as Parquet rows of docTable.
type docRows struct {
	sink *parquetSink
}

func (w docRows) add(d formats.Doc, an *Annotation) error {
	row := make(parquet.Row, 3)
	row[0] = parquet.ByteArrayValue([]byte(d.ID)).Level(0, 1, 0)
	row[1] = parquet.NullValue().Level(0, 0, 1)
	if d.URL != "" {
		row[1] = parquet.ByteArrayValue([]byte(d.URL)).Level(0, 1, 1)
	}
	row[2] = parquet.ByteArrayValue(bytes.Clone(d.Text)).Level(0, 1, 2)
	if err := w.sink.add(row, an); err != nil {
		return err
	}
	if len(w.sink.held) >= 1024 {
		return w.sink.flush()
	}
	return nil
}

// documents reads a WARC, WET or text file as the job read it
// (formats.Read, with the job's options) and writes its documents that
// are kept as JSON objects or Parquet rows. Records that are no documents
// of the job (rejected, not documents) are not written.
func (f *fileJob) documents(file storage.File) error {
	var w docWriter
	if f.w.format == FormatJSONL {
		dl := &docLines{gz: gzipShards(f.out)}
		dl.enc = json.NewEncoder(&dl.buf)
		dl.enc.SetEscapeHTML(false)
		w = dl
	} else {
		w = docRows{sink: newParquetSink(f, docTable().schema)}
	}
	o := f.w.params.ReadOptions()
	// The file already open is read, not one opened again by its name.
	o.Open = func(context.Context, string) (formats.File, error) {
		return sectionFile{io.NewSectionReader(file, 0, file.Size())}, nil
	}
	piece := formats.Piece{Path: f.in.Path, Kind: f.in.Kind, Start: 0, End: -1, StartLine: 1, Compression: f.in.Compression,
		FileSize: f.in.Size, FileMTime: f.in.ModTime}
	n := 0
	emit := func(doc formats.Doc) error {
		if n++; n%checkEvery == 0 {
			if err := f.ctx.Err(); err != nil {
				return fmt.Errorf("%s: offset %d: %w", f.in.Path, doc.Offset, err)
			}
		}
		d, isDoc, err := f.docs.at(doc.Offset)
		if err != nil || !isDoc {
			return err
		}
		if d.ID != doc.ID {
			return fmt.Errorf("%s: offset %d: docs/ places document %d (id %q) here, but the record there is %q", f.in.Path, doc.Offset, d.Doc, d.ID, doc.ID)
		}
		if st := f.w.strip; st != nil && !contains(f.w.dups, d.Doc) {
			text, chars, short, err := st.strip(d.Doc, doc.Text)
			if err != nil {
				return fmt.Errorf("%s: offset %d: %w", f.in.Path, doc.Offset, err)
			}
			if short {
				f.sum.Docs++
				f.sum.Short++
				f.short = append(f.short, ShortDoc{Doc: d.Doc, ID: d.ID, Chars: int64(chars), Reason: st.shortReason(chars)})
				return nil
			}
			doc.Text = text
		}
		if write, err := f.write(d); err != nil || !write {
			return err
		}
		if err := w.add(doc, f.annotation()); err != nil {
			return fmt.Errorf("%s: offset %d: %w", f.in.Path, doc.Offset, err)
		}
		return nil
	}
	return formats.Read(f.ctx, piece, o, emit, func(formats.Reject) error { return nil })
}

// sectionFile is a section of an open file as a formats.File, whose Close
// leaves the file open.
type sectionFile struct{ *io.SectionReader }

func (sectionFile) Close() error { return nil }
