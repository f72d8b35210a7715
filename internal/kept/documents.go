package kept

import (
	"context"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/formats"
)

// docRow is what a document of a WARC, WET or text file is written as in
// FormatJSONL (an object) and FormatParquet (a row): its id, URL and text,
// as the job read them (formats.Doc); a URL the input has not is null.
type docRow struct {
	ID   string  `parquet:"id" json:"id"`
	URL  *string `parquet:"url,optional" json:"url"`
	Text string  `parquet:"text" json:"text"`
}

// documents reads a WARC, WET or text file as the job read it
// (formats.Read, with the job's options) and writes its documents that
// are kept as docRows: JSON objects or Parquet rows. Records that are no
// documents of the job (rejected, not documents) are not written.
func (f *fileJob) documents(file storage.File) error {
	schema := parquet.SchemaOf(docRow{})
	var sink rowSink
	if f.w.format == FormatJSONL {
		sink = newJSONSink(f, schema)
	} else {
		sink = newParquetSink(f, schema)
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
		if write, err := f.write(d); err != nil || !write {
			return err
		}
		r := docRow{ID: doc.ID, Text: string(doc.Text)}
		if doc.URL != "" {
			r.URL = &doc.URL
		}
		if err := sink.add(schema.Deconstruct(nil, &r), f.annotation()); err != nil {
			return fmt.Errorf("%s: offset %d: %w", f.in.Path, doc.Offset, err)
		}
		return sink.flush()
	}
	if err := formats.Read(f.ctx, piece, o, emit, func(formats.Reject) error { return nil }); err != nil {
		return err
	}
	return nil
}

// sectionFile is a section of an open file as a formats.File, whose Close
// leaves the file open.
type sectionFile struct{ *io.SectionReader }

func (sectionFile) Close() error { return nil }
