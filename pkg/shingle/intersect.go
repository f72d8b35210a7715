package shingle

import (
	"math/bits"
	"slices"
)

// Intersection returns |a ∩ b| for two sorted, repeat-free sets (as
// returned by [SortUnique]), of 64-bit hashes or of narrower ones.
//
// Sets of similar sizes are merged without data-dependent branches, in two
// independent halves at once (split at the median of a): a merge of
// hashed shingles takes a branch the predictor cannot guess at about every
// other step, and one merge's steps depend on each other, so two
// interleaved merges keep the processor busy. When one set is much
// smaller than the other, each of its values is looked for in the larger
// one by galloping (exponential, then binary search).
func Intersection[T uint32 | uint64](a, b []T) int {
	if len(a) > len(b) {
		a, b = b, a
	}
	switch {
	case len(a) == 0:
		return 0
	case len(a)*gallopRatio < len(b):
		return intersectGallop(a, b)
	case len(a) < splitMin:
		return intersectMerge(a, b)
	}
	// Two halves: values below a's median, and the rest.
	sa := len(a) / 2
	sb, _ := slices.BinarySearch(b, a[sa])
	a0, a1, b0, b1 := a[:sa], a[sa:], b[:sb], b[sb:]
	i0, j0, i1, j1, n := 0, 0, 0, 0, 0
	for i0 < len(a0) && j0 < len(b0) && i1 < len(a1) && j1 < len(b1) {
		di, dj, dn := mergeStep(a0[i0], b0[j0])
		ei, ej, en := mergeStep(a1[i1], b1[j1])
		i0, j0, i1, j1, n = i0+di, j0+dj, i1+ei, j1+ej, n+dn+en
	}
	return n + intersectMerge(a0[i0:], b0[j0:]) + intersectMerge(a1[i1:], b1[j1:])
}

// gallopRatio is the size ratio from which Intersection gallops instead of
// merging: a merge takes len(a)+len(b) steps, galloping about
// len(a)·2·log2(len(b)/len(a)) slower ones.
const gallopRatio = 32

// splitMin is the size of the smaller set below which Intersection merges
// in one piece: the binary search that splits b costs more than it saves.
const splitMin = 32

// mergeStep is one step of a branch-free merge at values x of a and y of
// b: how far to advance in a (1 when x <= y) and in b (1 when y <= x), and
// whether the values are equal (1 when both advance).
func mergeStep[T uint32 | uint64](x, y T) (di, dj, dn int) {
	_, lt := bits.Sub64(uint64(x), uint64(y), 0) // x < y
	_, gt := bits.Sub64(uint64(y), uint64(x), 0) // x > y
	return int(1 - gt), int(1 - lt), int(1 - lt - gt)
}

// intersectMerge counts the common values of two sorted, repeat-free sets
// by a branch-free merge.
func intersectMerge[T uint32 | uint64](a, b []T) int {
	i, j, n := 0, 0, 0
	for i < len(a) && j < len(b) {
		di, dj, dn := mergeStep(a[i], b[j])
		i, j, n = i+di, j+dj, n+dn
	}
	return n
}

// intersectGallop counts the common values of a small sorted set a and a
// large one b: each value of a is searched for in the part of b after the
// previous one's place, first by doubling steps, then by binary search.
func intersectGallop[T uint32 | uint64](a, b []T) int {
	n, lo := 0, 0
	for _, x := range a {
		// Find hi with b[lo+hi/2 ...] < x <= b[lo+hi] (or the end).
		step := 1
		for lo+step < len(b) && b[lo+step] < x {
			step *= 2
		}
		end := min(lo+step+1, len(b))
		k, found := slices.BinarySearch(b[lo:end], x)
		lo += k
		if found {
			n++
			lo++
		}
		if lo >= len(b) {
			break
		}
	}
	return n
}
