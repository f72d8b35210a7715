package stage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"slices"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

func newStore(t *testing.T) *storage.Dir {
	t.Helper()
	st, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestEdgesRoundTrip checks that edges come back as written, appended to
// what the caller already holds, with ordinals of any chunk and claims.
func TestEdgesRoundTrip(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	held := []records.Candidate{{A: 1, B: 2, Band: 3}}
	tests := []struct {
		name  string
		edges []records.Candidate
	}{
		{"none", nil},
		{"one", []records.Candidate{{A: job.Ordinal(0, 0), B: job.Ordinal(0, 1), Band: 0}}},
		{"claims and far chunks", []records.Candidate{
			{A: job.Ordinal(7, 1), B: job.Ordinal(7, 2), Band: claimBand},
			{A: job.Ordinal(7, 1), B: job.Ordinal(1<<31-1, 1<<32-1), Band: 1<<31 - 1},
			{A: job.Ordinal(7, 3), B: job.Ordinal(9, 0), Band: 12},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := job.EdgeFile(3, 7)
			info, err := writeEdges(ctx, st, name, tt.edges)
			if err != nil {
				t.Fatal(err)
			}
			if info.Name != name || info.Rows != int64(len(tt.edges)) || info.Bytes != int64(edgeRecord*len(tt.edges)) {
				t.Errorf("info %+v for %d edges", info, len(tt.edges))
			}
			got, err := readEdges(ctx, st, info, slices.Clone(held))
			if err != nil {
				t.Fatal(err)
			}
			if want := append(slices.Clone(held), tt.edges...); !slices.Equal(got, want) {
				t.Errorf("read %v, want %v", got, want)
			}
		})
	}
}

// TestEdgesCorrupt checks that an edge file that does not match what its
// writer recorded is an error wrapping pqfile.ErrCorrupt, and a missing
// one an error too.
func TestEdgesCorrupt(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	edges := []records.Candidate{{A: 1, B: 2, Band: 0}, {A: 1, B: 5, Band: claimBand}, {A: 3, B: 4, Band: 9}}
	info, err := writeEdges(ctx, st, "e.edges", edges)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(st.Path(info.Name))
	if err != nil {
		t.Fatal(err)
	}
	flipped := slices.Clone(data)
	flipped[25] ^= 0x10
	tests := []struct {
		name string
		data []byte
		info pqfile.Info
	}{
		{"flipped bit", flipped, info},
		{"truncated", data[:len(data)-edgeRecord], info},
		{"extra record", append(slices.Clone(data), data[:edgeRecord]...), info},
		{"row count", data, pqfile.Info{Name: info.Name, Rows: info.Rows - 1, Checksum: info.Checksum, Bytes: info.Bytes}},
		// Size and checksum as recorded, but not a whole number of records.
		{"partial record", data[:len(data)-1], pqfile.Info{Name: info.Name, Rows: info.Rows, Checksum: xxhash.Sum64(data[:len(data)-1]), Bytes: info.Bytes - 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(st.Path(info.Name), tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readEdges(ctx, st, tt.info, nil)
			if !errors.Is(err, pqfile.ErrCorrupt) {
				t.Fatalf("err = %v (read %v), want ErrCorrupt", err, got)
			}
		})
	}
	if _, err := readEdges(ctx, st, pqfile.Info{Name: "missing.edges"}, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v, want fs.ErrNotExist", err)
	}
}
