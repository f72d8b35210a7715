package corpus

import "math/bits"

// Stream identifiers keep the random sequences used for different purposes
// independent of each other, so that, for example, changing how a URL is
// drawn never changes the text of a document.
const (
	streamPlan uint64 = iota + 1
	streamBase
	streamMutate
	streamURL
	streamShort
	streamRecord
	streamTemplate
	streamVocab
)

// rng is a small SplitMix64 generator. It is used instead of math/rand so
// that the generated corpus is byte-identical across Go releases and
// platforms: every value drawn here is defined by integer arithmetic only.
type rng struct {
	state uint64
}

// mix64 is the SplitMix64 finaliser, a good 64-bit bit mixer.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// newRNG returns a generator for the given seed, purpose stream and index.
func newRNG(seed, stream, index uint64) rng {
	s := mix64(seed ^ 0x6a09e667f3bcc909)
	s = mix64(s ^ stream*0x9e3779b97f4a7c15)
	s = mix64(s ^ index*0xd1b54a32d192ed03)
	return rng{state: s}
}

// next returns the next 64 random bits.
func (r *rng) next() uint64 {
	r.state += 0x9e3779b97f4a7c15
	return mix64(r.state)
}

// intn returns a uniform integer in [0, n). n must be positive.
func (r *rng) intn(n int) int {
	if n <= 1 {
		return 0
	}
	bound := uint64(n)
	hi, lo := bits.Mul64(r.next(), bound)
	if lo < bound {
		threshold := -bound % bound
		for lo < threshold {
			hi, lo = bits.Mul64(r.next(), bound)
		}
	}
	return int(hi)
}

// between returns a uniform integer in [lo, hi]; it returns lo if hi < lo.
func (r *rng) between(lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + r.intn(hi-lo+1)
}

// chance reports true with probability num/den.
func (r *rng) chance(num, den int) bool {
	return r.intn(den) < num
}

// pick returns a uniformly chosen element of list.
func pick[T any](r *rng, list []T) T {
	return list[r.intn(len(list))]
}
