package control

import (
	"fmt"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/simhash"
)

// simhashRecallWarning returns "" unless p is a SimHash job whose
// threshold lies where a search at distance p.Hamming finds under half of
// the pairs, under the random-hyperplane model for sets of equal size
// ([simhash.FoundProbability]). It then names the smallest distance up to
// [simhash.MaxK] that finds at least half, with the share of unrelated
// pairs that distance makes candidates, or, when there is none, advises
// MinHash.
func simhashRecallWarning(p job.Params) string {
	t, k := p.Threshold, p.Hamming
	found := simhash.FoundProbability(t, k)
	if p.Method != job.MethodSimHash || found >= 0.5 {
		return ""
	}
	msg := fmt.Sprintf("SimHash at --hamming %d finds a pair at --threshold %.3g with probability %.2g "+
		"(random-hyperplane model, sets of equal size: %.1f bits apart on average); ",
		k, t, found, simhash.ExpectedDistance(t))
	for k2 := k + 1; k2 <= simhash.MaxK; k2++ {
		if f := simhash.FoundProbability(t, k2); f >= 0.5 {
			b, err := simhash.NewBlocks(k2)
			if err != nil {
				break
			}
			return msg + fmt.Sprintf("--hamming %d is the smallest that finds half (%.2f; it makes %.2g%% of unrelated pairs candidates), "+
				"or use --method minhash", k2, f, 100*simhash.CandidateProbability(0, b))
		}
	}
	return msg + fmt.Sprintf("no --hamming up to %d finds half (%d: %.2g): use --method minhash",
		simhash.MaxK, simhash.MaxK, simhash.FoundProbability(t, simhash.MaxK))
}
