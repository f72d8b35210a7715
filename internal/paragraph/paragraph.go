// Package paragraph cuts a document's text into units, lines or
// paragraphs (runs of non-blank lines between blank ones), and hashes
// each unit's text as the shingles see it (shingle.AppendNormalized: case,
// punctuation and spacing, and the job's digit and diacritic options,
// ironed out, tokens cut by script), with xxhash. The paragraph pass
// (--paragraphs) counts the documents holding each unit hash; the kept
// corpus strips the units held by many (Strip).
package paragraph

import (
	"fmt"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/pkg/shingle"
)

// The kinds of unit.
const (
	// Line units are the text's lines (cut at '\n', a '\r' before it not
	// part of the line).
	Line = "line"
	// Paragraph units are the runs of non-blank lines: the text between
	// blank lines (lines of white space only).
	Paragraph = "paragraph"
)

// CheckKind refuses a kind of unit other than Line and Paragraph.
func CheckKind(kind string) error {
	if kind != Line && kind != Paragraph {
		return fmt.Errorf("--paragraph-unit must be %s or %s, not %q", Line, Paragraph, kind)
	}
	return nil
}

// Bounds of a unit's place (Place): a unit begins before MaxOffset and
// is shorter than MaxLength bytes; a longer unit (a text of 256 MiB
// without a line break) is no unit.
const (
	lengthBits = 28
	MaxLength  = 1<<lengthBits - 1
	MaxOffset  = 1<<(63-lengthBits) - 1
)

// Unit is one unit of a text: its bytes text[Offset:Offset+Length].
type Unit struct {
	// Index is its place among the text's units, from 0.
	Index int
	// Offset and Length locate it in the text, in bytes; Length does not
	// count the line break after it.
	Offset, Length int
	// Hash is the xxhash of its normalised text.
	Hash uint64
}

// Place packs a unit's offset and length into one non-negative int64.
func (u Unit) Place() int64 { return int64(u.Offset)<<lengthBits | int64(u.Length) }

// FromPlace unpacks a place (Place).
func FromPlace(p int64) (offset, length int) {
	return int(p >> lengthBits), int(p & MaxLength)
}

// Cutter cuts texts into units; it reuses its buffer from text to text
// and is not safe for concurrent use.
type Cutter struct {
	o          shingle.Options
	paragraphs bool
	buf        []byte
}

// NewCutter returns a cutter of units of the kind given (Line or
// Paragraph), normalised by o.
func NewCutter(kind string, o shingle.Options) (*Cutter, error) {
	if err := CheckKind(kind); err != nil {
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return &Cutter{o: o, paragraphs: kind == Paragraph}, nil
}

// Cut calls fn with every unit of text, in order. A stretch of text
// without a token (an empty line, a row of dashes) is no unit, and takes
// no index.
func (c *Cutter) Cut(text string, fn func(Unit) error) error {
	index := 0
	emit := func(start, end int) error {
		if end-start > MaxLength || start > MaxOffset {
			return nil
		}
		c.buf = shingle.AppendNormalized(c.buf[:0], text[start:end], c.o)
		if len(c.buf) == 0 {
			return nil
		}
		u := Unit{Index: index, Offset: start, Length: end - start, Hash: xxhash.Sum64(c.buf)}
		index++
		return fn(u)
	}
	runStart, runEnd := -1, -1 // the paragraph being read
	for at := 0; at < len(text); {
		end := strings.IndexByte(text[at:], '\n')
		next := at + end + 1
		if end < 0 {
			end, next = len(text)-at, len(text)
		}
		lineEnd := at + end
		if lineEnd > at && text[lineEnd-1] == '\r' {
			lineEnd--
		}
		switch {
		case !c.paragraphs:
			if err := emit(at, lineEnd); err != nil {
				return err
			}
		case strings.TrimSpace(text[at:lineEnd]) == "":
			if runStart >= 0 {
				if err := emit(runStart, runEnd); err != nil {
					return err
				}
			}
			runStart = -1
		default:
			if runStart < 0 {
				runStart = at
			}
			runEnd = lineEnd
		}
		at = next
	}
	if runStart >= 0 {
		return emit(runStart, runEnd)
	}
	return nil
}

// Strip returns text without the units for which drop holds: each such
// unit's bytes go with the line break after it, if any, so that a dropped
// line leaves no empty line behind. The text of the other units, and
// everything between units, is kept as it is.
func (c *Cutter) Strip(text string, drop func(Unit) bool) (string, error) {
	var b strings.Builder
	kept := 0 // text[:kept] is decided
	err := c.Cut(text, func(u Unit) error {
		if !drop(u) {
			return nil
		}
		b.WriteString(text[kept:u.Offset])
		kept = u.Offset + u.Length
		if strings.HasPrefix(text[kept:], "\r\n") {
			kept += 2
		} else if strings.HasPrefix(text[kept:], "\n") {
			kept++
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if kept == 0 {
		return text, nil
	}
	b.WriteString(text[kept:])
	return b.String(), nil
}
