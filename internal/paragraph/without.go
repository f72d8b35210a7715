package paragraph

import "github.com/neardup/neardup/pkg/shingle"

// Without strips texts of the units whose hash a set holds
// (--shingle-after-strip: the text a document is sketched from). Not
// safe for concurrent use: each goroutine needs its own (Fork).
type Without struct {
	cut *Cutter
	has func(hash uint64) bool
}

// NewWithout returns a Without of units of the kind given, normalised by
// o, that drops the units for which has holds (has must be safe for
// concurrent use).
func NewWithout(kind string, o shingle.Options, has func(hash uint64) bool) (*Without, error) {
	c, err := NewCutter(kind, o)
	if err != nil {
		return nil, err
	}
	return &Without{cut: c, has: has}, nil
}

// Fork returns another Without of the same units, for another goroutine.
func (w *Without) Fork() *Without {
	return &Without{cut: &Cutter{o: w.cut.o, paragraphs: w.cut.paragraphs}, has: w.has}
}

// Text returns text without its units in the set (as Cutter.Strip
// leaves it); text itself when it holds none.
func (w *Without) Text(text []byte) ([]byte, error) {
	dropped := false
	s, err := w.cut.Strip(string(text), func(u Unit) bool {
		if w.has(u.Hash) {
			dropped = true
			return true
		}
		return false
	})
	if err != nil || !dropped {
		return text, err
	}
	return []byte(s), nil
}
