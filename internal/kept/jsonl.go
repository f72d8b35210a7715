package kept

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/storage"
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
// member (appendJSON) before its closing brace. With FormatParquet it
// writes a jsonlRecord row for each document instead (lines that are not
// documents have no row).
func (f *fileJob) jsonl(file storage.File) error {
	src, done, err := decompress(file, compressionOf(f.in), f.in.Path)
	if err != nil {
		return err
	}
	defer done()
	var (
		gz    *gzip.Writer
		sink  *parquetSink
		rows  = f.w.o.Format == FormatParquet
		br    = bufio.NewReaderSize(src, 256<<10)
		off   int64
		line  []byte // a line wanted whole
		field = f.w.params.TextField
	)
	schema := parquet.SchemaOf(jsonlRecord{})
	if rows {
		sink = newParquetSink(f, schema)
	} else {
		gz = gzipShards(f.out)
	}
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
		write := true
		switch {
		case isDoc:
			write, err = f.write(d)
		case rows:
			write = false
		default:
			err = f.out.ensure()
		}
		if err != nil {
			return err
		}
		whole := write && isDoc && (rows || f.w.ann != nil)
		start := off
		line = line[:0]
		for {
			frag, err := br.ReadSlice('\n')
			off += int64(len(frag))
			switch {
			case whole:
				line = append(line, frag...)
			case write:
				if _, werr := gz.Write(frag); werr != nil {
					return fmt.Errorf("%s: offset %d: %w", f.in.Path, start, werr)
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
		if !whole {
			continue
		}
		var an *Annotation
		if f.w.ann != nil {
			an = &f.an
		}
		if rows {
			err = sink.add(jsonlRow(schema, line, d.ID, d.URL, field), an)
			if err == nil && len(sink.held) >= 1024 {
				err = sink.flush()
			}
		} else {
			var out []byte
			if out, err = annotateLine(nil, line, an); err == nil {
				_, err = gz.Write(out)
			}
		}
		if err != nil {
			return fmt.Errorf("%s: offset %d: %w", f.in.Path, start, err)
		}
	}
}

// jsonlRecord is the row a JSONL document becomes with FormatParquet: its
// id and URL as the job read them, its text, and its line as it is (every
// member, unchanged; without its line end).
type jsonlRecord struct {
	ID   string  `parquet:"id"`
	URL  *string `parquet:"url,optional"`
	Text string  `parquet:"text"`
	JSON string  `parquet:"json"`
}

// jsonlRow is the row of schema (jsonlRecord's) of a document's line; its
// text is the member field.
func jsonlRow(schema *parquet.Schema, line []byte, id, url, field string) parquet.Row {
	line = bytes.TrimPrefix(bytes.TrimRight(line, "\r\n"), []byte("\xef\xbb\xbf"))
	r := jsonlRecord{ID: id, JSON: string(line)}
	if url != "" {
		r.URL = &url
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(line, &members) == nil {
		json.Unmarshal(members[field], &r.Text) // a document's text is a string
	}
	return schema.Deconstruct(nil, &r)
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
