package sketch

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/minhash"
	"github.com/neardup/neardup/pkg/simhash"
)

func resolved(t *testing.T, set func(*job.Params)) job.Params {
	t.Helper()
	p := job.DefaultParams()
	set(&p)
	if err := p.Resolve(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMinHashSigner checks that a MinHash signer returns K values and one
// key per band, the same for the same set, and a signature that decodes
// back to the values the sketch computes.
func TestMinHashSigner(t *testing.T) {
	for _, sketch := range []job.Sketch{job.SketchDart, job.SketchClassic} {
		t.Run(sketch.String(), func(t *testing.T) {
			p := resolved(t, func(p *job.Params) { p.Sketch, p.K, p.Bands, p.Rows = sketch, 64, 16, 4 })
			sg, err := newSigner(p)
			if err != nil {
				t.Fatal(err)
			}
			if sg.counts() {
				t.Error("a MinHash signer wants the set, not the counts")
			}
			set := []uint64{3, 17, 99, 1 << 40, 1<<63 + 5}
			sig, keys := sg.sign(set, nil)
			if len(sig) != 4*p.K || len(keys) != p.Bands {
				t.Fatalf("%d signature bytes and %d keys, want %d and %d", len(sig), len(keys), 4*p.K, p.Bands)
			}
			sig, keys = slices.Clone(sig), slices.Clone(keys)
			sig2, keys2 := sg.sign(slices.Clone(set), []uint64{42})
			if !slices.Equal(sig, sig2) || !slices.Equal(keys2, append([]uint64{42}, keys...)) {
				t.Error("the same set signed twice differs, or keys were not appended")
			}
			other, otherKeys := sg.sign([]uint64{4, 18, 100}, nil)
			if slices.Equal(sig, other) || slices.Equal(keys, otherKeys) {
				t.Error("two unrelated sets have the same signature or keys")
			}
			mh, _ := newMinhasher(p)
			e, err := DecodeSignature(p, sig)
			if err != nil {
				t.Fatal(err)
			}
			if want := mh.Sketch(nil, set); !slices.Equal(e.MinHash, want) {
				t.Errorf("decoded %v, sketch %v", e.MinHash, want)
			}
		})
	}
}

// TestSimHashSigner checks the SimHash signer: a little-endian 64-bit
// fingerprint, of the set or, with tf weights, of the counts, and one key
// per block.
func TestSimHashSigner(t *testing.T) {
	// Ones three times and zero twice: as a set ({ones, 0}) every bit
	// ties and is 0; counted, every bit has votes +3 -2 and is 1.
	hashes := []uint64{^uint64(0), 0, ^uint64(0), 0, ^uint64(0)}
	tests := []struct {
		weights job.Weights
		counts  bool
		want    uint64
	}{
		{"none", false, 0},
		{"tf", true, ^uint64(0)},
	}
	for _, tt := range tests {
		t.Run(tt.weights.String(), func(t *testing.T) {
			p := resolved(t, func(p *job.Params) { p.Method, p.SimHashWeights, p.Hamming = "simhash", tt.weights, 5 })
			sg, err := newSigner(p)
			if err != nil {
				t.Fatal(err)
			}
			if sg.counts() != tt.counts {
				t.Errorf("counts() = %v, want %v", sg.counts(), tt.counts)
			}
			sig, keys := sg.sign(slices.Clone(hashes), nil)
			if len(sig) != 8 || binary.LittleEndian.Uint64(sig) != tt.want {
				t.Fatalf("signature %x, want fingerprint %x", sig, tt.want)
			}
			blocks, _ := simhash.NewBlocks(5)
			if want := blocks.Keys(nil, tt.want); !slices.Equal(keys, want) || len(keys) != p.Bands {
				t.Errorf("keys %v, want %v (%d bands)", keys, want, p.Bands)
			}
			if e, err := DecodeSignature(p, sig); err != nil || e.SimHash != tt.want {
				t.Errorf("decoded %x (%v), want %x", e.SimHash, err, tt.want)
			}
		})
	}
}

// TestScreen checks what the signatures say of a pair: MinHash the
// fraction of equal values, passing at the threshold itself; SimHash the
// Hamming distance, passing up to --hamming.
func TestScreen(t *testing.T) {
	sig := func(vals ...uint32) Signature { return Signature{MinHash: minhash.Signature(vals)} }
	fp := func(v uint64) Signature { return Signature{SimHash: v} }
	base := sig(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	minhashAt := func(t float64) job.Params {
		p := job.DefaultParams()
		p.Threshold, p.Verify = t, job.VerifyEstimate
		return p
	}
	simhashAt := func(k int) job.Params {
		p := job.DefaultParams()
		p.Method, p.Hamming, p.Verify = "simhash", k, job.VerifyEstimate
		return p
	}
	tests := []struct {
		name string
		p    job.Params
		a, b Signature
		want Screening
	}{
		{"8 of 10 equal at threshold 0.8", minhashAt(0.8), base, sig(1, 2, 3, 4, 5, 6, 7, 8, 0, 0),
			Screening{Estimate: 0.8, Hamming: -1, SigPass: true}},
		{"8 of 10 equal at threshold 0.81", minhashAt(0.81), base, sig(1, 2, 3, 4, 5, 6, 7, 8, 0, 0),
			Screening{Estimate: 0.8, Hamming: -1, SigPass: false}},
		{"identical", minhashAt(1), base, sig(1, 2, 3, 4, 5, 6, 7, 8, 9, 10),
			Screening{Estimate: 1, Hamming: -1, SigPass: true}},
		{"equal values at other positions do not count", minhashAt(0.1), base, sig(10, 9, 8, 7, 6, 5, 4, 3, 2, 1),
			Screening{Estimate: 0, Hamming: -1, SigPass: false}},
		{"different lengths", minhashAt(0.1), base, sig(1, 2, 3),
			Screening{Estimate: 0, Hamming: -1, SigPass: false}},
		{"distance 3 of 3", simhashAt(3), fp(0b1011 << 60), fp(0b0001<<60 | 1),
			Screening{Estimate: 1 - 3.0/64, Hamming: 3, SigPass: true}},
		{"distance 4 of 3", simhashAt(3), fp(0), fp(0xF0),
			Screening{Estimate: 1 - 4.0/64, Hamming: 4, SigPass: false}},
		{"distance 0", simhashAt(0), fp(0xDEADBEEF), fp(0xDEADBEEF),
			Screening{Estimate: 1, Hamming: 0, SigPass: true}},
		{"complement", simhashAt(15), fp(0x0F0F), fp(^uint64(0x0F0F)),
			Screening{Estimate: 0, Hamming: 64, SigPass: false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRule(tt.p)
			if got := r.Screen(tt.a, tt.b, 10, 10); got != tt.want {
				t.Errorf("Screen = %+v, want %+v", got, tt.want)
			}
			if got := r.Screen(tt.b, tt.a, 10, 10); got != tt.want {
				t.Errorf("Screen (b, a) = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestDecodeErrors checks that a stored signature or shingle set of the
// wrong size is an error, not a short value.
func TestDecodeErrors(t *testing.T) {
	mh := job.DefaultParams()
	sh := job.DefaultParams()
	sh.Method = "simhash"
	if _, err := DecodeSignature(mh, make([]byte, 4*128+2)); err == nil {
		t.Error("MinHash signature of 514 bytes decoded")
	}
	for _, n := range []int{0, 7, 9, 16} {
		if _, err := DecodeSignature(sh, make([]byte, n)); err == nil {
			t.Errorf("SimHash fingerprint of %d bytes decoded", n)
		}
	}
	if _, err := DecodeSet(make([]byte, 12)); err == nil {
		t.Error("shingle set of 12 bytes decoded")
	}
	set := []uint64{0, 1, 1 << 32, ^uint64(0)}
	if got, err := DecodeSet(AppendSet(nil, set)); err != nil || !slices.Equal(got, set) {
		t.Errorf("set round trip: %v, %v", got, err)
	}
	if got, err := DecodeSig(AppendSig(nil, minhash.Signature{0, 7, 1<<32 - 1})); err != nil || !slices.Equal(got, minhash.Signature{0, 7, 1<<32 - 1}) {
		t.Errorf("signature round trip: %v, %v", got, err)
	}
}

// TestCollided checks the count and lowest band of equal band keys.
func TestCollided(t *testing.T) {
	for _, tt := range []struct {
		name     string
		a, b     []uint64
		n, first int32
	}{
		{"none", []uint64{1, 2, 3}, []uint64{4, 5, 6}, 0, -1},
		{"all", []uint64{1, 2, 3}, []uint64{1, 2, 3}, 3, 0},
		{"last", []uint64{1, 2, 3}, []uint64{4, 5, 3}, 1, 2},
		{"two", []uint64{1, 2, 3, 4}, []uint64{0, 2, 0, 4}, 2, 1},
		{"empty", nil, nil, 0, -1},
	} {
		if n, first := Collided(tt.a, tt.b); n != tt.n || first != tt.first {
			t.Errorf("%s: collided = %d, %d; want %d, %d", tt.name, n, first, tt.n, tt.first)
		}
	}
}
