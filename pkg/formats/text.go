package formats

import (
	"fmt"
)

// readText reads a .txt file as one document whose id is the path.
func (r *pieceReader) readText(f File) error {
	if f.Size() > r.textLimit() {
		return r.rejectf(0, 0, "%s", r.tooLarge(f.Size()))
	}
	// The size is a hint: read what is there, a little past it, to notice
	// growth without trusting it.
	text, tooLarge, err := readAllLimited(make([]byte, 0, f.Size()+1), f, r.textLimit())
	if err != nil {
		return fmt.Errorf("%s: offset %d: %w", r.path, len(text), err)
	}
	if tooLarge {
		return r.rejectf(0, 0, "%s", r.tooLarge(int64(len(text))))
	}
	return r.doc(Doc{ID: r.path, Text: text})
}
