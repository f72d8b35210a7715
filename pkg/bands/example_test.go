package bands_test

import (
	"fmt"

	"github.com/neardup/neardup/pkg/bands"
	"github.com/neardup/neardup/pkg/minhash"
)

// Optimal chooses b and r for a threshold; Probability is the S-curve.
func ExampleOptimal() {
	p, err := bands.Optimal(0.8, 128, 0.05, 0.95)
	if err != nil {
		panic(err)
	}
	fmt.Println(p)
	for _, s := range []float64{0.5, 0.8, 0.85} {
		fmt.Printf("P(candidate | J=%.2f) = %.3f\n", s, bands.Probability(s, p))
	}
	// Output:
	// b=16,r=8
	// P(candidate | J=0.50) = 0.061
	// P(candidate | J=0.80) = 0.947
	// P(candidate | J=0.85) = 0.994
}

// Two documents are candidates when they share a band key: here two sets
// that differ in one element of a hundred.
func ExampleKeys() {
	sk, err := minhash.NewClassic(128, 1)
	if err != nil {
		panic(err)
	}
	a := make([]uint64, 100)
	for i := range a {
		a[i] = uint64(i+1) * 0x9e3779b97f4a7c15
	}
	b := append([]uint64{42}, a[1:]...)
	p := bands.Params{Bands: 16, Rows: 8}
	ka := bands.Keys(nil, sk.Sketch(nil, a), p)
	kb := bands.Keys(nil, sk.Sketch(nil, b), p)
	shared := 0
	for i := range ka {
		if ka[i] == kb[i] {
			shared++
		}
	}
	fmt.Println(len(ka), "band keys each;", "shared:", shared > 0)
	// Output:
	// 16 band keys each; shared: true
}
