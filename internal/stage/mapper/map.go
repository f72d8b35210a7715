package mapper

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/localfile"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/rates"
	"github.com/neardup/neardup/internal/sigfile"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/textstore"
	"github.com/neardup/neardup/internal/transient"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/bands"
	"github.com/neardup/neardup/pkg/formats"
	"github.com/neardup/neardup/pkg/records"
	"github.com/neardup/neardup/pkg/shingle"
)

// Map reads one chunk, computes every document's signature and band
// keys, and writes the chunk's docs, signatures, rejects and band records.
func Map(ctx context.Context, st storage.FS, spec *job.Spec, chunk job.Chunk) (*job.MapResult, error) {
	return MapShared(ctx, st, spec, chunk, nil)
}

// MapShared is Map with the buffers of bufs (nil: its own): the text
// store's encoder (see textstore.Options.Encoders) and the band records'
// memory.
func MapShared(ctx context.Context, st storage.FS, spec *job.Spec, chunk job.Chunk, bufs *stage.MapBuffers) (*job.MapResult, error) {
	var (
		encs    *textstore.Encoders
		bandBuf *workfile.BandBuffers
	)
	if bufs != nil {
		encs, bandBuf = &bufs.Text, &bufs.Bands
	}
	start := time.Now()
	p := spec.Params
	sk, err := sketch.NewSketcher(p)
	if err != nil {
		return nil, err
	}
	scripts := shingle.NewScripts()
	rule, err := p.Keep.Rule()
	if err != nil {
		return nil, err
	}
	res := &job.MapResult{Chunk: chunk.Index, InputBytes: chunk.Bytes, Scripts: map[string]*job.ScriptStats{}}
	// The documents' texts go to the chunk's text store as they are read:
	// they are most of a chunk's bytes. Verify and query sketch them
	// again (the same sketch: see ModelFingerprint).
	sigs, err := newTextWriter(ctx, st, job.TextFile(chunk.Index), encs)
	if err != nil {
		return nil, err
	}
	defer sigs.abort()
	// With --gather sets, the records verify reads go to the work area
	// too: the sets as sketched here.
	var sets *slotFile[sigfile.Record]
	if p.Gather == job.GatherSets {
		if sets, err = newSetWriter(ctx, st, job.SetWorkFile(chunk.Index)); err != nil {
			return nil, err
		}
		defer sets.abort()
	}
	exact := p.Verify == job.VerifyExact
	// With --shingle-after-strip, a document is sketched without its
	// units that the strip-count stage found in enough documents.
	without, err := stage.LoadWithout(ctx, st, p)
	if err != nil {
		return nil, err
	}
	// Documents go to their file as they are read, and band records in
	// runs of about ChunkBytes of text (at most job.RunText): a chunk that
	// is a whole compressed file, or packs several, holds many times that,
	// and memory must not grow with it.
	docs, err := pqfile.NewWriter[records.DocRecord](ctx, st, job.DocFile(chunk.Index), pqfile.Options{SortedBy: []string{"doc"}, RowGroupRows: docGroupRows})
	if err != nil {
		return nil, err
	}
	defer docs.Abort()
	// What the rates pass at the job's end counts of each document, so
	// that it need not read docs/ again.
	facts, err := rates.NewFactsWriter(ctx, st, job.RatesWorkFile(chunk.Index))
	if err != nil {
		return nil, err
	}
	defer facts.Abort()
	set := bandBuf.Get(p.Partitions)
	runs := &bandRuns{st: st, chunk: chunk.Index, parts: set.Parts, ids: set.IDs, scratch: set.Scratch, res: res}
	defer func() {
		set.Scratch = runs.scratch
		bandBuf.Put(set)
	}()
	// The paragraph pass's unit records go in runs with the band records.
	var units *unitCutter
	if p.Paragraphs {
		if units, err = newUnitCutter(p); err != nil {
			return nil, err
		}
		runs.units = make([][]records.BandRecord, p.Partitions)
	}
	var (
		ndocs   int
		row     [1]records.DocRecord // the document being written
		rejects []records.RejectRecord
		// The document's slots, filled anew for each (the files copy
		// them): one of each for the task, not one a document.
		textSlot textstore.Doc
		setSlot  sigfile.Record
	)
	for _, piece := range chunk.Pieces {
		o := p.ReadOptions()
		o.Field = rule.FieldFor(piece.Kind)
		emit := func(d formats.Doc) error {
			if ndocs >= 1<<32-1 {
				return fmt.Errorf("chunk %d holds more than 2^32-1 documents: lower --chunk-bytes", chunk.Index)
			}
			ord := job.Ordinal(chunk.Index, ndocs)
			ndocs++
			runs.addID(d.ID, ord)
			sketched := d.Text
			if without != nil {
				if sketched, err = without.Text(d.Text); err != nil {
					return fmt.Errorf("document %s: %w", d.ID, err)
				}
			}
			skt := sk.Sketch(sketched)
			set, tokens := skt.Set, skt.Tokens
			row[0] = records.DocRecord{
				Doc: ord, ID: d.ID, URL: d.URL, File: piece.Path, Offset: d.Offset, Line: d.Line,
				Bytes: int64(len(d.Text)), Tokens: int32(min(tokens, 1<<31-1)), Shingles: int32(len(set)),
			}
			if d.CompressedLength > 0 {
				// Copies, so that d stays on the stack.
				off, n := d.CompressedOffset, d.CompressedLength
				row[0].CompressedOffset, row[0].CompressedLength = &off, &n
			}
			var problem string
			row[0].KeepNum, row[0].KeepStr, problem = rankValue(rule, d.Value)
			if problem != "" {
				res.NoteUnranked(unranked(piece, o.Field, d, problem))
			}
			if err := docs.Write(row[:]); err != nil {
				return err
			}
			if err := facts.Add(int64(ndocs-1), d.URL, piece.Path, row[0].Bytes); err != nil {
				return err
			}
			res.TextBytes += int64(len(d.Text))
			res.Shingles += int64(len(set))
			job.AddDoc(res.Scripts, scripts.Dominant(d.Text), int64(len(set)))
			if units != nil {
				if err := units.add(d.Text, ord, runs.units, res); err != nil {
					return err
				}
			}
			if len(set) == 0 {
				res.Empty++
				if sets != nil {
					if err := sets.add(nil); err != nil {
						return err
					}
				}
				return sigs.add(nil)
			}
			fp := skt.FP
			for b, k := range skt.Keys {
				part := bands.Partition(k, p.Partitions)
				runs.parts[part] = append(runs.parts[part], records.BandRecord{
					Band: int32(b), Key: int64(k), Doc: ord, FPHi: int64(fp.Hi), FPLo: int64(fp.Lo),
				})
			}
			if runs.text += int64(len(d.Text)); runs.text >= p.RunBytes() {
				if err := runs.flush(ctx); err != nil {
					return err
				}
			}
			if sets != nil {
				// As sketch.Resketcher makes it from the stored text.
				setSlot = sigfile.Record{ID: d.ID, URL: d.URL, Sig: skt.Sig}
				if exact {
					setSlot.Shingles = skt.SetBytes
				}
				if err := sets.add(&setSlot); err != nil {
					return err
				}
			}
			textSlot = textstore.Doc{ID: d.ID, URL: d.URL, Text: d.Text}
			return sigs.add(&textSlot)
		}
		reject := func(r formats.Reject) error {
			if p.Strict {
				return fmt.Errorf("--strict: rejected record in %s at offset %d (line %d): %s", r.File, r.Offset, r.Line, r.Reason)
			}
			rejects = append(rejects, records.RejectRecord{
				Chunk: int32(chunk.Index), File: r.File, Offset: r.Offset, Line: r.Line, Reason: r.Reason,
			})
			if r.Skipped > 0 || r.Rows > 0 {
				res.DamagedRanges++
				res.DamagedBytes += r.Skipped
				res.DamagedRows += r.Rows
			}
			return nil
		}
		if job.PieceChanged(ctx, piece) && !slices.Contains(res.ChangedFiles, piece.Path) {
			res.ChangedFiles = append(res.ChangedFiles, piece.Path)
		}
		// An error of the task's own (writing its files, or a document it
		// cannot sketch) fails it, unlike the input's: taken as the rest
		// of the piece unreadable, it would go unreported as what it is,
		// and leave a gap in the documents' numbers.
		var emitErr error
		read := func(d formats.Doc) error {
			err := emit(d)
			if err != nil {
				emitErr = err
			}
			return err
		}
		before := len(rejects)
		if err := formats.Read(ctx, piece, o, read, reject); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if emitErr != nil {
				return nil, fmt.Errorf("chunk %d: %s: %w", chunk.Index, piece.Path, emitErr)
			}
			if p.Strict {
				return nil, fmt.Errorf("chunk %d: %w", chunk.Index, err)
			}
			if transient.Is(err) {
				// An object store or a disk out for now: the task is
				// retried; the input is not lost.
				return nil, fmt.Errorf("chunk %d: reading %s: %w", chunk.Index, piece.Path, err)
			}
			// The rest of the piece is unreadable: keep what was read, and
			// record the loss unless the reader already did. A file that
			// is no longer a regular file (a FIFO or a device put in its
			// place since planning) was not opened: the reason says what
			// it is.
			res.UnreadFiles++
			res.UnreadBytes += pieceBytes(ctx, piece)
			if len(rejects) == before {
				reason := "unreadable: " + err.Error()
				if nr := (*localfile.NotRegularError)(nil); errors.As(err, &nr) {
					reason = nr.Reason()
				}
				rejects = append(rejects, records.RejectRecord{
					Chunk: int32(chunk.Index), File: piece.Path, Offset: -1, Reason: reason,
				})
			}
		}
	}
	res.Docs = int64(ndocs)
	res.Rejected = int64(len(rejects))
	for _, r := range rejects {
		if res.RejectReasons == nil {
			res.RejectReasons = map[string]int64{}
		}
		res.RejectReasons[RejectKind(r.Reason)]++
	}

	if err := runs.finish(ctx); err != nil {
		return nil, err
	}
	if res.DocFile, err = docs.Close(); err != nil {
		return nil, err
	}
	info, err := facts.Close()
	if err != nil {
		return nil, err
	}
	res.RatesFile = &info
	if res.SigFile, err = sigs.commit(); err != nil {
		return nil, err
	}
	if sets != nil {
		info, err := sets.commit()
		if err != nil {
			return nil, err
		}
		res.SetFile = &info
	}
	if len(rejects) > 0 {
		info, err := pqfile.Write(ctx, st, job.RejectFile(chunk.Index), rejects, rejectOptions())
		if err != nil {
			return nil, err
		}
		res.RejectFile = &info
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// docGroupRows bounds the rows of a row group of a chunk's document file,
// which its writer holds in memory.
const docGroupRows = 1 << 16

// pieceBytes is the size of a piece in its file: to its planned end, or
// for a piece to the end of its file, the file's size when planned, else
// now (a stat, which works where reading does not); 0 when it cannot be
// known (a file that cannot be found and was planned without its size).
func pieceBytes(ctx context.Context, p formats.Piece) int64 {
	switch {
	case p.End >= 0:
		return p.End - p.Start
	case p.FileSize > 0:
		return max(p.FileSize-p.Start, 0) // as planned: what was to be read
	}
	if size, _, err := storage.StatFile(ctx, p.Path); err == nil {
		return max(size-p.Start, 0)
	}
	return 0
}

// textLevel, textFrameDocs and textFrameBytes are the text store's zstd
// level and frames: frames of up to 8 MiB of documents at zstd's default
// level cost map less CPU than frames of 64 at its fastest and take half
// the bytes on the generated corpora (0.21 against 0.42 bytes a byte of
// text): a larger window finds what the documents of a chunk share, and
// the longer matches it finds are also faster to encode (8 MiB against 4:
// 10% fewer bytes and 10% less CPU; 16 MiB adds 2% and nothing; frames of
// 16 and 32 MiB with a window as large, not bounded to 4096 documents: 7%
// and 14% fewer bytes, no faster a job, the larger buffers touching more
// fresh memory). Reading
// a document alone decodes its frame (about 4 ms, against 0.1-0.2 for a
// frame of 64), which a query pays for each match its cache does not
// hold; what reads many in slot order (gather, a batch of queries)
// decodes each frame once, faster than frames of 64. Smaller frames, or a
// dictionary per chunk, cost more bytes or more CPU (docs/performance.md,
// 2026-11-28 and 2026-11-29).
const (
	textLevel      = zstd.SpeedDefault
	textFrameDocs  = 4096
	textFrameBytes = 8 << 20
)

// slotFile is a file of one slot per document (a text store, a set
// file) written as a stream, described (fileinfo.Info) when committed.
type slotFile[T any] struct {
	name  string
	w     storage.Writer
	sum   *fileinfo.Summer
	bw    *bufio.Writer
	n     int64 // slots written
	put   func(*T) error
	close func() error
}

// newSlotFile creates name; open starts its format on the writer given.
// Unless summed, the file's bytes are counted but not hashed (see
// fileinfo.NewCounter).
func newSlotFile[T any](ctx context.Context, st storage.Creator, name string, bufSize int, summed bool, open func(io.Writer) (put func(*T) error, close func() error, err error)) (*slotFile[T], error) {
	w, err := st.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	sum := fileinfo.NewCounter(w)
	if summed {
		sum = fileinfo.NewSummer(w)
	}
	f := &slotFile[T]{name: name, w: w, sum: sum, bw: bufio.NewWriterSize(sum, bufSize)}
	if f.put, f.close, err = open(f.bw); err != nil {
		w.Abort()
		return nil, err
	}
	return f, nil
}

// add writes the next document's slot; nil leaves it empty. The document
// is copied: its slices may be reused.
func (f *slotFile[T]) add(d *T) error {
	f.n++
	if err := f.put(d); err != nil {
		return fmt.Errorf("writing %s: %w", f.name, err)
	}
	return nil
}

// commit completes the file and describes it.
func (f *slotFile[T]) commit() (fileinfo.Info, error) {
	if err := errors.Join(f.close(), f.bw.Flush()); err != nil {
		return fileinfo.Info{}, fmt.Errorf("writing %s: %w", f.name, err)
	}
	if err := f.w.Commit(); err != nil {
		return fileinfo.Info{}, err
	}
	return f.sum.Info(f.name, f.n), nil
}

// abort discards an uncommitted file (nothing after commit).
func (f *slotFile[T]) abort() { f.w.Abort() }

// newTextWriter starts a chunk's text store.
func newTextWriter(ctx context.Context, st storage.Creator, name string, encs *textstore.Encoders) (*slotFile[textstore.Doc], error) {
	// Its frames, of megabytes, go to the file as they are; the buffer
	// gathers the few small writes.
	return newSlotFile(ctx, st, name, 64<<10, true, func(w io.Writer) (func(*textstore.Doc) error, func() error, error) {
		tw, err := textstore.NewWriter(w, textstore.Options{Level: textLevel, FrameDocs: textFrameDocs, FrameBytes: textFrameBytes, Encoders: encs})
		if err != nil {
			return nil, nil, err
		}
		return tw.Add, tw.Close, nil
	})
}

// newSetWriter starts a chunk's set file (--gather sets): the record of
// each document as verify reads it, its 64-bit shingle set as map
// computed it, so that verify sketches nothing again.
func newSetWriter(ctx context.Context, st storage.Creator, name string) (*slotFile[sigfile.Record], error) {
	// Records of a few KB, written 256 KiB at a time. Verify reads them
	// one at a time, each checked by its own checksum, never the file
	// whole: its 4 KB a document are not hashed a second time.
	return newSlotFile(ctx, st, name, 256<<10, false, func(w io.Writer) (func(*sigfile.Record) error, func() error, error) {
		sw := sigfile.NewWriter(w)
		return sw.Add, sw.Close, nil
	})
}
