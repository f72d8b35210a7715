package shingle_test

import (
	"fmt"

	"github.com/neardup/neardup/pkg/shingle"
)

// The document model: lower-cased tokens of letters and digits, joined
// into word k-grams.
func ExampleShingles() {
	o := shingle.Options{Words: 3}
	fmt.Println(shingle.Tokens("The Quick, brown fox!", o))
	fmt.Printf("%q\n", shingle.Shingles("The Quick, brown fox!", o))
	// Output:
	// [the quick brown fox]
	// ["the quick brown" "quick brown fox"]
}

// A Shingler hashes the same shingles in one pass over the text; Jaccard
// compares two sorted sets of hashes.
func ExampleShingler_Hashes() {
	sh, err := shingle.NewShingler(shingle.Options{Words: 3})
	if err != nil {
		panic(err)
	}
	a, _ := sh.Hashes(nil, []byte("the quick brown fox jumps"))
	b, tokens := sh.Hashes(nil, []byte("the quick brown fox sleeps"))
	var sorter shingle.SetSorter
	setA := append([]uint64(nil), sorter.SortUnique(a)...)
	setB := sorter.SortUnique(b)
	fmt.Println(len(setA), "and", len(setB), "shingles,", tokens, "tokens in the second")
	fmt.Printf("Jaccard %.2f\n", shingle.Jaccard(setA, setB))
	// Output:
	// 3 and 3 shingles, 5 tokens in the second
	// Jaccard 0.50
}
