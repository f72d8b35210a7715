package workfile

// Source is one sorted input of a Merge.
type Source[T any] interface {
	// Next returns the source's next row; ok is false at its end, after
	// which Merge does not call it again.
	Next() (row T, ok bool, err error)
}

// Merge is a k-way merge of sorted sources: a tree of losers over them,
// which takes about log2(sources) comparisons a row (a binary heap takes
// up to twice as many). It is stable: rows that compare equal come in the
// order of their sources, then of their places in them. A source's rows
// must be in order; Merge does not check it (a source can: reduce's do).
type Merge[T any] struct {
	cmp  func(x, y T) int
	srcs []Source[T]
	cur  []T    // each source's current row
	over []bool // whether a source is over: after every row
	// tree[0] is the source of the least current row; tree[n], for n in
	// 1..len(srcs)-1, the source that lost the match at node n, whose
	// children are 2n and 2n+1: node len(srcs)+i is source i.
	tree []int
}

// NewMerge reads the first row of each source and returns their merge in
// the order cmp gives (as slices.SortFunc's).
func NewMerge[T any](cmp func(x, y T) int, srcs ...Source[T]) (*Merge[T], error) {
	m := &Merge[T]{cmp: cmp, srcs: srcs, cur: make([]T, len(srcs)), over: make([]bool, len(srcs)), tree: make([]int, len(srcs))}
	for i, s := range srcs {
		row, ok, err := s.Next()
		if err != nil {
			return nil, err
		}
		m.cur[i], m.over[i] = row, !ok
	}
	playLosers(m.tree, m.before)
	return m, nil
}

// before reports whether source x's current row comes before source y's:
// it is less, or equal and x is the earlier source. A source that is over
// comes after every row.
func (m *Merge[T]) before(x, y int) bool {
	switch {
	case m.over[x]:
		return false
	case m.over[y]:
		return true
	}
	c := m.cmp(m.cur[x], m.cur[y])
	return c < 0 || c == 0 && x < y
}

// playLosers plays the first matches of a tree of losers over
// len(tree) sources (Merge's, EdgeMerger's, BandMerge's): it records the
// loser of each match at its node n (children 2n and 2n+1, node
// len(tree)+i being source i) and the overall winner at tree[0]. before
// reports whether source x's current row comes before source y's.
func playLosers(tree []int, before func(x, y int) bool) {
	k := len(tree)
	var play func(n int) int
	play = func(n int) int {
		if n >= k {
			return n - k
		}
		a, b := play(2*n), play(2*n+1)
		if before(b, a) {
			a, b = b, a
		}
		tree[n] = b
		return a
	}
	if k > 0 {
		tree[0] = play(1)
	}
}

// Next returns the least row not yet returned; ok is false when none is
// left. An error is its source's.
func (m *Merge[T]) Next() (row T, ok bool, err error) {
	if len(m.srcs) == 0 || m.over[m.tree[0]] {
		return row, false, nil
	}
	w := m.tree[0]
	row = m.cur[w]
	next, more, err := m.srcs[w].Next()
	if err != nil {
		var zero T
		return zero, false, err
	}
	m.cur[w], m.over[w] = next, !more
	// The source's next row plays the matches on its way up.
	for n := (w + len(m.srcs)) / 2; n > 0; n /= 2 {
		if t := m.tree[n]; m.before(t, w) {
			m.tree[n], w = w, t
		}
	}
	m.tree[0] = w
	return row, true, nil
}
