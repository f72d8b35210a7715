package cluster

import (
	"cmp"
	"strings"

	"github.com/neardup/neardup/internal/job"
)

// rank is the value a keep rule ranks a document by (the keep_num or
// keep_str map read from its record into docs/), if it has one.
type rank struct {
	Num            float64
	Str            string
	HasNum, HasStr bool
}

// rankOf is the rank of a row of docs/.
func rankOf(d docInfo) rank {
	var r rank
	if d.KeepNum != nil {
		r.HasNum, r.Num = true, *d.KeepNum
	}
	if d.KeepStr != nil {
		r.HasStr, r.Str = true, *d.KeepStr
	}
	return r
}

// compareRanks orders x before y (< 0) when a rule of direction desc
// prefers x: a value before none; numbers and strings apart, every
// string above every number; larger first if desc.
func compareRanks(x, y rank, desc bool) int {
	kind := func(r rank) int {
		switch {
		case r.HasStr:
			return 2
		case r.HasNum:
			return 1
		}
		return 0
	}
	kx, ky := kind(x), kind(y)
	switch {
	case kx == 0 || ky == 0:
		return cmp.Compare(ky, kx) // none last, in either direction
	case kx != ky:
		return dir(cmp.Compare(kx, ky), desc)
	case kx == 1:
		return dir(cmp.Compare(x.Num, y.Num), desc)
	}
	return dir(strings.Compare(x.Str, y.Str), desc)
}

// dir is c, or -c when desc: larger values first.
func dir(c int, desc bool) int {
	if desc {
		return -c
	}
	return c
}

// chooseKept picks the document a cluster keeps of docs (in ordinal
// order) among those eligible says may be kept (nil: all): the first,
// or under rule the one it prefers (longest: the most tokens; newest and
// field rules: by compareRanks), ties going to the smallest ordinal. It
// returns its index, or -1 if none is eligible.
func chooseKept(docs []compRow, eligible func(compRow) bool, rule job.KeepRule) int {
	kept := -1
	for i, d := range docs {
		if eligible != nil && !eligible(d) {
			continue
		}
		if kept < 0 || prefers(rule, d, docs[kept]) {
			kept = i
		}
	}
	return kept
}

// prefers reports whether rule prefers x to y strictly.
func prefers(rule job.KeepRule, x, y compRow) bool {
	switch rule.Kind {
	case job.KeepByTokens:
		return x.Tokens > y.Tokens
	case job.KeepByDate, job.KeepByField:
		return compareRanks(x.rank(), y.rank(), rule.Desc) < 0
	}
	return false
}
