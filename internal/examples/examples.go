package examples

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"runtime"
	"slices"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/report"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/formats"
	"github.com/neardup/neardup/pkg/records"
	"golang.org/x/sync/errgroup"
)

// WritePairsPage writes report.PairsFile: the example pairs side by side,
// their texts read from the chunks' text stores (stored: each chunk's
// record file, the job's own and earlier jobs'), or again from the inputs
// where there is none. A text that cannot be read (an input moved or
// changed since) is said so on the page and in the log, and does not
// fail the job.
func WritePairsPage(ctx context.Context, st storage.FS, spec *job.Spec, plan *job.Plan, stored map[int]fileinfo.Info, examples []manifest.Example, log *slog.Logger) error {
	want := map[int64]bool{}
	for _, e := range examples {
		want[e.A], want[e.B] = true, true
	}
	docs, err := exampleDocs(ctx, st, spec, plan, stored, want, log)
	if err != nil {
		return err
	}
	for _, d := range slices.Sorted(maps.Keys(docs)) {
		if docs[d].Err != "" {
			log.Warn("an example pair's text could not be read again", "doc", d, "err", docs[d].Err)
		}
	}
	page, err := report.PairsPage(spec.Params.ShingleOptions(), examples, docs)
	if err != nil {
		return err
	}
	return storage.WriteFile(ctx, st, report.PairsFile, page)
}

// exampleDocs returns the docs/ rows of the wanted documents, with their
// texts: read in place from the job's own inputs where that is a read of
// the record alone (uncompressed JSONL at its offset, a WARC or WET
// record's own gzip member) and the file is as it was planned; else from
// their chunk's text store where stored names one (a frame decoded, 8 MiB
// of text for one document); else read again, each from its input file,
// the files at once.
func exampleDocs(ctx context.Context, st storage.Opener, spec *job.Spec, plan *job.Plan, stored map[int]fileinfo.Info, want map[int64]bool, log *slog.Logger) (map[int64]report.ExampleDoc, error) {
	p := spec.Params
	out := map[int64]report.ExampleDoc{}
	byChunk := map[int][]int64{}
	for d := range want {
		byChunk[job.ChunkOf(d)] = append(byChunk[job.ChunkOf(d)], d)
	}
	var inPlace []inputRead
	for _, c := range slices.Sorted(maps.Keys(byChunk)) {
		name := job.DocFile(c)
		earlier, isEarlier := spec.AgainstOf(job.Ordinal(c, 0))
		if isEarlier { // a document of an earlier job (--against)
			name = job.InMount(earlier, name)
		}
		slices.Sort(byChunk[c])
		err := pqfile.ReadSorted(ctx, st, name, "doc", byChunk[c], func(r *records.DocRecord) int64 { return r.Doc }, func(r records.DocRecord) {
			out[r.Doc] = report.ExampleDoc{Row: r}
		})
		if err != nil {
			return nil, fmt.Errorf("example pairs: %s: %w", name, err)
		}
		for _, d := range byChunk[c] {
			if _, ok := out[d]; !ok {
				return nil, fmt.Errorf("example pairs: %s has no row for document %d", name, d)
			}
		}
		if isEarlier {
			continue // no plan of its job to tell its inputs unchanged
		}
		chunk := planChunk(plan, c)
		for _, d := range byChunk[c] {
			if readsInPlace(ctx, chunk, out[d].Row) {
				inPlace = append(inPlace, inputRead{d, chunk})
			}
		}
	}
	texts, errs := readInputs(ctx, p.ReadOptions(), inPlace, out)
	found := map[int64]bool{}
	for i, r := range inPlace {
		if errs[i] == nil {
			e := out[r.doc]
			e.Text = texts[i]
			out[r.doc], found[r.doc] = e, true
		}
	}

	// The others (and those the inputs no longer hold as they were): from
	// the text stores, else from the inputs.
	var reads []inputRead
	for _, c := range slices.Sorted(maps.Keys(byChunk)) {
		docs := slices.DeleteFunc(byChunk[c], func(d int64) bool { return found[d] })
		if len(docs) == 0 {
			continue
		}
		if info, ok := stored[c]; ok {
			texts, ok, err := index.StoredTexts(ctx, st, info, docs)
			if err != nil {
				// Said, and read from the inputs instead.
				log.Warn("an example pair's text could not be read from its text store", "file", info.Name, "err", err)
			}
			if err == nil && ok {
				for _, d := range docs {
					e := out[d]
					e.Text = texts[d]
					out[d] = e
				}
				continue
			}
		}
		_, isEarlier := spec.AgainstOf(job.Ordinal(c, 0))
		chunk := planChunk(plan, c)
		for _, d := range docs {
			if isEarlier {
				// The earlier job's plan is gone with its work area: its
				// document is read from its file, whole.
				chunk = wholeFile(ctx, p, c, out[d].Row.File)
			}
			reads = append(reads, inputRead{d, chunk})
		}
	}
	texts, errs = readInputs(ctx, p.ReadOptions(), reads, out)
	for i, r := range reads {
		e := out[r.doc]
		e.Text = texts[i]
		if errs[i] != nil {
			e.Err = errs[i].Error()
		}
		out[r.doc] = e
	}
	return out, nil
}

