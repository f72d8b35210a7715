package verify

import (
	"slices"
	"testing"

	"github.com/neardup/neardup/pkg/records"
)

// TestInEdgeOrder checks that a block's pairs and members, found in parts
// by goroutines and windows in any order, come out in the order of their
// edges, and that edges that gave nothing are skipped.
func TestInEdgeOrder(t *testing.T) {
	pair := func(at int32) records.Pair { return records.Pair{A: int64(at), B: int64(at) + 1} }
	member := func(at int32) records.ExactMember { return records.ExactMember{Group: int64(at), Doc: int64(at) + 1} }
	part := func(pairs, members []int32) *blockOut {
		o := &blockOut{}
		for _, at := range pairs {
			o.pairs, o.pairEdge = append(o.pairs, pair(at)), append(o.pairEdge, at)
		}
		for _, at := range members {
			o.members, o.memberOf = append(o.members, member(at)), append(o.memberOf, at)
		}
		return o
	}
	tests := []struct {
		name        string
		edges       int
		parts       []*blockOut
		wantPairs   []int32
		wantMembers []int32
	}{
		{"nothing", 5, nil, nil, nil},
		{"one part in order", 5, []*blockOut{part([]int32{0, 2, 4}, []int32{1})}, []int32{0, 2, 4}, []int32{1}},
		{"parts and windows interleaved", 10, []*blockOut{
			part([]int32{7, 3}, []int32{9}), part(nil, []int32{0, 5}), part([]int32{1, 8, 2}, nil), part([]int32{6}, nil),
		}, []int32{1, 2, 3, 6, 7, 8}, []int32{0, 5, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &blockOut{parts: tt.parts}
			pairs, members := o.inEdgeOrder(tt.edges)
			var gotPairs, gotMembers []int32
			for _, p := range pairs {
				gotPairs = append(gotPairs, int32(p.A))
			}
			for _, m := range members {
				gotMembers = append(gotMembers, int32(m.Group))
			}
			if !slices.Equal(gotPairs, tt.wantPairs) || !slices.Equal(gotMembers, tt.wantMembers) {
				t.Errorf("pairs of edges %v, members of edges %v; want %v, %v", gotPairs, gotMembers, tt.wantPairs, tt.wantMembers)
			}
		})
	}
}
