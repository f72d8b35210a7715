package textstore

import (
	"encoding/binary"
	"fmt"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/s2"
)

// AppendRecord appends one document alone, as a record that DecodeRecord
// reads: its id, url and S2-compressed text, uvarint-prefixed, and their
// xxhash. It is what the gather stage sends a verify task of each
// document it asks for: cheap to encode and decode, and without the
// frame it came from.
func AppendRecord(dst []byte, d Doc) []byte {
	start := len(dst)
	dst = binary.AppendUvarint(dst, uint64(len(d.ID)))
	dst = append(dst, d.ID...)
	dst = binary.AppendUvarint(dst, uint64(len(d.URL)))
	dst = append(dst, d.URL...)
	enc := s2.Encode(nil, d.Text)
	dst = binary.AppendUvarint(dst, uint64(len(enc)))
	dst = append(dst, enc...)
	return binary.LittleEndian.AppendUint64(dst, xxhash.Sum64(dst[start:]))
}

// DecodeRecord checks a record's checksum and decodes it. The text is
// fresh; id and url are copied.
func DecodeRecord(raw []byte) (Doc, error) {
	if len(raw) < 8 {
		return Doc{}, fmt.Errorf("record of %d bytes: %w", len(raw), ErrCorrupt)
	}
	body := raw[:len(raw)-8]
	if xxhash.Sum64(body) != binary.LittleEndian.Uint64(raw[len(raw)-8:]) {
		return Doc{}, fmt.Errorf("record checksum: %w", ErrCorrupt)
	}
	var fields [3][]byte
	for i := range fields {
		l, n := binary.Uvarint(body)
		if n <= 0 || l > uint64(len(body)-n) {
			return Doc{}, fmt.Errorf("record field %d: %w", i, ErrCorrupt)
		}
		fields[i], body = body[n:n+int(l)], body[n+int(l):]
	}
	if len(body) != 0 {
		return Doc{}, fmt.Errorf("%d bytes after the record's fields: %w", len(body), ErrCorrupt)
	}
	text, err := s2.Decode(nil, fields[2])
	if err != nil {
		return Doc{}, fmt.Errorf("record text: %v: %w", err, ErrCorrupt)
	}
	return Doc{ID: string(fields[0]), URL: string(fields[1]), Text: text}, nil
}