// inputRead is a document to read again from its input, in chunk.
type inputRead struct {
	doc   int64
	chunk *job.Chunk
}

// planChunk returns the chunk c of plan, nil if it has none.
func planChunk(plan *job.Plan, c int) *job.Chunk {
	for i := range plan.Chunks {
		if plan.Chunks[i].Index == c {
			return &plan.Chunks[i]
		}
	}
	return nil
}

// readsInPlace tells whether the text of docs/ row r, of chunk, is read
// again from its input by reading its record alone (an uncompressed JSONL
// record from its offset, a record that is a gzip member of its own from
// that member), from a file whose size and modification time are those
// it had when the job was planned.
func readsInPlace(ctx context.Context, chunk *job.Chunk, r records.DocRecord) bool {
	pc, err := pieceOf(chunk, r)
	if err != nil || pc.FileMTime == 0 {
		return false
	}
	alone := pc.Kind == formats.KindJSONL && !formats.IsCompressed(pc.Path, pc.Compression) ||
		r.CompressedOffset != nil && r.CompressedLength != nil
	return alone && !job.PieceChanged(ctx, *pc)
}

// readInputs reads the texts of reads again from their inputs, the files
// at once: each text into its own slot; the texts of one compressed JSONL
// file in one pass (see skimTexts). A text not read has its error.
func readInputs(ctx context.Context, o formats.Options, reads []inputRead, out map[int64]report.ExampleDoc) ([]string, []error) {
	texts, errs := make([]string, len(reads)), make([]error, len(reads))
	var skims [][]int // indices of reads, by file, each by offset
	byFile := map[string]int{}
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, r := range reads {
		if pc := skimmable(r.chunk, out[r.doc].Row); pc != nil {
			k, ok := byFile[pc.Path]
			if !ok {
				k = len(skims)
				byFile[pc.Path] = k
				skims = append(skims, nil)
			}
			skims[k] = append(skims[k], i)
			continue
		}
		g.Go(func() error {
			texts[i], errs[i] = readText(ctx, o, r.chunk, out[r.doc].Row)
			return nil
		})
	}
	for _, idx := range skims {
		g.Go(func() error {
			slices.SortFunc(idx, func(x, y int) int { return cmp.Compare(out[reads[x].doc].Row.Offset, out[reads[y].doc].Row.Offset) })
			rows := make([]records.DocRecord, len(idx))
			for j, i := range idx {
				rows[j] = out[reads[i].doc].Row
			}
			got := skimTexts(ctx, o, *skimmable(reads[idx[0]].chunk, rows[0]), rows)
			for j, i := range idx {
				if got[j] != nil {
					texts[i] = *got[j]
					continue
				}
				// Not found so: read as any other record, which says why.
				texts[i], errs[i] = readText(ctx, o, reads[i].chunk, rows[j])
			}
			return nil
		})
	}
	g.Wait()
	return texts, errs
}

