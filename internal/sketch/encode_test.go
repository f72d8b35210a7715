package sketch

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/pkg/minhash"
)

// TestDecodeSetAndSig checks that sets and signatures decode to what was
// encoded, from stored bytes at every alignment, and that the bytes are
// little-endian whatever the machine: the values read one by one from
// them.
func TestDecodeSetAndSig(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 7, 128, 401} {
		set := make([]uint64, n)
		sig := make(minhash.Signature, n)
		for i := range set {
			set[i], sig[i] = rng.Uint64(), rng.Uint32()
		}
		for off := range 8 {
			b := AppendSet(make([]byte, off), set)[off:]
			for i, v := range set {
				if got := binary.LittleEndian.Uint64(b[8*i:]); got != v {
					t.Fatalf("n %d: value %d stored as %#x, want %#x", n, i, got, v)
				}
			}
			got, err := DecodeSet(b)
			if err != nil || !slices.Equal(got, set) || len(got) != n {
				t.Errorf("n %d, offset %d: DecodeSet = %d values (%v), want %d", n, off, len(got), err, n)
			}
			s := AppendSig(make([]byte, off), sig)[off:]
			for i, v := range sig {
				if got := binary.LittleEndian.Uint32(s[4*i:]); got != v {
					t.Fatalf("n %d: signature value %d stored as %#x, want %#x", n, i, got, v)
				}
			}
			gotSig, err := DecodeSig(s)
			if err != nil || !slices.Equal(gotSig, sig) || len(gotSig) != n {
				t.Errorf("n %d, offset %d: DecodeSig = %d values (%v), want %d", n, off, len(gotSig), err, n)
			}
		}
	}
}
