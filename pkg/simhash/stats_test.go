package simhash

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/neardup/neardup/pkg/shingle"
)

// The model of a one-word edit.
//
// Let the old document have the distinct shingle hashes O and the edited
// one N, with m = |O ∩ N| common shingles, a = |O \ N| removed and
// b = |N \ O| added (changing word j of a 300-word document, 4 <= j <= 295,
// changes the 5 word 5-grams that contain it: m = 291, a = b = 5). For the
// unweighted fingerprint, the vote on bit i is C + A in the old document
// and C + B in the new one, where C, A and B are the sums of m, a and b
// independent fair +-1 terms (bit i of distinct, well mixed hashes). The
// bit flips when exactly one of C+A > 0 and C+B > 0 holds, that is when C
// lies in the half-open interval between -A and -B:
//
//	p = P(flip) = E |F(-B) - F(-A)|,  F the distribution function of C,
//
// which flipProb computes exactly. For an approximation: C lives on a
// lattice of step 2 with P(C = c) ~ 2/sqrt(2 pi m) near 0, and the
// interval holds about |A-B|/2 of its points, so
//
//	p ~ E|A-B| / sqrt(2 pi m),
//
// A-B being a sum of a+b fair +-1 terms: E|A-B| = 10 C(10,5)/2^10 = 2.461
// for a = b = 5, so p ~ 2.461/sqrt(2 pi 291) = 0.0576 (exact: 0.0571).
// The 64 bits are independent (the bits of a well mixed hash are), so the
// Hamming distance of the two fingerprints is Binomial(64, p): mean 3.65,
// standard deviation 1.86, 95th percentile 7, 99th percentile 9. Only half
// of such edits stay within k = 3 (93% within k = 6); p shrinks like
// 1/sqrt(n), so for 3000-word documents 97% stay within k = 3.

// sumPMF returns P(S = 2j-m) for j = 0..m, S a sum of m fair +-1 terms.
func sumPMF(m int) []float64 {
	p := make([]float64, m+1)
	lm, _ := math.Lgamma(float64(m + 1))
	for j := range p {
		lj, _ := math.Lgamma(float64(j + 1))
		lk, _ := math.Lgamma(float64(m - j + 1))
		p[j] = math.Exp(lm - lj - lk - float64(m)*math.Ln2)
	}
	return p
}

// flipProb returns the exact probability that a bit of the fingerprint
// flips when a of m+a distinct shingles are replaced by b new ones.
func flipProb(m, a, b int) float64 {
	pc := sumPMF(m)
	cdf := make([]float64, m+1) // cdf[j] = P(C <= 2j-m)
	s := 0.0
	for j, v := range pc {
		s += v
		cdf[j] = s
	}
	f := func(x int) float64 { // P(C <= x)
		j := (x + m) >> 1 // floor((x+m)/2), also for negative x+m
		switch {
		case j < 0:
			return 0
		case j >= m:
			return 1
		}
		return cdf[j]
	}
	pa, pb := sumPMF(a), sumPMF(b)
	p := 0.0
	for ja, wa := range pa {
		for jb, wb := range pb {
			p += wa * wb * math.Abs(f(-(2*jb-b))-f(-(2*ja-a)))
		}
	}
	return p
}

// meanAbsSum returns E|S| for S a sum of n fair +-1 terms.
func meanAbsSum(n int) float64 {
	e := 0.0
	for j, p := range sumPMF(n) {
		e += math.Abs(float64(2*j-n)) * p
	}
	return e
}

// votes are the votes of one distinct hash on a bit in the old and the
// new document: its number of occurrences in each (weighted), or 1 and 0
// (unweighted). Its sign is the same fair +-1 in both.
type votes struct{ old, new int }

// modelFlipProb returns the exact probability that a bit of the
// fingerprint flips, given the votes of every distinct hash of the two
// documents: C sums the hashes whose vote is the same in both, with the
// distribution computed by convolution, and the few others, which make
// the old vote C+A and the new C+B, are enumerated sign by sign. It is the
// generalisation of flipProb to term-frequency weights.
func modelFlipProb(v []votes) float64 {
	ones, total := 0, 0
	var other []int  // weights of common hashes other than 1
	var diff []votes // hashes whose vote changed
	for _, x := range v {
		switch {
		case x.old != x.new:
			diff = append(diff, x)
		case x.old == 1:
			ones++
			total++
		default:
			other = append(other, x.old)
			total += x.old
		}
	}
	if len(diff) > 20 {
		panic("too many changed votes to enumerate")
	}
	// dist[total+c] = P(C = c).
	dist := make([]float64, 2*total+1)
	for j, p := range sumPMF(ones) {
		dist[total+2*j-ones] = p
	}
	next := make([]float64, len(dist))
	for _, w := range other {
		clear(next)
		for c, p := range dist {
			if p != 0 {
				next[c-w] += p / 2
				next[c+w] += p / 2
			}
		}
		dist, next = next, dist
	}
	cdf := make([]float64, len(dist))
	s := 0.0
	for c, p := range dist {
		s += p
		cdf[c] = s
	}
	f := func(x int) float64 { // P(C <= x)
		switch {
		case x < -total:
			return 0
		case x >= total:
			return 1
		}
		return cdf[total+x]
	}
	p := 0.0
	for signs := range 1 << len(diff) {
		a, b := 0, 0
		for i, x := range diff {
			if signs>>i&1 == 1 {
				a, b = a+x.old, b+x.new
			} else {
				a, b = a-x.old, b-x.new
			}
		}
		p += math.Abs(f(-b) - f(-a))
	}
	return p / float64(int(1)<<len(diff))
}

