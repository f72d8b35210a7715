package stage

import "testing"

func TestChooseKept(t *testing.T) {
	info := map[int64]*memberInfo{1: {tokens: 10}, 5: {tokens: 30}, 9: {tokens: 30}, 12: {tokens: 2}}
	members := []int64{1, 5, 9, 12}
	tests := []struct {
		keep string
		want int64
	}{
		{"first", 1},
		{"longest", 5}, // 5 and 9 tie: the first wins
	}
	for _, tt := range tests {
		if got := chooseKept(members, info, tt.keep); got != tt.want {
			t.Errorf("chooseKept(%s) = %d, want %d", tt.keep, got, tt.want)
		}
	}
}
