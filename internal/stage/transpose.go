package stage

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
)

// transposeBytes bounds the bytes of route tables Transpose holds at once
// (a window of keys of every source's table): at 2,300 chunks × 4,096
// partitions, the reduce tasks' tables are about 660 MB, read in about 20
// windows.
const transposeBytes = 32 << 20

// Transpose gives each key below keys its column of the sources' route
// tables: emit(k, entries) with entries[i] the ranges of source i's slots
// for key k (see workfile.RouteWindow.Entries; none for a nil source or
// a key beyond its table). It reads the tables a window of keys at a
// time, one ranged read a source, so that its memory is bounded by
// transposeBytes and not by sources × keys; emit is called for distinct
// keys from up to inputWriters goroutines at once, and entries is its own.
func Transpose(ctx context.Context, st storage.Opener, sources []*job.Routes, keys int, emit func(k int, entries [][]fileinfo.Info) error) error {
	return transpose(ctx, st, sources, keys, transposeBytes, emit)
}

// transpose is Transpose holding about budget bytes of tables at once.
func transpose(ctx context.Context, st storage.Opener, sources []*job.Routes, keys int, budget int64, emit func(k int, entries [][]fileinfo.Info) error) error {
	var perKey int64
	for _, r := range sources {
		if r != nil {
			perKey += int64(len(r.Slots))*32 + 8
		}
	}
	window := max(1, int(budget/max(perKey, 1)))
	for first := 0; first < keys; first += window {
		last := min(first+window, keys) - 1
		wins := make([]*workfile.RouteWindow, len(sources))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(inputWriters)
		for i, r := range sources {
			g.Go(func() (err error) {
				wins[i], err = workfile.LoadRoutes(gctx, st, r, first, last)
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		g, gctx = errgroup.WithContext(ctx)
		g.SetLimit(inputWriters)
		for k := first; k <= last; k++ {
			g.Go(func() error {
				if err := gctx.Err(); err != nil {
					return err
				}
				entries := make([][]fileinfo.Info, len(wins))
				for i, w := range wins {
					var err error
					if entries[i], err = w.Entries(k, nil); err != nil {
						return err
					}
				}
				return emit(k, entries)
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
	}
	return nil
}

// MaxKeys is the most keys of the tables.
func MaxKeys(tables []*job.Routes) int {
	n := 0
	for _, r := range tables {
		if r != nil {
			n = max(n, r.Keys)
		}
	}
	return n
}
