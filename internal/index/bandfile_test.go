package index

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/records"
)

// TestReadBandFile checks the column-wise reader against what the map
// stage writes, and that a damaged file is an error.
func TestReadBandFile(t *testing.T) {
	ctx := context.Background()
	st, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var recs []records.BandRecord
	for i := range 5000 {
		recs = append(recs, records.BandRecord{Band: int32(r.IntN(16)), Key: int64(r.Uint64()), Doc: int64(i), FPHi: int64(r.Uint64()), FPLo: -int64(i)})
	}
	slices.SortFunc(recs, workfile.CompareBand)
	info, err := pqfile.Write(ctx, st, "bands/part=00001/chunk-000002.parquet", recs, pqfile.Options{SortedBy: []string{"band", "key", "doc"}, Raw: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadBandFile(ctx, st, info)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, recs) {
		t.Fatal("records read back differ from those written")
	}

	path := filepath.Join(st.Root(), info.Name)
	data, _ := os.ReadFile(path)
	tests := []struct {
		name string
		info fileinfo.Info
		data []byte
	}{
		{"wrong row count", fileinfo.Info{Name: info.Name, Rows: info.Rows + 1, Checksum: info.Checksum, Bytes: info.Bytes}, data},
		{"flipped byte", info, func() []byte { d := slices.Clone(data); d[len(d)/2] ^= 1; return d }()},
		{"truncated", info, data[:len(data)-10]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadBandFile(ctx, st, tt.info); !errors.Is(err, pqfile.ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
		})
	}
}
