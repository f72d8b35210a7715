package workfile

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"slices"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/records"
)

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
			{A: job.Ordinal(7, 1), B: job.Ordinal(7, 2), Band: ClaimBand},
			{A: job.Ordinal(7, 1), B: job.Ordinal(1<<31-1, 1<<32-1), Band: 1<<31 - 1},
			{A: job.Ordinal(7, 3), B: job.Ordinal(9, 0), Band: 12},
		}},
		// Runs of several of writeRunFile's blocks, and of one row
		// between them.
		{"long runs", slices.Concat(
			chunkEdges(0, 2*runBlock/edgeRecord+7), chunkEdges(1, 1), chunkEdges(5, runBlock/edgeRecord), chunkEdges(6, 3*runBlock/edgeRecord))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := job.EdgeFile(3)
			infos, err := WriteEdges(ctx, st, name, tt.edges)
			if err != nil {
				t.Fatal(err)
			}
			// The file is the edges' records, in order.
			var enc []byte
			for _, e := range tt.edges {
				enc = appendEdge(enc, e)
			}
			if data, err := os.ReadFile(st.Path(name)); len(tt.edges) > 0 && (err != nil || !bytes.Equal(data, enc)) {
				t.Errorf("the file holds %d bytes (%v), want the %d of its edges", len(data), err, len(enc))
			}
			// Each chunk's range holds exactly the edges whose first
			// document is in the chunk, in order.
			var all []records.Candidate
			for _, c := range slices.Sorted(maps.Keys(infos)) {
				info := infos[c]
				var want []records.Candidate
				for _, e := range tt.edges {
					if job.ChunkOf(e.A) == c {
						want = append(want, e)
					}
				}
				if info.Name != name || info.Rows != int64(len(want)) || info.Bytes != int64(edgeRecord*len(want)) {
					t.Errorf("chunk %d: info %+v for %d edges", c, info, len(want))
				}
				got, err := ReadEdges(ctx, st, info, slices.Clone(held))
				if err != nil {
					t.Fatal(err)
				}
				if want := append(slices.Clone(held), want...); !slices.Equal(got, want) {
					t.Errorf("chunk %d: read %v, want %v", c, got, want)
				}
				all = append(all, got[len(held):]...)
			}
			if !slices.Equal(all, tt.edges) {
				t.Errorf("the ranges hold %v, want %v", all, tt.edges)
			}
		})
	}
	if _, err := WriteEdges(ctx, st, "x.edges", []records.Candidate{{A: job.Ordinal(1, 0)}, {A: job.Ordinal(2, 0)}, {A: job.Ordinal(1, 1)}}); err == nil {
		t.Error("edges not grouped by chunk were written")
	}
}

// chunkEdges returns n edges of documents of chunk.
func chunkEdges(chunk, n int) []records.Candidate {
	out := make([]records.Candidate, n)
	for i := range out {
		out[i] = records.Candidate{A: job.Ordinal(chunk, i), B: job.Ordinal(chunk+1, n-i), Band: int32(i % 7)}
	}
	return out
}

// TestEdgesCorrupt checks that an edge range that does not match what its
// writer recorded is an error wrapping ErrCorrupt, and a missing
// one an error too.
func TestEdgesCorrupt(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	edges := []records.Candidate{{A: 1, B: 2, Band: 0}, {A: 1, B: 5, Band: ClaimBand}, {A: 3, B: 4, Band: 9}}
	infos, err := WriteEdges(ctx, st, "e.edges", edges)
	if err != nil {
		t.Fatal(err)
	}
	info := infos[0]
	data, err := os.ReadFile(st.Path(info.Name))
	if err != nil {
		t.Fatal(err)
	}
	flipped := slices.Clone(data)
	flipped[25] ^= 0x10
	tests := []struct {
		name string
		data []byte
		info fileinfo.Info
	}{
		{"flipped bit", flipped, info},
		{"truncated", data[:len(data)-edgeRecord], info},
		{"range beyond the file", data, fileinfo.Info{Name: info.Name, Rows: info.Rows, Checksum: info.Checksum, Bytes: info.Bytes, Offset: edgeRecord}},
		{"row count", data, fileinfo.Info{Name: info.Name, Rows: info.Rows - 1, Checksum: info.Checksum, Bytes: info.Bytes}},
		// Size and checksum as recorded, but not a whole number of records.
		{"partial record", data[:len(data)-1], fileinfo.Info{Name: info.Name, Rows: info.Rows, Checksum: xxhash.Sum64(data[:len(data)-1]), Bytes: info.Bytes - 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(st.Path(info.Name), tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ReadEdges(ctx, st, tt.info, nil)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v (read %v), want ErrCorrupt", err, got)
			}
			// The verify stage's streaming merge refuses it too.
			if m, err := MergeEdges(ctx, st, []fileinfo.Info{tt.info}); !errors.Is(err, ErrCorrupt) {
				if err == nil {
					m.Close()
				}
				t.Fatalf("mergeEdges: err = %v, want ErrCorrupt", err)
			}
		})
	}
	if _, err := ReadEdges(ctx, st, fileinfo.Info{Name: "missing.edges"}, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v, want fs.ErrNotExist", err)
	}
}
