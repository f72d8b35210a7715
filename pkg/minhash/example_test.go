package minhash_test

import (
	"fmt"

	"github.com/neardup/neardup/pkg/minhash"
)

// A Dart sketch gives K independent MinHash values per set; the fraction
// of equal values estimates the Jaccard similarity, with standard error
// sqrt(J(1-J)/K).
func ExampleDart() {
	sk, err := minhash.NewDart(128, 1)
	if err != nil {
		panic(err)
	}
	// Two sets of 1,000 hashes sharing 800: J = 800/1200 = 0.667.
	a := make([]uint64, 0, 1000)
	b := make([]uint64, 0, 1000)
	for i := range uint64(1200) {
		h := (i + 1) * 0x9e3779b97f4a7c15
		if i < 1000 {
			a = append(a, h)
		}
		if i >= 200 {
			b = append(b, h)
		}
	}
	sa, sb := sk.Sketch(nil, a), sk.Sketch(nil, b)
	est := minhash.Estimate(sa, sb)
	se := minhash.StdErr(2.0/3, sk.K())
	fmt.Printf("K=%d, estimate within 3 standard errors of 2/3: %v\n", len(sa), est > 2.0/3-3*se && est < 2.0/3+3*se)
	fmt.Println("equal sets, equal signatures:", minhash.Estimate(sa, sk.Sketch(nil, a)) == 1)
	// Output:
	// K=128, estimate within 3 standard errors of 2/3: true
	// equal sets, equal signatures: true
}
