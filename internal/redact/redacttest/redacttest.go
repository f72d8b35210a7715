// Package redacttest gives tests the hostile passwords of
// testdata/userinfo.txt, and tells whether a text shows one of them.
package redacttest

import (
	_ "embed"
	"strings"
)

//go:embed testdata/userinfo.txt
var userinfo string

// Userinfo is the user part of a URL (user:password, or a token) whose
// password holds characters that URLs treat specially.
type Userinfo struct {
	// Text is the user part as written in the URL, before its "@".
	Text string
	// Malformed is true when it must be percent-encoded to be read:
	// url.Parse and nats.go fail on the URL, or read another host (or,
	// for a comma, another list of servers).
	Malformed bool
}

// Hostile returns the user parts of testdata/userinfo.txt.
func Hostile() []Userinfo {
	var out []Userinfo
	for _, line := range strings.Split(userinfo, "\n") {
		kind, text, ok := strings.Cut(line, "\t")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, Userinfo{Text: text, Malformed: kind == "malformed"})
	}
	return out
}

// Shown returns the part of a secret of Hostile that s shows, "" when it
// shows none: every secret is made of "Zq9" and "Xw7", which nothing else
// holds.
func Shown(s string) string {
	for _, part := range []string{"Zq9", "Xw"} {
		if strings.Contains(s, part) {
			return part
		}
	}
	return ""
}
