package control

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/redact"
	"github.com/neardup/neardup/internal/storage"
)

// earlierJob is an earlier job a job is matched against (--against): its
// index, and its output opened for reading.
type earlierJob struct {
	loc   string
	dir   *storage.Dir
	index *index.Index
}

// openEarlier opens the indexes of the earlier jobs at locs and makes p
// comparable with them: a job matched against earlier ones takes their
// bands, rows and partitions unless told otherwise (explicit), and any
// parameter that would make signatures or band keys incomparable is
// refused, naming it. Their chunk ranges must not overlap: each job of a
// series is matched against all earlier ones, and numbers its chunks
// after theirs.
func openEarlier(ctx context.Context, own storage.Location, locs []storage.Location, p *job.Params, explicitBands, explicitParts bool, log *slog.Logger) ([]earlierJob, error) {
	var out []earlierJob
	fail := func(err error) ([]earlierJob, error) {
		closeEarlier(out)
		return nil, err
	}
	for _, l := range locs {
		loc := l.String()
		if loc == own.String() {
			return fail(fmt.Errorf("--against %s is the job's own --out", redact.URL(loc)))
		}
		d, err := storage.OpenLocation(ctx, l)
		if err != nil {
			return fail(fmt.Errorf("--against %s: %w", redact.URL(loc), err))
		}
		out = append(out, earlierJob{loc: loc, dir: d})
		ix, err := index.Load(ctx, d)
		if err == nil {
			err = index.CheckModel(ix)
		}
		if err != nil {
			return fail(fmt.Errorf("--against %s: %w", redact.URL(loc), err))
		}
		out[len(out)-1].index = ix
	}
	if len(out) == 0 {
		return nil, nil
	}
	first := out[0].index.Params
	if !explicitBands {
		p.Bands, p.Rows = first.Bands, first.Rows
	}
	if !explicitParts {
		p.Partitions = first.Partitions
	}
	seen := map[string]string{}
	for i, e := range out {
		if err := e.index.Explain(e.loc, *p); err != nil {
			return fail(err)
		}
		if other, ok := seen[e.index.Job]; ok {
			return fail(fmt.Errorf("--against %s and --against %s are the same job (%s)", other, e.loc, e.index.Job))
		}
		seen[e.index.Job] = e.loc
		for _, o := range out[:i] {
			if e.index.FirstChunk < o.index.End() && o.index.FirstChunk < e.index.End() {
				return fail(fmt.Errorf("--against %s (chunks %d to %d) and --against %s (chunks %d to %d) number their documents alike: "+
					"they were not run one after the other; run each job of a series against all earlier ones",
					o.loc, o.index.FirstChunk, o.index.End()-1, e.loc, e.index.FirstChunk, e.index.End()-1))
			}
		}
	}
	held := map[string]bool{} // the jobs a compacted index given holds
	for _, e := range out {
		for _, a := range e.index.Compacted {
			held[a.Job] = true
		}
	}
	for _, e := range out {
		for _, a := range e.index.Against {
			if _, ok := seen[a.Job]; !ok && !held[a.Job] {
				log.Warn("an earlier job was itself matched against a job not given here: documents of that job are not matched",
					"against", e.loc, "not_given", a.Out, "job", a.Job)
			}
		}
	}
	return out, nil
}

// warnPublished warns of earlier jobs whose indexes do not say which
// documents they dropped (all are taken as published), and, when the
// job's keep rule ranks by a field, of those that ranked theirs by
// another.
func warnPublished(list []earlierJob, keep job.Keep, log *slog.Logger) {
	rule, _ := keep.Rule()
	for _, e := range list {
		if slices.ContainsFunc(e.index.Chunks, func(c index.Chunk) bool { return c.Dropped == nil }) {
			log.Warn("an earlier job's index does not record which of its documents it dropped (made before it did): all its documents are taken as published, "+
				"and may be kept in place of this job's; run it again with this build to record them", "against", redact.URL(e.loc), "job", e.index.Job)
		}
		if rule.Ranked() && e.index.Params.Keep != keep {
			log.Warn("an earlier job ranked its documents by another --keep rule: of its published documents in a cluster, the one named as kept is chosen by the values that rule read",
				"against", redact.URL(e.loc), "its_keep", e.index.Params.Keep, "keep", keep)
		}
	}
}

func closeEarlier(list []earlierJob) {
	for _, e := range list {
		e.dir.Close()
	}
}

// againstList describes the earlier jobs for the spec, and returns the
// first chunk number after all of theirs.
func againstList(list []earlierJob) ([]job.Against, int) {
	var out []job.Against
	next := 0
	for _, e := range list {
		out = append(out, job.Against{Job: e.index.Job, Out: e.loc, FirstChunk: e.index.FirstChunk,
			Chunks: e.index.End() - e.index.FirstChunk, Docs: e.index.Docs, Held: e.index.Compacted})
		next = max(next, e.index.End())
	}
	return out, next
}

// earlierMaps are the map results of the earlier jobs' chunks, their
// files named through their mounts: what verify, gather and the cluster
// stage read of them (reduce reads their band files from their indexes).
func earlierMaps(list []earlierJob) []job.MapResult {
	var out []job.MapResult
	for i, e := range list {
		for _, c := range e.index.Chunks {
			m := job.MapResult{Chunk: c.Chunk, Docs: c.Docs, DocFile: c.DocFile, SigFile: c.SigFile}
			m.DocFile.Name = job.InMount(i, m.DocFile.Name)
			m.SigFile.Name = job.InMount(i, m.SigFile.Name)
			if d := c.Dropped; d != nil {
				m.Dropped = &job.DroppedList{Docs: d.Docs, First: d.First}
				if d.File != nil {
					f := *d.File
					f.Name = job.InMount(i, f.Name)
					m.Dropped.File = &f
				}
			}
			out = append(out, m)
		}
	}
	return out
}

// mounted is st with the earlier jobs' outputs under their mounts.
func mounted(st *storage.Dir, list []earlierJob) storage.FS {
	dirs := make([]*storage.Dir, len(list))
	for i, e := range list {
		dirs[i] = e.dir
	}
	return mountDirs(st, dirs)
}

// mountDirs is st with dirs[i] under job.Mount(i), read-only.
func mountDirs(st *storage.Dir, dirs []*storage.Dir) storage.FS {
	if len(dirs) == 0 {
		return st
	}
	m := storage.Mounted{FS: st, Mounts: map[string]storage.Opener{}}
	for i, d := range dirs {
		m.Mounts[job.Mount(i)] = d
	}
	return m
}