// documentVotes returns the votes of the distinct hashes of two
// documents: occurrence counts if weighted, presence otherwise.
func documentVotes(old, new []uint64, weighted bool) []votes {
	count := map[uint64]*votes{}
	add := func(h uint64, isNew bool) {
		x := count[h]
		if x == nil {
			x = &votes{}
			count[h] = x
		}
		if isNew {
			x.new++
		} else {
			x.old++
		}
	}
	for _, h := range old {
		add(h, false)
	}
	for _, h := range new {
		add(h, true)
	}
	out := make([]votes, 0, len(count))
	for _, x := range count {
		if !weighted {
			x.old, x.new = min(x.old, 1), min(x.new, 1)
		}
		out = append(out, *x)
	}
	slices.SortFunc(out, func(a, b votes) int { // a deterministic order
		return cmp.Or(cmp.Compare(a.old, b.old), cmp.Compare(a.new, b.new))
	})
	return out
}

// binomTail returns P(X > q) for X ~ Binomial(n, p).
func binomTail(n int, p float64, q int) float64 {
	t := 0.0
	for k := q + 1; k <= n; k++ {
		lc, _ := math.Lgamma(float64(n + 1))
		l1, _ := math.Lgamma(float64(k + 1))
		l2, _ := math.Lgamma(float64(n - k + 1))
		t += math.Exp(lc - l1 - l2 + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
	}
	return t
}

// binomQuantile returns the smallest q with P(X > q) <= 1-level.
func binomQuantile(n int, p, level float64) int {
	q := 0
	for binomTail(n, p, q) > 1-level {
		q++
	}
	return q
}

// TestFlipModel checks the approximation of the comment above against the
// exact flip probability, and the figures quoted there.
func TestFlipModel(t *testing.T) {
	tests := []struct {
		m, a, b int
		tol     float64 // relative tolerance of the approximation
	}{
		{291, 5, 5, 0.02},
		{95, 5, 5, 0.05},
		{2995, 5, 5, 0.01},
		{291, 1, 1, 0.01},
		{290, 5, 6, 0.02},
	}
	for _, tc := range tests {
		exact := flipProb(tc.m, tc.a, tc.b)
		approx := meanAbsSum(tc.a+tc.b) / math.Sqrt(2*math.Pi*float64(tc.m))
		t.Logf("m=%d a=%d b=%d: p exact %.5f approx %.5f; distance mean %.2f, 95%% %d, 99%% %d",
			tc.m, tc.a, tc.b, exact, approx, 64*exact,
			binomQuantile(64, exact, 0.95), binomQuantile(64, exact, 0.99))
		v := make([]votes, 0, tc.m+tc.a+tc.b)
		for range tc.m {
			v = append(v, votes{1, 1})
		}
		for range tc.a {
			v = append(v, votes{1, 0})
		}
		for range tc.b {
			v = append(v, votes{0, 1})
		}
		if general := modelFlipProb(v); math.Abs(general-exact) > 1e-12 {
			t.Errorf("m=%d a=%d b=%d: modelFlipProb %.15f, flipProb %.15f", tc.m, tc.a, tc.b, general, exact)
		}
		if math.Abs(approx/exact-1) > tc.tol {
			t.Errorf("m=%d a=%d b=%d: approximation %.5f vs exact %.5f", tc.m, tc.a, tc.b, approx, exact)
		}
	}
	p := flipProb(291, 5, 5)
	if math.Abs(p-0.0571) > 0.0001 || binomQuantile(64, p, 0.95) != 7 || binomQuantile(64, p, 0.99) != 9 {
		t.Errorf("figures quoted in the comment are off: p = %.5f", p)
	}
	if within3 := 1 - binomTail(64, p, 3); math.Abs(within3-0.5) > 0.01 {
		t.Errorf("P(distance <= 3) = %.3f, quoted 0.5", within3)
	}
}

// editPair is a document and its one-word edit.
type editPair struct{ old, new []string }

// vocabulary returns the distinct tokens of the Opticks text, sorted.
func vocabulary(t *testing.T, text string) []string {
	toks := shingle.Tokens(text, shingle.Options{})
	slices.Sort(toks)
	return slices.Compact(toks)
}

// editPairs builds count documents of 300 tokens, each either drawn
// uniformly from vocab (synthetic) or a window of the real token stream,
// and edits one token at a position where all 5 of its shingles are
// interior, replacing it by a different vocabulary word.
func editPairs(r *rand.Rand, vocab, stream []string, count int) []editPair {
	const words = 300
	var out []editPair
	for d := range count {
		var old []string
		if stream == nil {
			old = make([]string, words)
			for i := range old {
				old[i] = vocab[r.IntN(len(vocab))]
			}
		} else {
			if (d+1)*words > len(stream) {
				break
			}
			old = stream[d*words : (d+1)*words]
		}
		nw := slices.Clone(old)
		j := 4 + r.IntN(words-8)
		for nw[j] == old[j] {
			nw[j] = vocab[r.IntN(len(vocab))]
		}
		out = append(out, editPair{old, nw})
	}
	return out
}

// TestOneWordEdit checks the Hamming distance between the fingerprints of
// a 300-word document and of the same document with one word changed
// against the model above, over a few hundred documents per case. Under
// the model the distance of document d is Binomial(64, p_d), p_d from its
// own (m, a, b), and documents are independent, so:
//   - the total distance has mean sum 64 p_d and variance
//     sum 64 p_d (1-p_d); it must lie within 4 standard deviations;
//   - for a level L (95%, 99%), the number of documents whose distance
//     exceeds their own L-quantile q_d is a sum of Bernoulli(tau_d),
//     tau_d = P(Bin > q_d) <= 1-L; it must not exceed its mean by more
//     than 4 standard deviations (plus 1 for small counts).
//
// p_d is modelFlipProb of the document's votes, with term-frequency
// weights for FingerprintWeighted (real text repeats some 5-grams).
func TestOneWordEdit(t *testing.T) {
	text := readText(t, "Isaac.Newton-Opticks.txt")
	vocab := vocabulary(t, text)
	stream := shingle.Tokens(text, shingle.Options{})
	docs := 300
	if testing.Short() {
		docs = 100
	}
	tests := []struct {
		name     string
		stream   []string
		weighted bool
		seed     uint64
	}{
		{"vocab/Fingerprint", nil, false, 11},
		{"vocab/FingerprintWeighted", nil, true, 12},
		{"opticks/Fingerprint", stream, false, 13},
		{"opticks/FingerprintWeighted", stream, true, 14},
	}
	sh, err := shingle.NewShingler(shingle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(tc.seed, 0))
			pairs := editPairs(r, vocab, tc.stream, docs)
			var sum, mean, variance float64
			levels := []float64{0.95, 0.99}
			exceed := make([]int, len(levels))
			expect := make([]float64, len(levels))
			varExceed := make([]float64, len(levels))
			var dists []int
			repeats := 0
			for _, pr := range pairs {
				ho, _ := sh.Hashes(nil, []byte(strings.Join(pr.old, " ")))
				hn, _ := sh.Hashes(nil, []byte(strings.Join(pr.new, " ")))
				so := shingle.SortUnique(slices.Clone(ho))
				if len(so) != len(ho) {
					repeats++
				}
				var fo, fn uint64
				if tc.weighted {
					fo, fn = FingerprintWeighted(ho), FingerprintWeighted(hn)
				} else {
					fo, fn = Fingerprint(ho), Fingerprint(hn)
					// Identical documents: equal fingerprints.
					again, _ := sh.Hashes(nil, []byte(strings.Join(pr.old, " ")))
					if Fingerprint(again) != fo || Fingerprint(so) != fo || Distance(fo, Fingerprint(slices.Clone(ho))) != 0 {
						t.Fatal("the same document gave different fingerprints")
					}
				}
				p := modelFlipProb(documentVotes(ho, hn, tc.weighted))
				d := Distance(fo, fn)
				dists = append(dists, d)
				sum += float64(d)
				mean += 64 * p
				variance += 64 * p * (1 - p)
				for i, lv := range levels {
					q := binomQuantile(64, p, lv)
					tau := binomTail(64, p, q)
					expect[i] += tau
					varExceed[i] += tau * (1 - tau)
					if d > q {
						exceed[i]++
					}
				}
			}
			n := len(dists)
			if n < docs {
				t.Fatalf("only %d documents", n)
			}
			sort.Ints(dists)
			z := (sum - mean) / math.Sqrt(variance)
			t.Logf("%d documents (%d with repeated shingles): mean distance %.3f, model %.3f (z = %+.2f); median %d, 95%% %d, 99%% %d, max %d",
				n, repeats, sum/float64(n), mean/float64(n), z,
				dists[n/2], dists[n*95/100], dists[n*99/100], dists[n-1])
			if math.Abs(z) > 4 {
				t.Errorf("mean distance %.3f, model %.3f: %.1f standard deviations", sum/float64(n), mean/float64(n), z)
			}
			for i, lv := range levels {
				limit := expect[i] + 4*math.Sqrt(varExceed[i]) + 1
				t.Logf("  above the %.0f%% quantile: %d documents, expected %.1f, limit %.1f", 100*lv, exceed[i], expect[i], limit)
				if float64(exceed[i]) > limit {
					t.Errorf("%d documents above their %.0f%% quantile, expected %.1f, limit %.1f", exceed[i], 100*lv, expect[i], limit)
				}
			}
		})
	}
}
