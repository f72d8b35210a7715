package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
)

// CompactConfig is what CompactIndexes does.
type CompactConfig struct {
	// Out is where the compacted index goes: a directory or URL holding
	// no index (or any, with Overwrite).
	Out string
	// Indexes are the finished jobs' outputs, of one series: the same
	// parameters, each matched against the ones before it.
	Indexes []string
	// Job names the compacted index (default: from the jobs' names).
	Job       string
	Overwrite bool
	Log       *slog.Logger
}

// ErrHasIndex is returned when CompactConfig.Out holds an index already.
var ErrHasIndex = errors.New("holds an index already (pass --overwrite to replace it)")

// CompactIndexes writes the indexes of a series of jobs as one index at
// cfg.Out (see index.Compact): a later job names it once in --against
// instead of every earlier job, and query reads it as one. Every file
// copied is checked against its source's index; a compaction that fails
// leaves no index at cfg.Out (with Overwrite, the one it replaces is
// gone too, its index.json removed before anything is written).
func CompactIndexes(ctx context.Context, cfg CompactConfig) (*index.Index, error) {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if len(cfg.Indexes) == 0 {
		return nil, errors.New("no index to compact")
	}
	out, err := storage.ParseLocation(cfg.Out)
	if err != nil {
		return nil, err
	}
	out = out.Abs()
	var locs []storage.Location
	for _, s := range cfg.Indexes {
		l, err := storage.ParseLocation(s)
		if err != nil {
			return nil, err
		}
		locs = append(locs, l.Abs())
	}
	st, err := storage.OpenLocation(ctx, out)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	unlock, err := st.Lock(job.LockFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", st.Root(), err)
	}
	defer unlock()
	_, err = index.Load(ctx, st)
	replacing := !errors.Is(err, index.ErrNoIndex) && !errors.Is(err, fs.ErrNotExist)
	switch {
	case err == nil && !cfg.Overwrite:
		return nil, fmt.Errorf("%s %w", st.Root(), ErrHasIndex)
	case err != nil && replacing && !cfg.Overwrite:
		return nil, fmt.Errorf("%s: %w", st.Root(), err)
	}
	first, err := storage.OpenLocation(ctx, locs[0])
	if err != nil {
		return nil, err
	}
	ix0, err := index.Load(ctx, first)
	first.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Indexes[0], err)
	}
	p := ix0.Params
	// The checks of --against: the same parameters and document model,
	// no job twice, chunks numbered apart.
	list, err := openEarlier(ctx, out, locs, &p, true, true, log)
	if err != nil {
		return nil, err
	}
	defer closeEarlier(list)
	var srcs []*index.Index
	var names, outs []string
	for _, e := range list {
		srcs = append(srcs, e.index)
		names = append(names, e.index.Job)
		outs = append(outs, e.loc)
	}
	name := cfg.Job
	if name == "" {
		sort.Strings(names)
		name = fmt.Sprintf("c%016x", xxhash.Sum64String(strings.Join(names, "\x00")))
	}
	if replacing {
		// The index replaced is no index from here on: a compaction that
		// fails after overwriting some of its files must not leave it
		// described as complete.
		if err := st.Remove(ctx, job.IndexFile); err != nil {
			return nil, fmt.Errorf("%s: removing the index replaced: %w", st.Root(), err)
		}
		log.Info("the index at out is replaced: its index.json removed", "out", st.Root())
	}
	log.Info("compacting indexes", "out", st.Root(), "indexes", len(srcs), "job", name)
	ix, err := index.Compact(ctx, mounted(st, list), srcs, outs, name)
	if err != nil {
		if replacing {
			return nil, fmt.Errorf("%w (the index %s held is removed: --overwrite)", err, st.Root())
		}
		return nil, err
	}
	log.Info("index compacted", "out", st.Root(), "job", ix.Job, "docs", ix.Docs, "chunks", len(ix.Chunks), "band_files", len(ix.BandFiles))
	if u := ix.Units; u != nil {
		log.Info("unit tables merged", "units", u.Units, "files", len(u.Files), "jobs", len(u.Jobs))
		for _, nc := range u.NotCounted {
			log.Warn("the compacted unit table does not count a job's units: a later job's paragraph pass will not count them either", "job", nc.Job, "reason", nc.Reason)
		}
	}
	return ix, nil
}
