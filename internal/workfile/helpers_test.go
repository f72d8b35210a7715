package workfile

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/bands"
	"github.com/neardup/neardup/pkg/records"
)

// The tests of the stages have these helpers in package worktest, which
// imports this package: its tests cannot.

func newStore(t *testing.T) *storage.Dir {
	t.Helper()
	st, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// writePairsFile writes pairs, sorted, as a verify task's file of
// verified pairs.
func writePairsFile(t *testing.T, st storage.Creator, name string, pairs []records.Pair) fileinfo.Info {
	t.Helper()
	w := NewPairsWriter(st, name)
	if err := w.WritePairs(context.Background(), pairs); err != nil {
		t.Fatal(err)
	}
	info, err := w.Commit(context.Background())
	if err != nil || info == nil {
		t.Fatalf("%s: %v, %v", name, info, err)
	}
	return *info
}

// writeMembersFile writes members, sorted, as a verify task's file of
// group members.
func writeMembersFile(t *testing.T, st storage.Creator, name string, members []records.ExactMember) fileinfo.Info {
	t.Helper()
	w := NewMembersWriter(st, name)
	if err := w.WriteMembers(context.Background(), members); err != nil {
		t.Fatal(err)
	}
	info, err := w.Commit(context.Background())
	if err != nil || info == nil {
		t.Fatalf("%s: %v, %v", name, info, err)
	}
	return *info
}

// readPairsFile reads every pair of a verified file.
func readPairsFile(ctx context.Context, st storage.Opener, info *fileinfo.Info) ([]records.Pair, error) {
	var all []records.Pair
	err := ReadVerifiedPairs(ctx, st, info, func(rows []records.Pair) error {
		all = append(all, rows...)
		return nil
	})
	return all, err
}

// readMembersFile reads every member of a verified file.
func readMembersFile(ctx context.Context, st storage.Opener, info *fileinfo.Info) ([]records.ExactMember, error) {
	var all []records.ExactMember
	err := ReadVerifiedMembers(ctx, st, info, func(m records.ExactMember) error {
		all = append(all, m)
		return nil
	})
	return all, err
}

// randomBands makes the band records of docs documents of a chunk, by
// partition and sorted: keys from a small range so that buckets hold
// several documents, and some documents sharing a fingerprint (and so
// every key: an exact group).
func randomBands(r *rand.Rand, chunk, docs, nbands, partitions int) [][]records.BandRecord {
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
		slices.SortFunc(p, CompareBand)
	}
	return parts
}

// drain returns every row next gives until it says there are no more,
// failing the test on an error.
func drain[T any](tb testing.TB, next func() (T, bool, error)) []T {
	tb.Helper()
	var out []T
	for {
		row, ok, err := next()
		if err != nil {
			tb.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, row)
	}
}
