// Package reference is the slow, obviously correct model of what neardup
// computes fast, for tests and the accuracy benchmark to check against:
// shingle sets from the document model's shingle strings hashed with
// xxhash (independent of the fast kernel's hashing), and their Jaccard
// similarity by a plain merge.
package reference

import (
	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/pkg/shingle"
)

// Set is the reference shingle set of a text, sorted and without repeats.
func Set(text string, o shingle.Options) []uint64 {
	sh := shingle.Shingles(text, o)
	set := make([]uint64, 0, len(sh))
	for _, s := range sh {
		set = append(set, xxhash.Sum64String(s))
	}
	return shingle.SortUnique(set)
}

// Jaccard is |a ∩ b| / |a ∪ b| of two sorted sets without repeats; 0 when
// either is empty (a document without shingles is similar to nothing).
func Jaccard(a, b []uint64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	i, j, inter := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
