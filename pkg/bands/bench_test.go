package bands

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/benchtext"
	"github.com/neardup/neardup/pkg/minhash"
	"github.com/neardup/neardup/pkg/shingle"
)

func readShingleTestdata(b testing.TB, names ...string) string {
	s := ""
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join("..", "shingle", "testdata", name))
		if err != nil {
			b.Fatal(err)
		}
		s += string(data)
	}
	return s
}

func BenchmarkKeys(b *testing.B) {
	for _, p := range []Params{{32, 4}, {16, 8}, {9, 13}, {2, 64}} {
		b.Run(p.String(), func(b *testing.B) {
			sig := make(minhash.Signature, 128)
			for i := range sig {
				sig[i] = uint32(i) * 2654435761
			}
			var keys []uint64
			b.ReportAllocs()
			for b.Loop() {
				keys = Keys(keys[:0], sig, p)
			}
		})
	}
}

// BenchmarkPipeline is the whole per-document path with reused buffers:
// Shingler.Hashes, then a K=128 sketch (K=256 for the "256" variants), then
// band keys (16 bands of 8 rows). Dart is the default sketch.
func BenchmarkPipeline(b *testing.B) {
	opticks := readShingleTestdata(b, "Isaac.Newton-Opticks.txt")
	nonASCII := readShingleTestdata(b, "tutor.ru.utf-8", "tutor.el.utf-8", "tutor.fr.utf-8")
	corpora := []struct {
		name string
		docs [][]byte
	}{
		{"english-300w", benchtext.SplitDocs(opticks, 300, 300, 1)},
		{"short-10-50w", benchtext.SplitDocs(opticks, 10, 50, 2)},
		{"nonascii-300w", benchtext.SplitDocs(nonASCII, 300, 300, 3)},
		// Scripts without spaces, and Hindi, in documents of about the
		// bytes of a 300-word English one.
		{"chinese-1900B", benchtext.SplitBytes(readShingleTestdata(b, "tutor.zh_cn.utf-8"), 1900)},
		{"japanese-1900B", benchtext.SplitBytes(readShingleTestdata(b, "tutor.ja.utf-8"), 1900)},
		{"thai-1900B", benchtext.SplitBytes(strings.Repeat(readShingleTestdata(b, "prose.th.txt"), 6), 1900)},
		{"hindi-1900B", benchtext.SplitBytes(strings.Repeat(readShingleTestdata(b, "prose.hi.txt"), 6), 1900)},
	}
	p := Params{16, 8}
	dart, _ := minhash.NewDart(128, 1)
	classic, _ := minhash.NewClassic(128, 1)
	dart256, _ := minhash.NewDart(256, 1)
	classic256, _ := minhash.NewClassic(256, 1)
	for ci, c := range corpora {
		for _, sk := range []struct {
			name string
			s    minhash.Sketcher
		}{{"dart", dart}, {"classic", classic}, {"dart256", dart256}, {"classic256", classic256}} {
			if ci > 0 && sk.s.K() != 128 {
				continue // K=256 on English only
			}
			b.Run(c.name+"/"+sk.name, func(b *testing.B) {
				sh, _ := shingle.NewShingler(shingle.Options{})
				var (
					hashes []uint64
					sig    minhash.Signature
					keys   []uint64
				)
				bytes, shingles := 0, 0
				run := func() {
					for _, d := range c.docs {
						hashes, _ = sh.Hashes(hashes[:0], d)
						sig = sk.s.Sketch(sig, hashes)
						keys = Keys(keys[:0], sig, p)
					}
				}
				for _, d := range c.docs {
					bytes += len(d)
					hashes, _ = sh.Hashes(hashes[:0], d)
					shingles += len(hashes)
				}
				run()
				b.SetBytes(int64(bytes))
				b.ReportAllocs()
				for b.Loop() {
					run()
				}
				ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				b.ReportMetric(ns/float64(shingles), "ns/shingle")
				b.ReportMetric(float64(shingles)/ns*1e9, "shingles/s")
			})
		}
	}
}

// BenchmarkOptimal is the choice a job makes before it starts, at K = 128.
func BenchmarkOptimal(b *testing.B) {
	for _, t := range []float64{0.5, 0.8} {
		b.Run(strings.TrimPrefix(strings.TrimSuffix(fmt.Sprint(t), "0"), "0."), func(b *testing.B) {
			for b.Loop() {
				if _, err := Optimal(t, 128, 0.05, 0.95); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
