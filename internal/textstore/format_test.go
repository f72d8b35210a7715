package textstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
)

// TestReadsFormatV3 reads a file of the format before NDTXT4
// (testdata/ndtxt3.txz), in slot order and backwards, with frames reused
// and not.
func TestReadsFormatV3(t *testing.T) {
	b, err := os.ReadFile("testdata/ndtxt3.txz")
	if err != nil {
		t.Fatal(err)
	}
	if !IsTextStore(b) || !strings.HasSuffix(string(b), MagicV3) {
		t.Fatal("the fixture is not a text store of the format before")
	}
	want := v3Docs()
	for _, reuse := range []bool{false, true} {
		r, err := NewReader(bytes.NewReader(b), int64(len(b)), "old.txz")
		if err != nil {
			t.Fatal(err)
		}
		if reuse {
			r.ReuseFrames()
		}
		if r.Len() != len(want) || len(r.frames) != 4 {
			t.Fatalf("%d slots in %d frames, want %d in 4", r.Len(), len(r.frames), len(want))
		}
		for _, order := range [][2]int{{0, 1}, {len(want) - 1, -1}} {
			for i := order[0]; i >= 0 && i < len(want); i += order[1] {
				got, ok, err := r.Get(i)
				if err != nil {
					t.Fatal(err)
				}
				if w := want[i]; ok != (w != nil) || ok && (got.ID != w.ID || got.URL != w.URL || !bytes.Equal(got.Text, w.Text)) {
					t.Fatalf("reuse %v: slot %d: got %q %q %q, want %+v", reuse, i, got.ID, got.URL, got.Text, w)
				}
			}
		}
		r.Close()
	}
}

// TestFrameLayout checks the bytes of a frame the writer writes: the
// texts of its slots, then their entries, then the entries' length.
func TestFrameLayout(t *testing.T) {
	ds := []*Doc{{ID: "a", URL: "u1", Text: []byte("first text ")}, nil, {ID: "b", Text: []byte("second")}, {ID: "c", URL: "u3"}}
	b := write(t, ds, Options{})
	if !strings.HasSuffix(string(b), Magic) {
		t.Fatalf("the file does not end with %q", Magic)
	}
	r, err := NewReader(bytes.NewReader(b), int64(len(b)), "x.txz")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	raw, err := dec.DecodeAll(b[:r.end], nil)
	if err != nil {
		t.Fatal(err)
	}
	entries := "\x02a\x02u1\x0b" + "\x00" + "\x02b\x00\x06" + "\x02c\x02u3\x00"
	want := "first text second" + entries + string(binary.LittleEndian.AppendUint32(nil, uint32(len(entries))))
	if string(raw) != want {
		t.Fatalf("frame %q, want %q", raw, want)
	}
}

// TestMalformedFrames reads files whose checksums hold but whose frames
// do not: each is an error naming the file and the frame, never a
// document.
func TestMalformedFrames(t *testing.T) {
	le := func(n int) string { return string(binary.LittleEndian.AppendUint32(nil, uint32(n))) }
	for _, tc := range []struct {
		name  string
		frame string
		slots int
	}{
		{"empty frame", "", 1},
		{"entries longer than the frame", "ab" + le(9), 1},
		{"a text beyond the texts", "ab" + "\x02x\x00\x03" + le(4), 1},
		{"texts left over", "abc" + "\x02x\x00\x02" + le(4), 1},
		{"an entry left over", "ab" + "\x02x\x00\x02\x00" + le(5), 1},
		{"a slot missing", "ab" + "\x02x\x00\x02" + le(4), 2},
		{"an id beyond the entries", "ab" + "\x09x\x00\x02" + le(4), 1},
		{"a text length past any frame", "ab" + "\x02x\x00\xff\xff\xff\xff\x0f" + le(8), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := assemble(t, []byte(tc.frame), tc.slots)
			r, err := NewReader(bytes.NewReader(b), int64(len(b)), "bad.txz")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			_, _, err = r.Get(0)
			if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "bad.txz: frame 0") {
				t.Fatalf("error %v, want one naming bad.txz's frame 0 as corrupt", err)
			}
		})
	}
}

// assemble makes a text store of one frame of slots slots that
// decompresses to raw, with right checksums.
func assemble(t *testing.T, raw []byte, slots int) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	comp := enc.EncodeAll(raw, nil)
	enc.Close()
	table := binary.LittleEndian.AppendUint64(nil, 0)
	table = binary.LittleEndian.AppendUint64(table, 0)
	table = binary.LittleEndian.AppendUint64(table, xxhash.Sum64(comp))
	table = binary.LittleEndian.AppendUint64(table, uint64(len(comp)))
	b := append(comp, table...)
	b = binary.LittleEndian.AppendUint64(b, uint64(slots))
	b = binary.LittleEndian.AppendUint64(b, 1)
	b = binary.LittleEndian.AppendUint64(b, xxhash.Sum64(table))
	return append(b, Magic...)
}
