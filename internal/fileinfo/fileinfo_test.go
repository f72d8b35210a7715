package fileinfo

import (
	"bytes"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// TestSummer: a Summer passes its writes through and describes them, with
// their xxhash; a counter, with a checksum of 0.
func TestSummer(t *testing.T) {
	parts := [][]byte{[]byte("records "), {}, bytes.Repeat([]byte{7}, 5000), []byte("trailer")}
	all := bytes.Join(parts, nil)
	for _, tt := range []struct {
		name string
		new  func(w *bytes.Buffer) *Summer
		sum  uint64
	}{
		{"summer", func(w *bytes.Buffer) *Summer { return NewSummer(w) }, xxhash.Sum64(all)},
		{"counter", func(w *bytes.Buffer) *Summer { return NewCounter(w) }, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			s := tt.new(&out)
			for _, p := range parts {
				if n, err := s.Write(p); n != len(p) || err != nil {
					t.Fatalf("Write: %d, %v", n, err)
				}
			}
			want := Info{Name: "f", Rows: 3, Checksum: tt.sum, Bytes: int64(len(all))}
			if got := s.Info("f", 3); got != want || !bytes.Equal(out.Bytes(), all) {
				t.Errorf("Info %+v, wrote %d bytes; want %+v and the bytes written", got, out.Len(), want)
			}
		})
	}
}