// wholeFile is a chunk of one piece, the whole of file, its kind told
// as the job tells an input's; nil if it cannot be told.
func wholeFile(ctx context.Context, p job.Params, c int, file string) *job.Chunk {
	f, err := formats.Detect(ctx, p.ReadOptions().Open, file, p.InputKind())
	if err != nil {
		return nil
	}
	pc := formats.Piece{Path: file, Kind: f.Kind, End: -1, StartLine: 1, Compression: f.Compression}
	return &job.Chunk{Index: c, Pieces: []formats.Piece{pc}}
}

// errFound stops a read once the record is found.
var errFound = errors.New("found")

// readText reads the text of the document of docs/ row r again from its
// input, the piece of chunk that holds it: a record of uncompressed JSONL
// from its offset, a WARC or WET record that is a gzip member of its own
// from that member, any other by reading its file up to it. The document
// read must have r's offset and id.
func readText(ctx context.Context, o formats.Options, chunk *job.Chunk, r records.DocRecord) (string, error) {
	piece, err := pieceOf(chunk, r)
	if err != nil {
		return "", err
	}
	pc, at := *piece, r.Offset
	switch {
	case pc.Kind == formats.KindJSONL && !formats.IsCompressed(pc.Path, pc.Compression):
		pc.Start, pc.StartLine = r.Offset, r.Line
	case r.CompressedOffset != nil && r.CompressedLength != nil:
		// The record's own gzip member, read as if it were the file.
		off, n, open := *r.CompressedOffset, *r.CompressedLength, o.Open
		o.Open = func(ctx context.Context, path string) (formats.File, error) {
			f, err := open(ctx, path)
			if err != nil {
				return nil, err
			}
			return memberFile{io.NewSectionReader(f, off, n), f}, nil
		}
		pc.Start, pc.End, at = 0, -1, 0
	}
	return readRecord(ctx, pc, o, at, r)
}

// pieceOf returns the piece of chunk that holds the document of docs/ row
// r.
func pieceOf(chunk *job.Chunk, r records.DocRecord) (*formats.Piece, error) {
	if chunk == nil {
		return nil, fmt.Errorf("%s: offset %d: no chunk of the plan holds document %d", r.File, r.Offset, r.Doc)
	}
	var piece *formats.Piece
	for i, pc := range chunk.Pieces {
		if pc.Path == r.File && pc.Start <= r.Offset && (pc.End < 0 || r.Offset < pc.End) {
			piece = &chunk.Pieces[i]
		}
	}
	if piece == nil {
		return nil, fmt.Errorf("%s: offset %d: not in chunk %d", r.File, r.Offset, chunk.Index)
	}
	return piece, nil
}

// readRecord reads piece pc up to the record at offset at, which must be
// the document of docs/ row r, and returns its text.
func readRecord(ctx context.Context, pc formats.Piece, o formats.Options, at int64, r records.DocRecord) (string, error) {
	var text string
	found := false
	emit := func(d formats.Doc) error {
		if d.Offset < at {
			return nil
		}
		if d.Offset > at || d.ID != r.ID {
			return fmt.Errorf("the record there is %q at offset %d, not %q", d.ID, d.Offset, r.ID)
		}
		text, found = string(d.Text), true
		return errFound
	}
	reject := func(x formats.Reject) error {
		if x.Offset == at {
			return fmt.Errorf("the record is rejected now: %s", x.Reason)
		}
		return nil
	}
	err := formats.Read(ctx, pc, o, emit, reject)
	if errors.Is(err, errFound) {
		err = nil
	}
	if err == nil && !found {
		err = errors.New("no record there")
	}
	if err != nil {
		return "", fmt.Errorf("%s: offset %d: %w", r.File, r.Offset, err)
	}
	return text, nil
}

// memberFile is a byte range of an input file (one gzip member) seen as a
// whole file.
type memberFile struct {
	*io.SectionReader
	f formats.File
}

func (m memberFile) Close() error { return m.f.Close() }
