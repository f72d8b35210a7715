package formats

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// maxJSONDepth is the deepest nesting of arrays and objects that
// encoding/json accepts: a line nested deeper is invalid JSON to it, and
// so to jsonLineScanner.
const maxJSONDepth = 10000

// The members of a JSONL line that jsonLineScanner looks for, as indexes
// of its names and vals.
const (
	memberID    = iota // the id field
	memberText         // the text field
	memberURL          // "url"
	memberField        // Options.Field
	numMembers
)

// jsonLineScanner checks in one pass that a JSONL line is one valid JSON
// value (RFC 8259; like encoding/json it accepts invalid UTF-8 inside
// strings and at most maxJSONDepth levels of nesting), and records the raw
// values of the top-level members it looks for. A syntax error is
// described with the same message and offset as encoding/json gives.
//
// A scanner is reused from line to line; once its key buffer has grown to
// the longest member name that needs decoding, it allocates nothing.
type jsonLineScanner struct {
	// names are the member names looked for, compared with the decoded
	// member names of the line as encoding/json decodes map keys.
	names [numMembers]string
	// field is set when names[memberField] is looked for (it is not "").
	field bool
	// vals are the raw values (no surrounding whitespace) of the named
	// top-level members of the last line scanned, nil when absent. When a
	// name occurs more than once, the last occurrence wins.
	vals [numMembers][]byte

	key     []byte                      // decoded member name, when it has escapes or non-ASCII bytes
	objects [maxJSONDepth/64 + 1]uint64 // bit d: the container at depth d+1 is an object, not an array

	// The syntax error of the last line scanned, as encoding/json
	// describes it: the byte it stopped at (a space at the end of the
	// line) and the context, "" for an unexpected end of input.
	errAt     int    // bytes read when the error was found
	errChar   byte   // the offending byte
	errWhat   string // context, e.g. "after array element"
	errExpect byte   // for a broken literal, the byte it expected
}

// newJSONLineScanner returns a scanner looking for the id and text fields
// of options o, whose defaults are filled in, for "url" and for
// o.Field unless it is "".
func newJSONLineScanner(o Options) *jsonLineScanner {
	s := &jsonLineScanner{}
	s.names[memberID] = o.IDField
	s.names[memberText] = o.TextField
	s.names[memberURL] = "url"
	s.names[memberField] = o.Field
	s.field = o.Field != ""
	return s
}

// scan checks that data is one valid JSON value, with optional whitespace
// around it, and records the values of the looked-for members if it is an
// object. It returns false when data is not valid JSON; syntaxError then
// describes why.
func (s *jsonLineScanner) scan(data []byte) bool {
	s.vals = [numMembers][]byte{}
	depth := 0       // open arrays and objects
	var member uint8 // the looked-for members (bit per index) named by the current top-level key
	valueStart := 0  // where the value of the current top-level member starts
	i := 0
	for {
		// A value starts at i, maybe after whitespace.
		if i = skipJSONSpace(data, i); i == len(data) {
			s.fail(data, i, "")
			return false
		}
		if depth == 1 {
			valueStart = i
		}
		switch c := data[i]; c {
		case '{', '[':
			if depth == maxJSONDepth {
				s.fail(data, i, "exceeded max depth")
				return false
			}
			word, bit := depth/64, uint64(1)<<(depth%64)
			depth++
			i = skipJSONSpace(data, i+1)
			if c == '[' {
				s.objects[word] &^= bit
				if i < len(data) && data[i] == ']' {
					depth, i = depth-1, i+1
					break // an empty array
				}
				continue // to its first element
			}
			s.objects[word] |= bit
			if i < len(data) && data[i] == '}' {
				depth, i = depth-1, i+1
				break // an empty object
			}
			if i = s.skipKey(data, i, depth, &member); i < 0 {
				return false
			}
			continue // to the first member's value
		case '"':
			i = s.skipString(data, i)
		case 't':
			i = s.skipLiteral(data, i, "true", "in literal true")
		case 'f':
			i = s.skipLiteral(data, i, "false", "in literal false")
		case 'n':
			i = s.skipLiteral(data, i, "null", "in literal null")
		default:
			if c != '-' && (c < '0' || c > '9') {
				s.fail(data, i, "looking for beginning of value")
				return false
			}
			i = s.skipNumber(data, i)
		}
		if i < 0 {
			return false
		}
		// A value ends at i: close the containers that end with it, up to
		// the next value.
		for {
			if depth == 0 {
				if i = skipJSONSpace(data, i); i < len(data) {
					s.fail(data, i, "after top-level value")
					return false
				}
				return true
			}
			if depth == 1 && member != 0 {
				s.record(member, data[valueStart:i])
				member = 0
			}
			if i = skipJSONSpace(data, i); i == len(data) {
				s.fail(data, i, "")
				return false
			}
			object := s.objects[(depth-1)/64]>>((depth-1)%64)&1 != 0
			c := data[i]
			if c == ',' {
				i++
				if object {
					if i = s.skipKey(data, skipJSONSpace(data, i), depth, &member); i < 0 {
						return false
					}
				}
				break // to the next value
			}
			switch {
			case object && c == '}', !object && c == ']':
				depth, i = depth-1, i+1
			case object:
				s.fail(data, i, "after object key:value pair")
				return false
			default:
				s.fail(data, i, "after array element")
				return false
			}
		}
	}
}

