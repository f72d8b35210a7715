package pqfile

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/storage"
)

// TestBackground checks that a Background writes the file a Writer given
// the same batches writes, reusing the batches it hands back, and that a
// failure of its writer (the context cancelled) reaches Write or Close
// and leaves no file.
func TestBackground(t *testing.T) {
	ctx := context.Background()
	d, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, writeBatch, 5*writeBatch + 3, maxRowsPerGroup + 4099} {
		rows := make([]row, n)
		rng := rand.New(rand.NewPCG(uint64(n), 2))
		for i := range rows {
			rows[i] = row{A: int64(i), S: strings.Repeat("y", rng.IntN(30))}
		}
		want, err := Write(ctx, d, "want.parquet", rows, Sorted("a"))
		if err != nil {
			t.Fatal(err)
		}
		w, err := NewWriter[row](ctx, d, "got.parquet", Sorted("a"))
		if err != nil {
			t.Fatal(err)
		}
		b := NewBackground(w)
		batch := make([]row, 0, writeBatch)
		for _, r := range rows {
			if batch = append(batch, r); len(batch) == writeBatch {
				if batch, err = b.Write(batch); err != nil {
					t.Fatal(err)
				}
				if len(batch) != 0 || cap(batch) != writeBatch {
					t.Fatalf("%d rows: Write handed back a batch of %d rows, capacity %d", n, len(batch), cap(batch))
				}
			}
		}
		if len(batch) > 0 {
			if _, err := b.Write(batch); err != nil {
				t.Fatal(err)
			}
		}
		got, err := b.Close()
		if err != nil {
			t.Fatal(err)
		}
		x, _ := os.ReadFile(d.Path(want.Name))
		y, _ := os.ReadFile(d.Path(got.Name))
		if !bytes.Equal(x, y) || got.Rows != int64(n) || got.Checksum != want.Checksum {
			t.Errorf("%d rows: the background writer's file (%+v) is not the writer's (%+v)", n, got, want)
		}
	}

	// The writer fails: its context is cancelled.
	cctx, cancel := context.WithCancel(ctx)
	w, err := NewWriter[row](cctx, d, "failed.parquet", Sorted("a"))
	if err != nil {
		t.Fatal(err)
	}
	b := NewBackground(w)
	cancel()
	batch := make([]row, writeBatch)
	var werr error
	for range 3 {
		if batch, werr = b.Write(batch[:writeBatch]); werr != nil {
			break
		}
	}
	_, cerr := b.Close()
	if !errors.Is(cerr, context.Canceled) || werr != nil && !errors.Is(werr, context.Canceled) {
		t.Errorf("cancelled: Write %v, Close %v, want context.Canceled", werr, cerr)
	}
	if _, err := os.Stat(d.Path("failed.parquet")); !os.IsNotExist(err) {
		t.Errorf("cancelled: the file exists (%v)", err)
	}
}
