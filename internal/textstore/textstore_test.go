package textstore

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/klauspost/compress/zstd"
)

// docs returns n documents, every seventh slot empty, some texts long.
func docs(n int) []*Doc {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the quick brown fox jumps over a lazy dog while zebras graze near the river bank")
	out := make([]*Doc, n)
	for i := range out {
		if i%7 == 3 {
			continue
		}
		var b strings.Builder
		for range rng.IntN(400) + (i%50/49)*40000 {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		out[i] = &Doc{ID: fmt.Sprintf("doc-%d", i), URL: fmt.Sprintf("https://example.org/%d", i), Text: []byte(b.String())}
	}
	return out
}

func write(t *testing.T, ds []*Doc, o Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if err := w.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		n int
		o Options
	}{
		{0, Options{}},
		{1, Options{}},
		{64, Options{}},
		{65, Options{}},
		{1000, Options{}},
		{1000, Options{Level: zstd.SpeedFastest, FrameDocs: 16}},
		{300, Options{FrameBytes: 5000}},
	} {
		t.Run(fmt.Sprintf("%d-%d-%d", tc.n, tc.o.FrameDocs, tc.o.FrameBytes), func(t *testing.T) {
			ds := docs(tc.n)
			b := write(t, ds, tc.o)
			r, err := NewReader(bytes.NewReader(b), int64(len(b)), "x.txz")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Len() != tc.n {
				t.Fatalf("Len %d, want %d", r.Len(), tc.n)
			}
			for i, want := range ds {
				got, ok, err := r.Get(i)
				if err != nil {
					t.Fatal(err)
				}
				if ok != (want != nil) {
					t.Fatalf("slot %d: ok %v", i, ok)
				}
				if ok && (got.ID != want.ID || got.URL != want.URL || !bytes.Equal(got.Text, want.Text)) {
					t.Fatalf("slot %d: got %q, want %q", i, got.ID, want.ID)
				}
			}
			if len(r.frames) > 0 && r.Decoded() != len(r.frames) {
				t.Errorf("reading in order decoded %d frames, the file has %d", r.Decoded(), len(r.frames))
			}
			if _, _, err := r.Get(tc.n); err == nil {
				t.Error("slot past the end: no error")
			}
		})
	}
}

// TestDamage flips bytes all over a file and truncates it: every read is
// either right or an error naming the file.
func TestDamage(t *testing.T) {
	ds := docs(200)
	good := write(t, ds, Options{})
	check := func(b []byte, what string) {
		r, err := NewReader(bytes.NewReader(b), int64(len(b)), "chunk-7.txz")
		if err == nil {
			defer r.Close()
			for i, want := range ds {
				var got Doc
				var ok bool
				if got, ok, err = r.Get(i); err != nil {
					break
				}
				if ok != (want != nil) || ok && (got.ID != want.ID || got.URL != want.URL || !bytes.Equal(got.Text, want.Text)) {
					t.Fatalf("%s: slot %d read wrong, no error", what, i)
				}
			}
		}
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		if !strings.Contains(err.Error(), "chunk-7.txz") || !errors.Is(err, ErrCorrupt) && !strings.Contains(err.Error(), "EOF") {
			t.Fatalf("%s: error %v does not name the file as corrupt", what, err)
		}
	}
	step := max(1, len(good)/300)
	for off := 0; off < len(good); off += step {
		b := bytes.Clone(good)
		b[off] ^= 0x20
		check(b, fmt.Sprintf("byte %d flipped", off))
	}
	for _, n := range []int{0, 10, len(good) / 2, len(good) - 1} {
		check(good[:n], fmt.Sprintf("truncated to %d", n))
	}
}

