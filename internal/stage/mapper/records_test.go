package mapper

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/internal/worktest"
	"github.com/neardup/neardup/pkg/formats"
	"github.com/neardup/neardup/pkg/records"
)

// TestTextStoreSketchesAgain maps a generated corpus and checks that every
// document read back from the chunk's text store is the document read,
// and sketches again to exactly what map computed of it: the record
// (signature, shingle set) a signature file held, and the band keys and
// fingerprint of its band records.
func TestTextStoreSketchesAgain(t *testing.T) {
	ctx := context.Background()
	chunk := worktest.WholeChunk(2, generated(t, 1500, 3)...)
	for _, tc := range []struct {
		name string
		set  func(p *job.Params)
	}{
		{"minhash exact", func(p *job.Params) {}},
		{"minhash estimate classic", func(p *job.Params) { p.Verify, p.Sketch = "estimate", "classic" }},
		{"simhash tf", func(p *job.Params) { p.Method, p.SimHashWeights = "simhash", "tf" }},
		{"char-grams", func(p *job.Params) { p.CharGrams = 5 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := worktest.Resolved(t, func(p *job.Params) { p.Partitions = 4; tc.set(p) })
			st := worktest.NewStore(t)
			res, err := Map(ctx, st, &job.Spec{Params: p}, chunk)
			if err != nil {
				t.Fatal(err)
			}
			// What map computed, from the documents as read.
			sk, err := sketch.NewSketcher(p)
			if err != nil {
				t.Fatal(err)
			}
			var texts [][]byte
			var want []sketch.Sketch
			for _, piece := range chunk.Pieces {
				err := formats.Read(ctx, piece, p.ReadOptions(), func(d formats.Doc) error {
					s := sk.Sketch(d.Text)
					texts = append(texts, bytes.Clone(d.Text))
					want = append(want, sketch.Sketch{Set: slices.Clone(s.Set), SetBytes: slices.Clone(s.SetBytes), Sig: slices.Clone(s.Sig), Keys: slices.Clone(s.Keys), FP: s.FP})
					return nil
				}, func(formats.Reject) error { return nil })
				if err != nil {
					t.Fatal(err)
				}
			}
			byDoc := map[int64][]records.BandRecord{}
			for _, b := range readRunFiles(t, st, res, p.Partitions) {
				byDoc[b.Doc] = append(byDoc[b.Doc], b)
			}

			rr, done, err := index.OpenRecords(ctx, st, res.SigFile, p)
			if err != nil {
				t.Fatal(err)
			}
			defer done()
			cf, closeFile, err := index.OpenRecordFile(ctx, st, res.SigFile)
			if err != nil {
				t.Fatal(err)
			}
			defer closeFile()
			if rr.Len() != len(want) || cf.Text() == nil {
				t.Fatalf("%d slots, %d documents read; text store: %v", rr.Len(), len(want), cf.Text() != nil)
			}
			empty := 0
			for i, w := range want {
				ord := job.Ordinal(2, i)
				rec, ok, err := rr.Record(i)
				if err != nil {
					t.Fatal(err)
				}
				if ok != (len(w.Set) > 0) {
					t.Fatalf("slot %d: record %v, %d shingles", i, ok, len(w.Set))
				}
				if !ok {
					empty++
					continue
				}
				wantSet := w.SetBytes
				if p.Verify != job.VerifyExact {
					wantSet = nil
				}
				if !bytes.Equal(rec.Sig, w.Sig) || !bytes.Equal(rec.Shingles, wantSet) {
					t.Fatalf("slot %d: the stored text sketches to another signature or set", i)
				}
				d, _, err := cf.Text().Get(i)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(d.Text, texts[i]) {
					t.Fatalf("slot %d: stored text differs from the text read", i)
				}
				again := sk.Sketch(d.Text)
				bands := byDoc[ord]
				slices.SortFunc(bands, func(x, y records.BandRecord) int { return int(x.Band - y.Band) })
				if len(bands) != len(again.Keys) {
					t.Fatalf("slot %d: %d band records, %d keys sketched again", i, len(bands), len(again.Keys))
				}
				for b, k := range again.Keys {
					if bands[b].Key != int64(k) || bands[b].FPHi != int64(again.FP.Hi) {
						t.Fatalf("slot %d band %d: key %x fp %x, map wrote %x %x (band records keep 64 bits of it)", i, b, k, again.FP.Hi, bands[b].Key, bands[b].FPHi)
					}
				}
			}
			if empty == len(want) || len(want) < 1000 {
				t.Fatalf("%d documents, %d empty: the corpus tests nothing", len(want), empty)
			}
			if cf.Text().Decoded() == 0 {
				t.Fatal("no frame decoded")
			}
			t.Logf("%d documents, %d empty, %d frames decoded in order", len(want), empty, cf.Text().Decoded())
		})
	}
}
