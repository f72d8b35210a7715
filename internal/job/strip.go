package job

import (
	"fmt"
	"strconv"
	"strings"
)

// Strip is how a kept corpus strips the repeated units the paragraph
// pass found (--strip-paragraphs): the units held by at least MinCount
// documents are removed from every kept document but the first holding
// them (KeepFirst), or from all (KeepFirst false); a document left with
// fewer than MinKeptChars characters of text is dropped, listed with its
// reason.
type Strip struct {
	MinCount     int  `json:"min_count"`
	KeepFirst    bool `json:"keep_first"`
	MinKeptChars int  `json:"min_kept_chars,omitempty"`
}

// ParseStrip reads the value of --strip-paragraphs:
// "min-count=N[,keep-first=true|false]"; "" is none (nil).
func ParseStrip(s string) (*Strip, error) {
	if s == "" {
		return nil, nil
	}
	st := &Strip{KeepFirst: true}
	seen := false
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		var err error
		switch {
		case !ok:
			err = fmt.Errorf("%q is no key=value", kv)
		case k == "min-count":
			st.MinCount, err = strconv.Atoi(v)
			if err == nil && st.MinCount < 2 {
				err = fmt.Errorf("min-count must be at least 2 (a unit of one document is not repeated), not %d", st.MinCount)
			}
			seen = true
		case k == "keep-first":
			st.KeepFirst, err = strconv.ParseBool(v)
		default:
			err = fmt.Errorf("unknown key %q (want min-count or keep-first)", k)
		}
		if err != nil {
			return nil, fmt.Errorf("--strip-paragraphs %q: %w", s, err)
		}
	}
	if !seen {
		return nil, fmt.Errorf("--strip-paragraphs %q: min-count=N is required", s)
	}
	return st, nil
}