func TestRecord(t *testing.T) {
	for i, d := range docs(100) {
		if d == nil {
			continue
		}
		raw := AppendRecord([]byte("prefix"), *d)[len("prefix"):]
		got, err := DecodeRecord(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != d.ID || got.URL != d.URL || !bytes.Equal(got.Text, d.Text) {
			t.Fatalf("doc %d changed", i)
		}
		bad := bytes.Clone(raw)
		bad[len(bad)/2] ^= 1
		if _, err := DecodeRecord(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("doc %d damaged: %v", i, err)
		}
	}
}

// mapFrames is a FrameCache without a bound.
type mapFrames map[string]*Frame

func (m mapFrames) Frame(key string) (*Frame, bool) { f, ok := m[key]; return f, ok }
func (m mapFrames) AddFrame(key string, f *Frame)   { m[key] = f }

// TestShareFrames checks that readers sharing a frame cache decode a frame
// once between them, read the same documents as a reader alone, and keep
// files of different keys apart.
func TestShareFrames(t *testing.T) {
	ds := docs(300)
	a := write(t, ds, Options{FrameDocs: 64})
	b := write(t, docs(300)[1:], Options{FrameDocs: 64}) // other documents in the same slots
	cache := mapFrames{}
	open := func(file []byte, key string) *Reader {
		r, err := NewReader(bytes.NewReader(file), int64(len(file)), key)
		if err != nil {
			t.Fatal(err)
		}
		r.ShareFrames(cache, key)
		return r
	}
	slots := []int{200, 3, 130, 201, 5, 298}
	first, second, other := open(a, "a"), open(a, "a"), open(b, "b")
	for _, s := range slots {
		for _, r := range []*Reader{first, second, other} {
			d, ok, err := r.Get(s)
			if err != nil {
				t.Fatal(err)
			}
			src := ds
			if r == other {
				src = ds[1:]
			}
			want := src[s]
			if ok != (want != nil) || ok && (d.ID != want.ID || !bytes.Equal(d.Text, want.Text)) {
				t.Errorf("%s slot %d: got %q (ok %v), want %+v", r.name, s, d.ID, ok, want)
			}
		}
	}
	// Frames 3, 0, 2, 3, 0, 4 (a reader alone keeps one: six decodings);
	// with the cache each of 0, 2, 3, 4 once a file, and the second
	// reader of a finds them all.
	if first.Decoded() != 4 || second.Decoded() != 0 || other.Decoded() != 4 {
		t.Errorf("decoded %d, %d and %d frames, want 4, 0 and 4", first.Decoded(), second.Decoded(), other.Decoded())
	}
}

// TestSharedEncoders checks that writers lent their encoders by Encoders,
// one after another and at once, write the very bytes of writers with
// encoders of their own, and that a finished writer's encoder is lent
// again.
func TestSharedEncoders(t *testing.T) {
	ds := docs(300)
	for _, o := range []Options{{}, {Level: zstd.SpeedFastest, FrameDocs: 1 << 20, FrameBytes: 64 << 10}} {
		want := write(t, ds, o)
		shared := o
		shared.Encoders = &Encoders{}
		for round := range 3 {
			if got := write(t, ds, shared); !bytes.Equal(got, want) {
				t.Fatalf("level %v, round %d: a writer with a lent encoder wrote other bytes", o.Level, round)
			}
		}
		level := o.Level
		if level == 0 {
			level = zstd.SpeedDefault
		}
		if n := len(shared.Encoders.free[level]); n != 1 {
			t.Errorf("%d idle encoders after writers one after another, want 1", n)
		}
		done := make(chan []byte)
		for range 4 {
			go func() {
				var buf bytes.Buffer
				w, err := NewWriter(&buf, shared)
				if err == nil {
					for _, d := range ds {
						if err = w.Add(d); err != nil {
							break
						}
					}
				}
				if err == nil {
					err = w.Close()
				}
				if err != nil {
					t.Error(err)
				}
				done <- buf.Bytes()
			}()
		}
		for range 4 {
			if got := <-done; !bytes.Equal(got, want) {
				t.Errorf("level %v: writers at once wrote other bytes", o.Level)
			}
		}
	}
}

// TestSharedEncodersLargeDocument checks that a writer whose frame buffer
// a large document grew past twice a frame's room gives its encoder back
// without that buffer, and that the next writer still writes the bytes
// of a writer of its own.
func TestSharedEncodersLargeDocument(t *testing.T) {
	o := Options{FrameBytes: 64 << 10}
	large := []*Doc{{ID: "large", Text: bytes.Repeat([]byte("a large document "), 3*(64<<10)/16)}}
	ds := docs(40) // none as large as docs' 50th
	shared := o
	shared.Encoders = &Encoders{}
	if got, want := write(t, large, shared), write(t, large, o); !bytes.Equal(got, want) {
		t.Fatal("a writer with a lent encoder wrote other bytes of a large document")
	}
	idle := shared.Encoders.free[zstd.SpeedDefault]
	if len(idle) != 1 || idle[0].raw != nil {
		t.Fatalf("after a large document: %d idle encoders, the first keeping a buffer of %d bytes; want 1 keeping none", len(idle), cap(idle[0].raw))
	}
	if got, want := write(t, ds, shared), write(t, ds, o); !bytes.Equal(got, want) {
		t.Fatal("a writer lent the encoder of a large document's writer wrote other bytes")
	}
	if idle := shared.Encoders.free[zstd.SpeedDefault]; cap(idle[0].raw) == 0 {
		t.Errorf("the encoder lent again kept no frame buffer (%d idle, raw %d, comp %d)", len(idle), cap(idle[0].raw), cap(idle[0].comp))
	}
}

// TestReuseFrames checks that a reader decoding each frame into the
// memory of the one before (ReuseFrames) reads every slot in order as a
// reader of fresh frames does, and that it does reuse that memory.
func TestReuseFrames(t *testing.T) {
	ds := docs(300)
	b := write(t, ds, Options{FrameDocs: 16})
	fresh, err := NewReader(bytes.NewReader(b), int64(len(b)), "fresh.txz")
	if err != nil {
		t.Fatal(err)
	}
	reusing, err := NewReader(bytes.NewReader(b), int64(len(b)), "reusing.txz")
	if err != nil {
		t.Fatal(err)
	}
	reusing.ReuseFrames()
	moved := 0 // frames decoded into other memory than the last one's
	var last *byte
	for i := range ds {
		want, wok, werr := fresh.Get(i)
		got, gok, gerr := reusing.Get(i)
		if werr != nil || gerr != nil || wok != gok || got.ID != want.ID || got.URL != want.URL || !bytes.Equal(got.Text, want.Text) {
			t.Fatalf("slot %d: %+v, %v, %v; want %+v, %v, %v", i, got, gok, gerr, want, wok, werr)
		}
		if raw := reusing.cache[0].raw; cap(raw) > 0 {
			if p := unsafe.SliceData(raw); p != last {
				if last != nil && i%16 == 0 {
					// A new frame: in the last one's memory when it fitted.
					moved++
				}
				last = p
			}
		}
	}
	if fresh.Decoded() != reusing.Decoded() {
		t.Errorf("decoded %d frames, want %d", reusing.Decoded(), fresh.Decoded())
	}
	if frames := fresh.Decoded(); moved >= frames-1 {
		t.Errorf("%d of %d frames in new memory: the reader does not reuse it", moved, frames)
	}
}
