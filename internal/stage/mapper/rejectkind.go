package mapper

import (
	"strings"
)

// RejectKind is what a reject's reason says without its particulars, to
// count rejects by: the reason up to its first colon or semicolon, with
// every number replaced by N. "invalid JSON: unexpected end of JSON input
// (at byte 71)" is of the kind "invalid JSON", "invalid UTF-8 in text at
// byte 20" of "invalid UTF-8 in text at byte N", "unreadable: open x: no
// such file or directory" of "unreadable".
func RejectKind(reason string) string {
	if i := strings.IndexAny(reason, ":;"); i >= 0 {
		reason = reason[:i]
	}
	words := strings.Fields(reason)
	for i, w := range words {
		if n := strings.Trim(w, "()[],."); n != "" && strings.Trim(n, "0123456789") == "" {
			words[i] = strings.Replace(w, n, "N", 1)
		}
	}
	if len(words) == 0 {
		return "(no reason)"
	}
	return strings.Join(words, " ")
}
