package cluster

import (
	"cmp"
	"runtime"
	"slices"

	"golang.org/x/sync/errgroup"
)

// sortCompRows sorts rows by compareCompRows on up to as many goroutines
// as there are processors. The order is total (a row's label, kind, a and
// b are never all another's), so the result is the one sort gives,
// however the work is cut: the labels are cut into ranges of about as
// many rows each (from a sample of the rows' labels), each row is moved
// to its range's place (groupByKey, two passes), and the ranges, in label
// order, are sorted at once. A label of many rows (one large component)
// is one range: sorting it takes as long as before.
func sortCompRows(rows []compRow) {
	procs := runtime.GOMAXPROCS(0)
	var cuts []int64
	if procs > 1 && len(rows) >= minParallelRows {
		cuts = labelCuts(rows, rangesPerProc*procs)
	}
	if len(cuts) == 0 {
		slices.SortFunc(rows, compareCompRows)
		return
	}
	groupByKey(rows, len(cuts)+1, func(r compRow) int {
		i, _ := slices.BinarySearch(cuts, r.Label+1) // the cuts ≤ r.Label
		return i
	})
	var g errgroup.Group
	g.SetLimit(procs)
	for i := range len(cuts) + 1 {
		// The ranges are in label order now: range i ends at the first
		// row of a label of cuts[i] or more.
		hi := len(rows)
		if i < len(cuts) {
			hi, _ = slices.BinarySearchFunc(rows, cuts[i], func(r compRow, c int64) int { return cmp.Compare(r.Label, c) })
		}
		part := rows[:hi]
		rows = rows[hi:]
		g.Go(func() error {
			slices.SortFunc(part, compareCompRows)
			return nil
		})
	}
	g.Wait()
}

// minParallelRows is the fewest rows sortCompRows sorts on several
// goroutines: below it, starting them and moving the rows costs about
// what they save.
const minParallelRows = 1 << 16

// rangesPerProc is how many label ranges sortCompRows cuts for each
// processor, so that ranges of unequal rows even out.
const rangesPerProc = 4

// labelSample is how many rows' labels labelCuts reads.
const labelSample = 4096

// labelCuts returns up to n-1 labels, ascending and distinct, that cut
// the labels of rows into ranges of about as many rows each, from the
// labels of labelSample rows spread evenly over rows: range i holds the
// labels from cut i-1 up to, not including, cut i.
func labelCuts(rows []compRow, n int) []int64 {
	sample := make([]int64, 0, labelSample)
	for i := range labelSample {
		sample = append(sample, rows[i*len(rows)/labelSample].Label)
	}
	slices.Sort(sample)
	var cuts []int64
	for k := 1; k < n; k++ {
		c := sample[k*len(sample)/n]
		if c > sample[0] && (len(cuts) == 0 || c > cuts[len(cuts)-1]) {
			cuts = append(cuts, c)
		}
	}
	return cuts
}
