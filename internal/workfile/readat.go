package workfile

import (
	"errors"
	"io"

	"github.com/neardup/neardup/internal/fileinfo"
)

// readAt fills p from r at off. io.ReaderAt lets a reader return io.EOF
// with p filled when p reaches the end of its input (bytes.Reader does
// for an empty p there): that is a whole read, not an error.
func readAt(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) && errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// inFile reports whether the range info describes lies inside a file of
// size bytes; a range past the largest offset is not, rather than one
// whose end wraps around.
func inFile(info fileinfo.Info, size int64) bool {
	return info.Offset >= 0 && info.Bytes >= 0 && info.Offset <= size && info.Bytes <= size-info.Offset
}

// holdsRecords reports whether the range info describes is info.Rows
// records of size bytes.
func holdsRecords(info fileinfo.Info, size int64) bool {
	return info.Rows >= 0 && info.Bytes%size == 0 && info.Bytes/size == info.Rows
}
