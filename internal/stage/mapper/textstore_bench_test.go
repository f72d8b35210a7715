package mapper

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/textstore"
	"github.com/neardup/neardup/internal/worktest"
	"github.com/neardup/neardup/pkg/formats"
)

// cpuTime is the process's user and system time: on a shared machine, a
// steadier measure than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkTextStore writes and reads a text store of the documents of
// $NEARDUP_TEXT_CORPUS (e.g. the 100k benchmark corpus) at each zstd level
// and frame size: B/doc, and the CPU time a document to encode and to
// decode every slot in order (the process's, the collector's included),
// at the settings that chose textLevel, textFrameDocs and textFrameBytes
// (docs/performance.md, 2026-11-28 and 2026-11-29):
//
//	NEARDUP_TEXT_CORPUS=/work/main/.cache/bench/corpus-100000-1 go test -run - -bench TextStore -benchtime 1x -count 3 ./internal/stage/mapper
//
// A dictionary per chunk, which textstore does not offer, was measured
// by a throwaway program (the same page).
func BenchmarkTextStore(b *testing.B) {
	dir := os.Getenv("NEARDUP_TEXT_CORPUS")
	if dir == "" {
		b.Skip("NEARDUP_TEXT_CORPUS is not set")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl.gz"))
	var docs []*textstore.Doc
	for _, p := range worktest.WholeChunk(0, files...).Pieces {
		err := formats.Read(context.Background(), p, job.DefaultParams().ReadOptions(), func(d formats.Doc) error {
			docs = append(docs, &textstore.Doc{ID: d.ID, URL: d.URL, Text: bytes.Clone(d.Text)})
			return nil
		}, func(formats.Reject) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
	}
	perDoc := func(b *testing.B, cpu time.Duration) {
		b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N*len(docs)), "cpu-ns/doc")
	}
	for _, c := range []struct {
		level     zstd.EncoderLevel
		frameDocs int
		frameMiB  int
	}{
		{zstd.SpeedFastest, 64, 1}, {zstd.SpeedDefault, 64, 1}, {zstd.SpeedDefault, 4096, 1},
		{zstd.SpeedDefault, 4096, 2}, {zstd.SpeedDefault, 4096, 4}, {zstd.SpeedBetterCompression, 4096, 4},
		{zstd.SpeedDefault, 4096, 16}, {textLevel, textFrameDocs, textFrameBytes >> 20},
	} {
		level, frame := c.level, c.frameDocs
		o := textstore.Options{Level: level, FrameDocs: frame, FrameBytes: c.frameMiB << 20}
		var file []byte
		b.Run(fmt.Sprintf("level=%s/frame=%d,%dMiB/write", level, frame, c.frameMiB), func(b *testing.B) {
			cpu := cpuTime()
			for range b.N {
				var buf bytes.Buffer
				w, err := textstore.NewWriter(&buf, o)
				if err != nil {
					b.Fatal(err)
				}
				for _, d := range docs {
					if err := w.Add(d); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				file = buf.Bytes()
			}
			perDoc(b, cpu)
			b.ReportMetric(float64(len(file))/float64(len(docs)), "B/doc")
		})
		b.Run(fmt.Sprintf("level=%s/frame=%d,%dMiB/read", level, frame, c.frameMiB), func(b *testing.B) {
			cpu := cpuTime()
			for range b.N {
				r, err := textstore.NewReader(bytes.NewReader(file), int64(len(file)), "bench")
				if err != nil {
					b.Fatal(err)
				}
				for i := range r.Len() {
					if _, _, err := r.Get(i); err != nil {
						b.Fatal(err)
					}
				}
				r.Close()
			}
			perDoc(b, cpu)
		})
	}
}
