// Package worktest holds what the tests of the stages and of the work
// files share: a store in a test's temporary directory, resolved
// parameters, verified files written and read back whole, and random band
// records. Tests only: no other package imports it.
package worktest

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/bands"
	"github.com/neardup/neardup/pkg/formats"
	"github.com/neardup/neardup/pkg/records"
)

// NewStore returns a store in a temporary directory of t.
func NewStore(t testing.TB) *storage.Dir {
	t.Helper()
	st, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Resolved returns the default parameters changed by set, resolved.
func Resolved(t testing.TB, set func(*job.Params)) job.Params {
	t.Helper()
	p := job.DefaultParams()
	set(&p)
	if err := p.Resolve(); err != nil {
		t.Fatal(err)
	}
	return p
}

// WritePairs writes pairs, sorted, as a verify task's file of verified
// pairs.
func WritePairs(t testing.TB, st storage.Creator, name string, pairs []records.Pair) fileinfo.Info {
	t.Helper()
	w := workfile.NewPairsWriter(st, name)
	if err := w.WritePairs(context.Background(), pairs); err != nil {
		t.Fatal(err)
	}
	info, err := w.Commit(context.Background())
	if err != nil || info == nil {
		t.Fatalf("%s: %v, %v", name, info, err)
	}
	return *info
}

// WriteMembers writes members, sorted, as a verify task's file of group
// members.
func WriteMembers(t testing.TB, st storage.Creator, name string, members []records.ExactMember) fileinfo.Info {
	t.Helper()
	w := workfile.NewMembersWriter(st, name)
	if err := w.WriteMembers(context.Background(), members); err != nil {
		t.Fatal(err)
	}
	info, err := w.Commit(context.Background())
	if err != nil || info == nil {
		t.Fatalf("%s: %v, %v", name, info, err)
	}
	return *info
}

// ReadPairs reads every pair of a verified file.
func ReadPairs(ctx context.Context, st storage.Opener, info *fileinfo.Info) ([]records.Pair, error) {
	var all []records.Pair
	err := workfile.ReadVerifiedPairs(ctx, st, info, func(rows []records.Pair) error {
		all = append(all, rows...)
		return nil
	})
	return all, err
}

// ReadMembers reads every member of a verified file.
func ReadMembers(ctx context.Context, st storage.Opener, info *fileinfo.Info) ([]records.ExactMember, error) {
	var all []records.ExactMember
	err := workfile.ReadVerifiedMembers(ctx, st, info, func(m records.ExactMember) error {
		all = append(all, m)
		return nil
	})
	return all, err
}

// RandomBands makes the band records of docs documents of a chunk, by
// partition and sorted: keys from a small range so that buckets hold
// several documents, and some documents sharing a fingerprint (and so
// every key: an exact group).
func RandomBands(r *rand.Rand, chunk, docs, nbands, partitions int) [][]records.BandRecord {
	parts := make([][]records.BandRecord, partitions)
	for i := range docs {
		fp := int64(r.IntN(docs/2 + 1)) // about two documents a fingerprint
		for b := range nbands {
			key := int64(uint64(fp)*0x9e3779b97f4a7c15 + uint64(b))
			if r.IntN(3) > 0 { // not an exact copy in this band: a near one or none
				key = int64(r.Uint64N(12)) - 6
			}
			part := bands.Partition(uint64(key), partitions)
			parts[part] = append(parts[part], records.BandRecord{Band: int32(b), Key: key, Doc: job.Ordinal(chunk, i), FPHi: fp})
		}
	}
	for _, p := range parts {
		slices.SortFunc(p, workfile.CompareBand)
	}
	return parts
}

// WholeChunk is a chunk of the files at paths, each whole.
func WholeChunk(index int, paths ...string) job.Chunk {
	c := job.Chunk{Index: index}
	for _, p := range paths {
		kind, _ := formats.DetectKind(p)
		c.Pieces = append(c.Pieces, formats.Piece{Path: p, Kind: kind, Start: 0, End: -1, StartLine: 1})
		if st, err := os.Stat(p); err == nil {
			c.Bytes += st.Size()
		}
	}
	return c
}

// WriteTemp writes data to a file name in a temporary directory of t and
// returns its path.
func WriteTemp(t testing.TB, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
