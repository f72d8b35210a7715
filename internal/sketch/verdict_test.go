package sketch

import (
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/minhash"
	"github.com/neardup/neardup/pkg/shingle"
)

// TestRuleExact checks the steps of the verdict with exact verification:
// what the signatures and the sizes reject, what goes to the sets, and the
// threshold itself passing.
func TestRuleExact(t *testing.T) {
	p := job.DefaultParams()
	if err := p.Resolve(); err != nil {
		t.Fatal(err)
	}
	k := p.K
	same := make(minhash.Signature, k)
	other := make(minhash.Signature, k)
	for i := range same {
		same[i], other[i] = uint32(i), uint32(i+k)
	}
	half := make(minhash.Signature, k)
	copy(half, same[:k/2])
	copy(half[k/2:], other[k/2:])
	sig := func(s minhash.Signature) Signature { return Signature{MinHash: s} }
	simhashP := p
	simhashP.Method, simhashP.Hamming = job.MethodSimHash, 3

	tests := []struct {
		name           string
		p              job.Params
		a, b           Signature
		na, nb         int
		rejected, sets bool
	}{
		{"equal signatures, equal sizes", p, sig(same), sig(same), 100, 100, false, true},
		{"no equal value: the pre-filter rejects", p, sig(same), sig(other), 100, 100, true, false},
		{"half equal at 0.8: the pre-filter rejects", p, sig(same), sig(half), 100, 100, true, false},
		{"sizes 79 and 100 cannot reach 0.8", p, sig(same), sig(same), 79, 100, true, false},
		{"sizes 80 and 100 can", p, sig(same), sig(same), 80, 100, false, true},
		{"SimHash within the bound", simhashP, Signature{SimHash: 0}, Signature{SimHash: 0b111}, 50, 50, false, true},
		{"SimHash beyond the bound", simhashP, Signature{SimHash: 0}, Signature{SimHash: 0b1111}, 50, 50, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewRule(tt.p).Screen(tt.a, tt.b, tt.na, tt.nb)
			if s.Rejected != tt.rejected || s.NeedsSets != tt.sets {
				t.Errorf("Screen = %+v, want rejected %v, needs sets %v", s, tt.rejected, tt.sets)
			}
		})
	}

	r := NewRule(p)
	for _, tc := range []struct {
		inter, na, nb int
		pass          bool
	}{
		{80, 100, 80, true},  // 80/100: the threshold itself
		{79, 100, 80, false}, // 79/101
		{0, 0, 0, false},
	} {
		if _, pass := r.Similarity(tc.inter, tc.na, tc.nb); pass != tc.pass {
			t.Errorf("Similarity(%d, %d, %d) passes %v, want %v", tc.inter, tc.na, tc.nb, pass, tc.pass)
		}
	}
}

// TestRuleJudge checks the whole verdict on sets: exact when both sets
// are known, by the signatures when not, and at another threshold.
func TestRuleJudge(t *testing.T) {
	p := job.DefaultParams()
	if err := p.Resolve(); err != nil {
		t.Fatal(err)
	}
	set := func(lo, hi uint64) []uint64 {
		var s []uint64
		for v := lo; v < hi; v++ {
			s = append(s, v*0x9E3779B97F4A7C15)
		}
		return shingle.SortUnique(s)
	}
	sk, err := newMinhasher(p)
	if err != nil {
		t.Fatal(err)
	}
	a, b := set(0, 100), set(10, 110) // 90 common of 110: J = 0.818
	sa, sb := Signature{MinHash: sk.Sketch(nil, a)}, Signature{MinHash: sk.Sketch(nil, b)}
	r := NewRule(p)
	if v := r.Judge(sa, sb, a, b); !v.Pass || v.Method != "exact" || v.Similarity != 90.0/110 {
		t.Errorf("J = 0.818 at 0.8: %+v", v)
	}
	if v := r.At(0.85).Judge(sa, sb, a, b); v.Pass || v.Method != "exact" {
		t.Errorf("J = 0.818 at 0.85: %+v", v)
	}
	if v := r.Judge(sa, sb, a, nil); v.Method != "minhash" || v.Similarity != v.Estimate {
		t.Errorf("one set unknown: %+v, want the signatures' verdict", v)
	}
	pe := p
	pe.Verify = job.VerifyEstimate
	if v := NewRule(pe).Judge(sa, sb, a, b); v.Method != "minhash" || v.Pass != (v.Estimate >= 0.8) {
		t.Errorf("signature verification: %+v", v)
	}
}
