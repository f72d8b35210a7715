package accuracy

import (
	"fmt"
	"math"

	"github.com/neardup/neardup/pkg/records"
)

// Criteria of --check (see Check).
const (
	// MinRecallAbove is the least pair recall of true pairs with
	// J >= threshold + 0.05.
	MinRecallAbove = 0.99
	// MinRecallNear is the least pair recall of true pairs with J in
	// [threshold, threshold + 0.05).
	MinRecallNear = 0.94
	// SimilarityTolerance is how far a reported exact similarity may be
	// from the true Jaccard similarity.
	SimilarityTolerance = 1e-9
)

// Recall counts the true pairs of a group, how many of them pairs/ lists,
// and how many have both documents in one cluster of clusters.parquet.
type Recall struct {
	True      int `json:"true"`
	Listed    int `json:"listed"`
	Clustered int `json:"clustered"`
}

// PairRecall is Listed/True, or 1 when there is no true pair.
func (r Recall) PairRecall() float64 { return ratio(r.Listed, r.True) }

// ClusterRecall is Clustered/True, or 1 when there is no true pair.
func (r Recall) ClusterRecall() float64 { return ratio(r.Clustered, r.True) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

func (r *Recall) add(listed, clustered bool) {
	r.True++
	if listed {
		r.Listed++
	}
	if clustered {
		r.Clustered++
	}
}

// Split is a Recall for all pairs and for two partitions of them: by
// length, short pairs (both documents under ShortWords tokens) and long
// ones (the others); by family, pairs of two template pages and the rest.
type Split struct {
	All      Recall `json:"all"`
	Short    Recall `json:"short"`
	Long     Recall `json:"long"`
	Template Recall `json:"template"`
	Rest     Recall `json:"rest"`
}

func (s *Split) add(short, template, listed, clustered bool) {
	s.All.add(listed, clustered)
	if short {
		s.Short.add(listed, clustered)
	} else {
		s.Long.add(listed, clustered)
	}
	if template {
		s.Template.add(listed, clustered)
	} else {
		s.Rest.add(listed, clustered)
	}
}

// Bin is a range of true similarity, [Lo, Hi), J >= Lo when Hi is 0, or
// J = 1 exactly when Lo = Hi = 1, with the recall of the true pairs in it
// that reach the threshold.
type Bin struct {
	Label string  `json:"label"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi,omitempty"`
	Split
}

func (b *Bin) contains(j float64) bool {
	switch {
	case b.Hi == 0:
		return j >= b.Lo
	case b.Lo == b.Hi:
		return j == b.Lo
	}
	return j >= b.Lo && j < b.Hi
}

// Result is the accuracy of one job against the truth.
type Result struct {
	Threshold float64 `json:"threshold"`

	// Rows of pairs/; Distinct unordered pairs of known documents among
	// them; Repeated rows naming a pair already listed; Unordered rows with
	// a >= b; Unknown rows naming an id the corpus does not have.
	Rows      int `json:"rows"`
	Distinct  int `json:"distinct"`
	Repeated  int `json:"repeated"`
	Unordered int `json:"unordered"`
	Unknown   int `json:"unknown_ids"`
	// Below is the number of distinct listed pairs whose true J is below
	// the threshold; Mismatches, of rows with method "exact" whose
	// similarity is off the true J by more than SimilarityTolerance.
	Below       int     `json:"below_threshold"`
	Mismatches  int     `json:"similarity_mismatches"`
	MaxError    float64 `json:"max_similarity_error"`
	Precision   float64 `json:"precision"` // (Distinct - Below) / Distinct; 1 when nothing is listed
	ClusterDocs int     `json:"clustered_docs"`

	// Bins are the similarity bins above the threshold, then J = 1.
	Bins []Bin `json:"bins"`
	// Above holds the true pairs with J >= threshold + 0.05, Near those in
	// [threshold, threshold + 0.05), Total all with J >= threshold.
	Above Bin `json:"above"`
	Near  Bin `json:"near"`
	Total Bin `json:"total"`
}

// roundEdge rounds x to 1e-9, so that 0.8 + 0.05 is the float64 nearest
// 0.85, which is also what a similarity of 17/20 computes to.
func roundEdge(x float64) float64 { return math.Round(x*1e9) / 1e9 }

// bins returns the similarity bins of width 0.1 from minJ (rounded down)
// whose upper end is above threshold, then the bin J = 1.
func bins(minJ, threshold float64) []Bin {
	var out []Bin
	for k := int(math.Floor(minJ*10 + 1e-9)); k < 10; k++ {
		lo, hi := float64(k)/10, float64(k+1)/10
		if hi <= threshold {
			continue
		}
		out = append(out, Bin{Label: fmt.Sprintf("[%.1f, %.1f)", lo, hi), Lo: lo, Hi: hi})
	}
	return append(out, Bin{Label: "J = 1", Lo: 1, Hi: 1})
}

// Evaluate measures the pairs and clusters of a job run at threshold
// against the truth. threshold must not be below t.MinJ: true pairs below
// MinJ are unknown.
func Evaluate(t *Truth, threshold float64, pairs []records.Pair, clusters []records.ClusterRecord) (*Result, error) {
	if threshold < t.MinJ {
		return nil, fmt.Errorf("threshold %v is below the truth's minimum similarity %v", threshold, t.MinJ)
	}
	up := roundEdge(threshold + 0.05)
	r := &Result{
		Threshold: threshold,
		Bins:      bins(t.MinJ, threshold),
		Above:     Bin{Label: fmt.Sprintf("J >= %.2f", up), Lo: up},
		Near:      Bin{Label: fmt.Sprintf("[%.2f, %.2f)", threshold, up), Lo: threshold, Hi: up},
		Total:     Bin{Label: fmt.Sprintf("J >= %.2f", threshold), Lo: threshold},
	}

	listed := make(map[uint64]struct{}, len(pairs))
	for _, p := range pairs {
		r.Rows++
		if p.A >= p.B {
			r.Unordered++
		}
		a, okA := t.Index(p.AID)
		b, okB := t.Index(p.BID)
		if !okA || !okB || a == b {
			r.Unknown++
			continue
		}
		k := pairKey(a, b)
		if _, seen := listed[k]; seen {
			r.Repeated++
			continue
		}
		listed[k] = struct{}{}
		r.Distinct++
		j := t.Jaccard(a, b)
		if j < threshold {
			r.Below++
		}
		if p.Method == "exact" {
			e := math.Abs(p.Similarity - j)
			r.MaxError = max(r.MaxError, e)
			if e > SimilarityTolerance {
				r.Mismatches++
			}
		}
	}
	r.Precision = ratio(r.Distinct-r.Below, r.Distinct)

	cluster := make([]int64, len(t.Docs))
	for i := range cluster {
		cluster[i] = -1
	}
	for _, c := range clusters {
		if i, ok := t.Index(c.ID); ok {
			cluster[i] = c.Cluster
			r.ClusterDocs++
		}
	}

	for _, p := range t.Pairs {
		if p.J < threshold {
			continue
		}
		_, isListed := listed[pairKey(p.A, p.B)]
		clustered := cluster[p.A] >= 0 && cluster[p.A] == cluster[p.B]
		short, template := t.Short(p.A, p.B), t.Template(p.A, p.B)
		for k := range r.Bins {
			if r.Bins[k].contains(p.J) {
				r.Bins[k].add(short, template, isListed, clustered)
				break
			}
		}
		if p.J >= up {
			r.Above.add(short, template, isListed, clustered)
		} else {
			r.Near.add(short, template, isListed, clustered)
		}
		r.Total.add(short, template, isListed, clustered)
	}
	return r, nil
}

// PerfectBin returns the bin J = 1.
func (r *Result) PerfectBin() Bin { return r.Bins[len(r.Bins)-1] }

// Check returns the --check criteria that r fails, none if it passes:
// those of CheckAbove, pair recall at least MinRecallNear for
// [threshold, threshold + 0.05), and every pair with J = 1 listed.
func (r *Result) Check() []string {
	fail := r.CheckAbove()
	if v := r.Near.All.PairRecall(); v < MinRecallNear {
		fail = append(fail, fmt.Sprintf("pair recall %.4f for %s, want >= %.2f", v, r.Near.Label, MinRecallNear))
	}
	if one := r.PerfectBin(); one.All.Listed < one.All.True {
		fail = append(fail, fmt.Sprintf("pair recall %.4f for J = 1, want 1", one.All.PairRecall()))
	}
	return fail
}

// CheckAbove returns the criteria of Check on precision and on the pairs
// well above the threshold that r fails: precision 1 (no listed pair below
// the threshold, every exact similarity right, every pair listed once as
// a < b, every id known) and pair recall at least MinRecallAbove for
// J >= threshold + 0.05.
func (r *Result) CheckAbove() []string {
	var fail []string
	bad := func(format string, a ...any) { fail = append(fail, fmt.Sprintf(format, a...)) }
	if r.Below > 0 {
		bad("%d listed pairs below the threshold (precision %.4f)", r.Below, r.Precision)
	}
	if r.Mismatches > 0 {
		bad("%d similarities off the exact Jaccard by more than %g (largest %.3g)", r.Mismatches, SimilarityTolerance, r.MaxError)
	}
	if r.Repeated > 0 {
		bad("%d pairs listed more than once", r.Repeated)
	}
	if r.Unordered > 0 {
		bad("%d rows with a >= b", r.Unordered)
	}
	if r.Unknown > 0 {
		bad("%d rows naming unknown documents", r.Unknown)
	}
	if v := r.Above.All.PairRecall(); v < MinRecallAbove {
		bad("pair recall %.4f for %s, want >= %.2f", v, r.Above.Label, MinRecallAbove)
	}
	return fail
}
