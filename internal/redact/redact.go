// Package redact hides the secrets that URLs carry, a password or a
// token in their user part (scheme://user:password@host,
// scheme://token@host), so that a URL can be logged, printed or put in an
// error, whatever characters the secret holds and whether or not the URL
// can be parsed.
package redact

import (
	"errors"
	"net/url"
	"strings"
)

// Mask is what a secret is replaced with.
const Mask = "xxxxx"

// URL returns s, one URL or several separated by commas (a list of NATS
// servers), with the secret of each hidden: user:password@ becomes
// user:xxxxx@, and a user part without a password (a token) xxxxx@. A
// string without "@" holds no user part and is returned as it is, but for
// the host of a URL that does not parse (scheme://user:pass, a URL cut at
// a comma in its password, reads as a host and a port). When s
// cannot be read as URLs each with its user part before its host (a
// password holding "/", "#", "?", "%", "," or a space, say, not
// percent-encoded), everything from its first scheme:// to its last "@"
// is hidden: more than the secret, but never less.
func URL(s string) string {
	parts := strings.Split(s, ",")
	if !strings.Contains(s, "@") {
		for i, p := range parts {
			parts[i] = hideHost(p)
		}
		return strings.Join(parts, ",")
	}
	for i, p := range parts {
		r, ok := redactOne(p)
		if !ok || i > 0 && split(parts[i-1], p) {
			return hideAll(s)
		}
		parts[i] = r
	}
	return strings.Join(parts, ",")
}

// split tells whether the parts prev and p of a list may be one URL whose
// password holds a comma: p has a user part but no scheme, and prev no
// user part (scheme://user:pass and word@host).
func split(prev, p string) bool {
	return strings.Contains(p, "@") && !strings.Contains(prev, "@") && authorityStart(p) == len(p)-len(strings.TrimLeft(p, " "))
}

// redactOne hides the user part of the URL s, and reports false when s
// does not parse or holds an "@" outside its user part, which URL then
// hides wholesale.
func redactOne(s string) (string, bool) {
	if !strings.Contains(s, "@") {
		return s, true
	}
	start := authorityStart(s)
	parse := s
	if start == 0 {
		parse = "x://" + strings.TrimLeft(s, " ")
	}
	u, err := url.Parse(strings.TrimSpace(parse))
	if err != nil || u.User == nil {
		return "", false
	}
	rest := s[start:]
	end := len(rest)
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		end = i
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 || strings.Contains(rest[end:], "@") {
		return "", false
	}
	user := Mask
	if _, ok := u.User.Password(); ok {
		name, _, _ := strings.Cut(rest[:at], ":")
		user = name + ":" + Mask
	}
	return s[:start] + user + rest[at:], true
}

// hideHost returns the URL s with its host hidden when it does not parse
// and its host ends in a port that is not a number: a URL cut at a comma
// in its password (scheme://user:pass) reads so. Other strings are kept.
func hideHost(s string) string {
	start := authorityStart(s)
	if start == len(s)-len(strings.TrimLeft(s, " ")) {
		return s
	}
	if _, err := url.Parse(strings.TrimSpace(s)); err == nil {
		return s
	}
	end := len(s)
	if i := strings.IndexAny(s[start:], "/?#"); i >= 0 {
		end = start + i
	}
	if i := strings.LastIndex(s[start:end], ":"); i < 0 || digits(s[start+i+1:end]) {
		return s // no user:pass, the port a number: not the secret's piece
	}
	return s[:start] + Mask + s[end:]
}

// digits tells whether s is made of decimal digits only.
func digits(s string) bool {
	return strings.Trim(s, "0123456789") == ""
}

// hideAll hides everything of s from after its first scheme:// (or its
// first non-space character) to its last "@".
func hideAll(s string) string {
	start := authorityStart(s)
	at := strings.LastIndex(s, "@")
	if at < start {
		return s
	}
	return s[:start] + Mask + s[at:]
}

// authorityStart is the index in s just after its first scheme://, or of
// its first non-space character when it has none.
func authorityStart(s string) int {
	if i := strings.Index(s, "://"); i > 0 && validScheme(strings.TrimLeft(s[:i], " ")) {
		return i + 3
	}
	return len(s) - len(strings.TrimLeft(s, " "))
}

// validScheme tells whether s is a URL scheme: a letter, then letters,
// digits, +, - or ..
func validScheme(s string) bool {
	for i, c := range s {
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}

// ParseURL parses s as url.Parse does, but its error never holds s as it
// is: it names s redacted (URL) and says what is wrong in words of its
// own, since url.Parse's error quotes the URL, and its reason may quote a
// part of the password (an invalid escape, a password read as a port).
func ParseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, &Error{URL: URL(s), Problem: Problem(s, err)}
	}
	return u, nil
}

// Error is the error of a URL that cannot be parsed: the URL redacted
// and what is wrong with it.
type Error struct {
	URL, Problem string
}

func (e *Error) Error() string { return "URL " + e.URL + ": " + e.Problem }

// Problem says what is wrong with the URL s, which url.Parse failed to
// parse with err, without quoting s or any part of it.
func Problem(s string, err error) string {
	rest := s[authorityStart(s):]
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		user := rest[:at]
		switch {
		case strings.ContainsAny(user, "/?#"):
			return `its user or password holds "/", "?" or "#", which end a URL's host: percent-encode them (%2F, %3F, %23)`
		case badEscape(user):
			return `its user or password holds a "%" not followed by two hex digits: write "%" as %25`
		case !userChars(user):
			return "its user or password holds a character that must be percent-encoded (a space, a control or non-ASCII character: %XX for each byte of its UTF-8)"
		}
	}
	var esc url.EscapeError
	var host url.InvalidHostError
	switch {
	case errors.As(err, &esc):
		return `it holds a "%" not followed by two hex digits: write "%" as %25`
	case errors.As(err, &host):
		return "its host is not valid"
	case strings.Contains(err.Error(), "invalid port"):
		return "its port is not a number"
	case strings.Contains(err.Error(), "control character"):
		return "it holds a control character"
	case strings.Contains(err.Error(), "missing protocol scheme"):
		return "it has no scheme (scheme://host)"
	}
	return "it is not a valid URL"
}

// badEscape tells whether s holds a % not followed by two hex digits.
func badEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && (i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2])) {
			return true
		}
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// userChars tells whether s holds only the characters a URL's user part
// may hold as they are (RFC 3986 unreserved, sub-delims, ":", "%", and
// "@", which Go accepts).
func userChars(s string) bool {
	for _, c := range s {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.ContainsRune("-._~!$&'()*+,;=:%@", c):
		default:
			return false
		}
	}
	return true
}
