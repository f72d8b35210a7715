package accuracy

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/neardup/neardup/internal/reference"
	"github.com/neardup/neardup/pkg/shingle"
)

// ShingleSet returns the canonical shingle set of text: the document
// model's shingles (shingle.Shingles) hashed with xxhash64, sorted and
// without repeats. It is independent of the fast kernel (shingle.Shingler
// and its own hash), as the pipeline's tests' reference set is.
func ShingleSet(text string, o shingle.Options) []uint64 { return reference.Set(text, o) }

// Pair is a pair of documents, by index (A < B), with the exact Jaccard
// similarity of their shingle sets.
type Pair struct {
	A, B int32
	J    float64
}

// jaccard is |a∩b| / |a∪b| computed as everywhere else in neardup, so equal
// counts give bit-identical similarities.
func jaccard(inter, sizeA, sizeB int) float64 {
	return float64(inter) / float64(sizeA+sizeB-inter)
}

// slack makes the filters' integer bounds err on the side of keeping a
// pair when a bound such as t·|x| is an integer but rounds above it in
// floating point. The final test, J >= minJ, is exact.
const slack = 1e-9

// Join returns every pair of documents whose sets (sorted, repeat-free, as
// ShingleSet returns) have a Jaccard similarity of at least minJ, sorted
// by (A, B). Empty sets take part in no pair. minJ must be in (0, 1].
//
// It is a prefix-filtering self-join (AllPairs, Bayardo et al. 2007, with
// PPJoin's positional filter, Xiao et al. 2008). Tokens are ordered by
// global frequency, rarest first. If J(x, y) >= t, the two sets share at
// least ceil(t·|x|) tokens, so their first |x| - ceil(t·|x|) + 1 tokens in
// that order share one. Documents are processed by increasing size; each
// probes the index of the smaller ones with its prefix and is then added
// to it. Candidates that pass the size filter (t·|x| <= |y| <= |x|) and
// the positional filter are verified by an exact merge of the two sets.
// Tokens that occur in one document only can match nothing: they are
// counted, not indexed.
func Join(sets [][]uint64, minJ float64) ([]Pair, error) {
	if !(minJ > 0 && minJ <= 1) {
		return nil, fmt.Errorf("minimum Jaccard similarity %v: must be in (0, 1]", minJ)
	}
	if len(sets) > math.MaxInt32 {
		return nil, fmt.Errorf("%d sets: at most %d", len(sets), math.MaxInt32)
	}
	docs := rankSets(sets)

	order := make([]int32, 0, len(docs))
	for i, d := range docs {
		if d.size > 0 {
			order = append(order, int32(i))
		}
	}
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(cmp.Compare(docs[a].size, docs[b].size), cmp.Compare(a, b))
	})

	type posting struct {
		doc int32
		pos int32 // the token's position in the document's whole order
	}
	index := map[int32][]posting{}
	overlap := make([]int32, len(docs)) // per probe: matches so far, -1 pruned
	var cands []int32
	var out []Pair
	for _, x := range order {
		dx := docs[x]
		minSize := int(math.Ceil(minJ*float64(dx.size) - slack))
		prefix := dx.size - minSize + 1
		cands = cands[:0]
		// Positions 0..singles-1 are the document's unique tokens.
		for k := 0; k < len(dx.shared) && dx.singles+k < prefix; k++ {
			i := dx.singles + k
			for _, p := range index[dx.shared[k]] {
				y := p.doc
				dy := docs[y]
				if dy.size < minSize || overlap[y] < 0 {
					continue
				}
				if overlap[y] == 0 {
					cands = append(cands, y)
				}
				need := int32(math.Ceil(minJ/(1+minJ)*float64(dx.size+dy.size) - slack))
				if overlap[y]+1+int32(min(dx.size-i-1, dy.size-int(p.pos)-1)) < need {
					overlap[y] = -1
					continue
				}
				overlap[y]++
			}
		}
		for _, y := range cands {
			if overlap[y] > 0 {
				dy := docs[y]
				if j := jaccard(intersect(dx.shared, dy.shared), dx.size, dy.size); j >= minJ {
					out = append(out, Pair{A: min(x, y), B: max(x, y), J: j})
				}
			}
			overlap[y] = 0
		}
		for k := 0; k < len(dx.shared) && dx.singles+k < prefix; k++ {
			index[dx.shared[k]] = append(index[dx.shared[k]], posting{doc: x, pos: int32(dx.singles + k)})
		}
	}
	slices.SortFunc(out, func(a, b Pair) int { return cmp.Or(cmp.Compare(a.A, b.A), cmp.Compare(a.B, b.B)) })
	return out, nil
}

// rankedDoc is a set in the join's token order: singles tokens that no
// other set has, then the ranks of its shared tokens, ascending.
type rankedDoc struct {
	size    int
	singles int
	shared  []int32
}

// rankSets ranks every token that occurs in two or more sets by (number of
// sets, hash), rarest first, and returns each set in that order.
func rankSets(sets [][]uint64) []rankedDoc {
	total := 0
	for _, s := range sets {
		total += len(s)
	}
	all := make([]uint64, 0, total)
	for _, s := range sets {
		all = append(all, s...)
	}
	slices.Sort(all)
	type token struct {
		hash uint64
		freq int
	}
	var shared []token
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j] == all[i] {
			j++
		}
		if j-i >= 2 {
			shared = append(shared, token{all[i], j - i})
		}
		i = j
	}
	all = nil
	// shared is sorted by hash; rank[k] is the rank of shared[k].
	byFreq := make([]int32, len(shared))
	for k := range byFreq {
		byFreq[k] = int32(k)
	}
	slices.SortFunc(byFreq, func(a, b int32) int {
		return cmp.Or(cmp.Compare(shared[a].freq, shared[b].freq), cmp.Compare(a, b))
	})
	rank := make([]int32, len(shared))
	for r, k := range byFreq {
		rank[k] = int32(r)
	}
	docs := make([]rankedDoc, len(sets))
	for i, s := range sets {
		d := rankedDoc{size: len(s)}
		for _, h := range s {
			k, ok := slices.BinarySearchFunc(shared, h, func(t token, h uint64) int { return cmp.Compare(t.hash, h) })
			if ok {
				d.shared = append(d.shared, rank[k])
			} else {
				d.singles++
			}
		}
		slices.Sort(d.shared)
		docs[i] = d
	}
	return docs
}

// intersect returns the size of the intersection of two sorted sets.
func intersect(a, b []int32) int {
	i, j, n := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// BruteForce returns the same pairs as Join by comparing every pair of
// sets. It is quadratic: for tests and small corpora.
func BruteForce(sets [][]uint64, minJ float64) []Pair {
	var out []Pair
	for a := range sets {
		if len(sets[a]) == 0 {
			continue
		}
		for b := a + 1; b < len(sets); b++ {
			if len(sets[b]) == 0 {
				continue
			}
			if j := shingle.Jaccard(sets[a], sets[b]); j >= minJ {
				out = append(out, Pair{A: int32(a), B: int32(b), J: j})
			}
		}
	}
	return out
}
