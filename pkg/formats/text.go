package formats

import (
	"fmt"
	"io"
)

// readText reads a .txt file as one document whose id is the path; a
// compressed one (as --input-format text may give) is decompressed.
func (r *pieceReader) readText(f File, comp compression) error {
	var src io.Reader = f
	hint := f.Size() + 1
	if comp != compressNone {
		s, err := newStream(f, comp, 0)
		if err != nil {
			return fmt.Errorf("%s: offset 0: %w", r.path, err)
		}
		defer s.close()
		src, hint = s.r, min(4*f.Size(), r.textLimit())+1
	} else if f.Size() > r.textLimit() {
		return r.rejectf(0, 0, "%s", r.tooLarge(f.Size()))
	}
	// The size is a hint: read what is there, a little past it, to notice
	// growth without trusting it.
	text, tooLarge, err := readAllLimited(make([]byte, 0, hint), src, r.textLimit())
	if err != nil {
		return fmt.Errorf("%s: offset %d: %w", r.path, len(text), err)
	}
	if tooLarge {
		return r.rejectf(0, 0, "%s", r.tooLarge(int64(len(text))))
	}
	return r.doc(Doc{ID: r.path, Text: text})
}