// record sets the value of the members in the set member to v.
func (s *jsonLineScanner) record(member uint8, v []byte) {
	for m := range s.vals {
		if member&(1<<m) != 0 {
			s.vals[m] = v
		}
	}
}

// skipKey reads the member name starting at data[i] and the colon after
// it, and returns the index after the colon, or -1 on a syntax error. For a
// member of the top-level object (depth 1) it sets *member to the set of
// looked-for members it names.
func (s *jsonLineScanner) skipKey(data []byte, i, depth int, member *uint8) int {
	if i == len(data) {
		return s.fail(data, i, "")
	}
	if data[i] != '"' {
		return s.fail(data, i, "looking for beginning of object key string")
	}
	start := i
	if i = s.skipString(data, i); i < 0 {
		return -1
	}
	if depth == 1 {
		*member = s.match(data[start+1 : i-1])
	}
	if i = skipJSONSpace(data, i); i == len(data) {
		return s.fail(data, i, "")
	}
	if data[i] != ':' {
		return s.fail(data, i, "after object key")
	}
	return i + 1
}

// match returns the set of looked-for members (bit per index) that the
// member name with the (validated) string literal body lit names.
func (s *jsonLineScanner) match(lit []byte) uint8 {
	name := lit
	for _, c := range lit {
		if c == '\\' || c >= utf8.RuneSelf {
			s.key = appendJSONKey(s.key[:0], lit)
			name = s.key
			break
		}
	}
	var member uint8
	for m, want := range s.names {
		if string(name) == want && (m != memberField || s.field) {
			member |= 1 << m
		}
	}
	return member
}

