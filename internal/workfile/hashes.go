package workfile

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/storage"
)

// A hash file is a sorted list of 64-bit hashes, 8 bytes each, little
// endian, nothing else: the units of --shingle-after-strip held by
// enough documents (job.StripSetWorkFile). Its Info's rows count them.

// WriteHashes writes hashes, sorted ascending and distinct, to name.
func WriteHashes(ctx context.Context, st storage.Creator, name string, hashes []uint64) (fileinfo.Info, error) {
	if !slices.IsSorted(hashes) {
		return fileinfo.Info{}, fmt.Errorf("writing %s: hashes not sorted", name)
	}
	w, err := st.Create(ctx, name)
	if err != nil {
		return fileinfo.Info{}, err
	}
	sum := fileinfo.NewSummer(w)
	buf := make([]byte, 0, 8*len(hashes))
	for _, h := range hashes {
		buf = binary.LittleEndian.AppendUint64(buf, h)
	}
	if _, err := sum.Write(buf); err != nil {
		w.Abort()
		return fileinfo.Info{}, fmt.Errorf("writing %s: %w", name, err)
	}
	if err := w.Commit(); err != nil {
		return fileinfo.Info{}, err
	}
	return sum.Info(name, int64(len(hashes))), nil
}

// HashSet is the union of hash files, held sorted in memory.
type HashSet struct{ hashes []uint64 }

// LoadHashes reads the hash files infos (each checked against its Info)
// into one set; it refuses a set of more than limit hashes before
// reading any.
func LoadHashes(ctx context.Context, st storage.Opener, infos []fileinfo.Info, limit int64) (*HashSet, error) {
	var n int64
	for _, in := range infos {
		n += in.Rows
	}
	if n > limit {
		return nil, fmt.Errorf("%d units to leave out of the sketches, more than the %d a task holds (8 bytes each): raise --shingle-after-strip", n, limit)
	}
	s := &HashSet{hashes: make([]uint64, 0, n)}
	for _, in := range infos {
		b, err := storage.ReadFile(ctx, st, in.Name)
		if err != nil {
			return nil, err
		}
		if int64(len(b)) != in.Bytes || int64(len(b)) != 8*in.Rows || xxhash.Sum64(b) != in.Checksum {
			return nil, fmt.Errorf("%s: %d bytes of checksum %x, not the %d bytes (%d hashes) of checksum %x written: %w",
				in.Name, len(b), xxhash.Sum64(b), in.Bytes, in.Rows, in.Checksum, ErrCorrupt)
		}
		for off := 0; off < len(b); off += 8 {
			s.hashes = append(s.hashes, binary.LittleEndian.Uint64(b[off:]))
		}
	}
	slices.Sort(s.hashes)
	return s, nil
}

// Has reports whether the set holds h.
func (s *HashSet) Has(h uint64) bool {
	_, ok := slices.BinarySearch(s.hashes, h)
	return ok
}

// Len is the number of hashes held.
func (s *HashSet) Len() int { return len(s.hashes) }
