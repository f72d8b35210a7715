// Package unionfind finds the connected components of a graph given as a
// stream of edges between 64-bit node ids.
package unionfind

import (
	"cmp"
	"slices"
)

// Forest is a disjoint-set forest over the nodes seen so far.
type Forest struct {
	index  map[int64]int32
	ids    []int64
	parent []int32
	size   []int32
}

// New returns an empty forest with room for about n nodes.
func New(n int) *Forest {
	return &Forest{
		index:  make(map[int64]int32, n),
		ids:    make([]int64, 0, n),
		parent: make([]int32, 0, n),
		size:   make([]int32, 0, n),
	}
}

func (f *Forest) node(id int64) int32 {
	if i, ok := f.index[id]; ok {
		return i
	}
	i := int32(len(f.ids))
	f.index[id] = i
	f.ids = append(f.ids, id)
	f.parent = append(f.parent, i)
	f.size = append(f.size, 1)
	return i
}

func (f *Forest) find(i int32) int32 {
	for f.parent[i] != i {
		f.parent[i] = f.parent[f.parent[i]] // path halving
		i = f.parent[i]
	}
	return i
}

// Union joins the components of a and b.
func (f *Forest) Union(a, b int64) {
	ra, rb := f.find(f.node(a)), f.find(f.node(b))
	if ra == rb {
		return
	}
	if f.size[ra] < f.size[rb] {
		ra, rb = rb, ra
	}
	f.parent[rb] = ra
	f.size[ra] += f.size[rb]
}

// Len is the number of nodes seen.
func (f *Forest) Len() int { return len(f.ids) }

// Components returns every component as a sorted list of node ids; the
// components are sorted by their smallest id. The result does not depend on
// the order in which edges were added.
func (f *Forest) Components() [][]int64 {
	byRoot := make(map[int32]int, len(f.ids)/2)
	var comps [][]int64
	for i := range f.ids {
		r := f.find(int32(i))
		k, ok := byRoot[r]
		if !ok {
			k = len(comps)
			byRoot[r] = k
			comps = append(comps, make([]int64, 0, f.size[r]))
		}
		comps[k] = append(comps[k], f.ids[i])
	}
	for _, c := range comps {
		slices.Sort(c)
	}
	slices.SortFunc(comps, func(a, b []int64) int { return cmp.Compare(a[0], b[0]) })
	return comps
}
