package sketch

import (
	"fmt"
	"slices"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/paragraph"
	"github.com/neardup/neardup/internal/sigfile"
	"github.com/neardup/neardup/internal/textstore"
)

// Resketcher turns a stored document (a text store's) into the record a
// signature file would hold of it: its id, url, signature and, with exact
// verification, shingle set, sketched again as map sketched it. Not safe
// for concurrent use: Fork gives another.
type Resketcher struct {
	sk    *Sketcher
	exact bool
	p     job.Params
	// without, if set, strips a text before it is sketched
	// (--shingle-after-strip), as map stripped it.
	without *paragraph.Without
}

// NewResketcher returns a Resketcher for documents of a job with
// parameters p.
func NewResketcher(p job.Params) (*Resketcher, error) {
	sk, err := NewSketcher(p)
	if err != nil {
		return nil, err
	}
	return &Resketcher{sk: sk, exact: p.Verify == job.VerifyExact, p: p}, nil
}

// Fork returns another Resketcher of the same job, for another goroutine.
func (r *Resketcher) Fork() (*Resketcher, error) {
	f, err := NewResketcher(r.p)
	if err != nil || r.without == nil {
		return f, err
	}
	f.without = r.without.Fork()
	return f, nil
}

// Without makes r sketch each text without the units w strips, as map
// sketched it with --shingle-after-strip.
func (r *Resketcher) Without(w *paragraph.Without) { r.without = w }

// Record sketches d again into its record; its slices are fresh.
func (r *Resketcher) Record(d textstore.Doc) (sigfile.Record, error) {
	s, err := r.sketch(d, true)
	if err != nil {
		return sigfile.Record{}, err
	}
	rec := sigfile.Record{ID: d.ID, URL: d.URL, Sig: slices.Clone(s.Sig)}
	if r.exact {
		rec.Shingles = slices.Clone(s.SetBytes)
	}
	return rec, nil
}

// Entry sketches d again for verification: its record without the
// set's bytes, and, with exact verification, its shingle set (nil
// else), which Record's Shingles would hold encoded. Its slices are
// fresh.
func (r *Resketcher) Entry(d textstore.Doc) (sigfile.Record, []uint64, error) {
	s, err := r.sketch(d, false)
	if err != nil {
		return sigfile.Record{}, nil, err
	}
	var set []uint64
	if r.exact {
		set = slices.Clone(s.Set)
	}
	return sigfile.Record{ID: d.ID, URL: d.URL, Sig: slices.Clone(s.Sig)}, set, nil
}

// sketch sketches d's text, without the units r strips; stored asks for
// the set's bytes and the fingerprint (Sketcher.Sketch).
func (r *Resketcher) sketch(d textstore.Doc, stored bool) (Sketch, error) {
	text := d.Text
	if r.without != nil {
		var err error
		if text, err = r.without.Text(text); err != nil {
			return Sketch{}, fmt.Errorf("document %s: %w", d.ID, err)
		}
	}
	var s Sketch
	if stored {
		s = r.sk.Sketch(text)
	} else {
		s = r.sk.SketchSet(text)
	}
	if len(s.Set) == 0 {
		// Map stores no text for such a document: the model changed.
		return Sketch{}, fmt.Errorf("document %s: its stored text has no shingles under this build's document model", d.ID)
	}
	return s, nil
}

// JudgeRecords judges a pair of signature records by r (see Rule.Judge):
// their signatures decoded with the parameters p of the job that wrote
// them, their shingle sets when both hold them.
func JudgeRecords(r Rule, p job.Params, a, b sigfile.Record) (Verdict, error) {
	var sigs [2]Signature
	var sets [2][]uint64
	for i, rec := range []sigfile.Record{a, b} {
		var err error
		if sigs[i], err = DecodeSignature(p, rec.Sig); err != nil {
			return Verdict{}, fmt.Errorf("document %s: %w", rec.ID, err)
		}
		if sets[i], err = DecodeSet(rec.Shingles); err != nil {
			return Verdict{}, fmt.Errorf("document %s: %w", rec.ID, err)
		}
	}
	return r.Judge(sigs[0], sigs[1], sets[0], sets[1]), nil
}
