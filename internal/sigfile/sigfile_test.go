package sigfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/cespare/xxhash/v2"
)

func build(t *testing.T, recs []*Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, r := range recs {
		if err := w.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestRecordLayout pins a record's bytes to the layout the package
// documents: each field uvarint-prefixed, then the xxhash of them all.
func TestRecordLayout(t *testing.T) {
	for _, r := range []Record{
		{},
		{ID: "a", URL: "https://example.org/", Sig: []byte{1, 2, 3, 4}, Shingles: bytes.Repeat([]byte{7, 9}, 300)},
		{ID: string(bytes.Repeat([]byte("i"), 200)), Shingles: []byte{5}},
	} {
		var body []byte
		for _, f := range [][]byte{[]byte(r.ID), []byte(r.URL), r.Sig, r.Shingles} {
			body = binary.AppendUvarint(body, uint64(len(f)))
			body = append(body, f...)
		}
		want := binary.LittleEndian.AppendUint64(body, xxhash.Sum64(body))
		var buf bytes.Buffer
		if err := NewWriter(&buf).Add(&r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("record %q: wrote %x, want %x", r.ID, buf.Bytes(), want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	var recs []*Record
	for i := range 50 {
		if i%7 == 3 {
			recs = append(recs, nil)
			continue
		}
		recs = append(recs, &Record{ID: fmt.Sprintf("doc-%d", i), Sig: bytes.Repeat([]byte{byte(i)}, 4*i), Shingles: bytes.Repeat([]byte{1}, i)})
	}
	data := build(t, recs)
	r, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != len(recs) {
		t.Fatalf("Len = %d", r.Len())
	}
	for i, want := range recs {
		got, ok, err := r.Get(i)
		if err != nil {
			t.Fatal(err)
		}
		if ok != (want != nil) {
			t.Fatalf("slot %d: ok = %v", i, ok)
		}
		if ok && (got.ID != want.ID || !bytes.Equal(got.Sig, want.Sig) || !bytes.Equal(got.Shingles, want.Shingles)) {
			t.Fatalf("slot %d: %+v, want %+v", i, got, want)
		}
	}
	// AppendRaw into one buffer, after a prefix: each record whole
	// after it, the prefix kept, the buffer as it was for an empty slot.
	prefix := []byte("prefix")
	buf := prefix
	for i, want := range recs {
		raw, ok, err := r.AppendRaw(buf[:len(prefix)], i)
		if err != nil || ok != (want != nil) {
			t.Fatalf("AppendRaw slot %d: ok %v, %v", i, ok, err)
		}
		if !bytes.Equal(raw[:len(prefix)], prefix) {
			t.Fatalf("AppendRaw slot %d: the prefix became %q", i, raw[:len(prefix)])
		}
		if !ok {
			if len(raw) != len(prefix) {
				t.Fatalf("AppendRaw empty slot %d: %d bytes, want the prefix's %d", i, len(raw), len(prefix))
			}
			continue
		}
		got, err := Decode(raw[len(prefix):])
		if err != nil || got.ID != want.ID || !bytes.Equal(got.Sig, want.Sig) || !bytes.Equal(got.Shingles, want.Shingles) {
			t.Fatalf("AppendRaw slot %d: %+v (%v), want %+v", i, got, err, want)
		}
		buf = raw
	}
	if _, _, err := r.Get(len(recs)); err == nil {
		t.Fatal("Get past the end succeeded")
	}
	empty := build(t, nil)
	if r, err := NewReader(bytes.NewReader(empty), int64(len(empty))); err != nil || r.Len() != 0 {
		t.Fatalf("empty file: %v", err)
	}
}

func TestCorruption(t *testing.T) {
	data := build(t, []*Record{{ID: "a", Sig: []byte("sig"), Shingles: []byte("set")}, {ID: "b"}})
	tests := []struct {
		name   string
		damage func([]byte) []byte
		atGet  bool
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)-5] }, false},
		{"no trailer", func(b []byte) []byte { return b[:10] }, false},
		{"index flipped", func(b []byte) []byte { b[len(b)-30] ^= 1; return b }, false},
		{"record flipped", func(b []byte) []byte { b[2] ^= 1; return b }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.damage(bytes.Clone(data))
			r, err := NewReader(bytes.NewReader(b), int64(len(b)))
			if !tt.atGet {
				if !errors.Is(err, ErrCorrupt) && err == nil {
					t.Fatalf("NewReader accepted a damaged file")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := r.Get(0); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Get of a damaged record: %v", err)
			}
		})
	}
}

func FuzzReader(f *testing.F) {
	f.Add(build(&testing.T{}, []*Record{{ID: "x", Sig: []byte{1, 2}}, nil}))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		for i := range min(r.Len(), 100) {
			r.Get(i)
		}
	})
}