// skipString returns the index after the string literal starting at
// data[i], or -1 on a syntax error.
func (s *jsonLineScanner) skipString(data []byte, i int) int {
	i++
	for {
		// Skip eight bytes at a time while none of them needs a look.
		for i+8 <= len(data) {
			if m := specialStringBytes(binary.LittleEndian.Uint64(data[i:])); m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		if i == len(data) {
			return s.fail(data, i, "")
		}
		switch c := data[i]; {
		case c == '"':
			return i + 1
		case c == '\\':
			if i+1 == len(data) {
				return s.fail(data, i+1, "in string escape code")
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for j := i + 2; j < i+6; j++ {
					if j == len(data) || !isHexDigit(data[j]) {
						return s.fail(data, j, `in \u hexadecimal character escape`)
					}
				}
				i += 6
			default:
				return s.fail(data, i+1, "in string escape code")
			}
		case c < ' ':
			return s.fail(data, i, "in string literal")
		default:
			i++
		}
	}
}

// specialStringBytes returns a mask with the high bit set in the first
// byte of the eight bytes of x (little-endian) that is a quote, a
// backslash or a control character, and maybe in later bytes; 0 if there
// is none.
func specialStringBytes(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote := x ^ (ones * '"')
	backslash := x ^ (ones * '\\')
	return ((quote-ones)&^quote | (backslash-ones)&^backslash | (x-ones*' ')&^x) & highs
}

// isHexDigit reports whether c is a hexadecimal digit.
func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// isDigit reports whether c is a decimal digit.
func isDigit(c byte) bool {
	return c >= '0' && c <= '9'
}

// skipNumber returns the index after the number starting at data[i] (a
// '-' or a digit), or -1 on a syntax error.
func (s *jsonLineScanner) skipNumber(data []byte, i int) int {
	if data[i] == '-' {
		if i++; i == len(data) || !isDigit(data[i]) {
			return s.fail(data, i, "in numeric literal")
		}
	}
	if data[i] == '0' {
		i++
	} else {
		for i++; i < len(data) && isDigit(data[i]); i++ {
		}
	}
	if i < len(data) && data[i] == '.' {
		if i++; i == len(data) || !isDigit(data[i]) {
			return s.fail(data, i, "after decimal point in numeric literal")
		}
		for i++; i < len(data) && isDigit(data[i]); i++ {
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		if i++; i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i == len(data) || !isDigit(data[i]) {
			return s.fail(data, i, "in exponent of numeric literal")
		}
		for i++; i < len(data) && isDigit(data[i]); i++ {
		}
	}
	return i
}

// skipLiteral returns the index after the literal lit (true, false or
// null) starting at data[i], or -1 on a syntax error described with what.
func (s *jsonLineScanner) skipLiteral(data []byte, i int, lit, what string) int {
	for j := 1; j < len(lit); j++ {
		if i+j == len(data) || data[i+j] != lit[j] {
			s.fail(data, i+j, what)
			s.errExpect = lit[j]
			return -1
		}
	}
	return i + len(lit)
}

// fail records the syntax error found at data[i], or at the end of data
// if i == len(data), and returns -1. An empty context what stands for an
// unexpected end of input.
//
// Like encoding/json, an error at the end of data is the error the byte ' '
// would cause there, at offset len(data); if a space would be fine there,
// the input ended too early.
func (s *jsonLineScanner) fail(data []byte, i int, what string) int {
	s.errChar, s.errAt, s.errWhat, s.errExpect = ' ', len(data), what, 0
	if i < len(data) {
		s.errChar, s.errAt = data[i], i+1
	}
	return -1
}

// syntaxError returns the message and byte offset of the syntax error of
// the last line scanned, as encoding/json's SyntaxError has them.
func (s *jsonLineScanner) syntaxError() (string, int) {
	if s.errWhat == "" {
		return "unexpected end of JSON input", s.errAt
	}
	msg := "invalid character " + quoteJSONChar(s.errChar) + " " + s.errWhat
	if s.errExpect != 0 {
		msg += " (expecting " + quoteJSONChar(s.errExpect) + ")"
	}
	return msg, s.errAt
}

// quoteJSONChar quotes the byte c for an error message as encoding/json
// does: in single quotes, escaped as in a Go string literal, a byte of 0x80
// or more standing for the rune of the same number.
func quoteJSONChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	q := strconv.Quote(string(rune(c)))
	return "'" + q[1:len(q)-1] + "'"
}

// skipJSONSpace returns the index of the first byte of data at or after i
// that is not JSON whitespace, or len(data).
func skipJSONSpace(data []byte, i int) int {
	for ; i < len(data); i++ {
		if c := data[i]; c > ' ' || c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return i
		}
	}
	return i
}

// appendJSONKey appends the member name with the (validated) string
// literal body lit to dst, decoded as encoding/json decodes map keys:
// escapes decoded, escaped lone surrogates and every byte that is not part
// of valid UTF-8 replaced by U+FFFD.
func appendJSONKey(dst, lit []byte) []byte {
	for len(lit) > 0 {
		c := lit[0]
		switch {
		case c == '\\':
			dst, lit = appendEscape(dst, lit)
		case c < utf8.RuneSelf:
			dst, lit = append(dst, c), lit[1:]
		default:
			r, size := utf8.DecodeRune(lit) // utf8.RuneError, 1 for an invalid byte
			dst, lit = utf8.AppendRune(dst, r), lit[size:]
		}
	}
	return dst
}
