package cluster

import (
	"container/heap"
	"context"
	"fmt"
	"slices"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/records"
)

// pairSink writes the pairs/ file of one verify task, sorted by (a, b),
// from pairs that come mostly in that order: the verified pairs of
// representatives, sorted (ordered), among pairs the expansion adds
// (add), in their own order but each after every pair written so far.
// An added pair waits in a heap until an ordered pair after it comes, so
// a job whose expansion adds few pairs writes its file in one pass, with
// no sort and no run.
//
// At most spill pairs wait: with more, every pair still to come (those
// waiting, and all that follow, ordered or added) goes to sorted runs of
// spill pairs in the work area, merged after the pairs already written
// when the sink closes. Every one of them sorts after those, so the file
// is the same, whatever spill is.
type pairSink struct {
	ctx   context.Context
	st    storage.FS
	chunk int
	spill int
	dense bool // the file is Dense (see densePairs)

	w       *pqfile.Background[records.Pair] // nil until the first batch
	batch   []records.Pair                   // written in order, not yet given to w
	rows    int64                            // written, in batch and w
	last    records.Pair                     // the last pair written
	waiting pairHeap

	spilling bool
	rest     []records.Pair // to come, not yet in a run
	runs     []fileinfo.Info
}

// sinkBatch is how many pairs a sink gives its writer at a time.
const sinkBatch = 4096

// newPairSink returns the sink of chunk's pairs/ file, Dense if dense
// (see densePairs), holding up to spill pairs waiting.
func newPairSink(ctx context.Context, st storage.FS, chunk, spill int, dense bool) *pairSink {
	return &pairSink{ctx: ctx, st: st, chunk: chunk, spill: spill, dense: dense}
}

// ordered gives the sink p, which sorts after every pair given to it so
// far but those added and waiting, and before every pair given after it.
func (s *pairSink) ordered(p records.Pair) error {
	if err := s.after(p); err != nil {
		return err
	}
	if s.spilling {
		return s.keep(p)
	}
	for len(s.waiting) > 0 && workfile.ComparePair(s.waiting[0], p) < 0 {
		if err := s.put(heap.Pop(&s.waiting).(records.Pair)); err != nil {
			return err
		}
	}
	return s.put(p)
}

// add gives the sink p, which sorts after every pair written so far.
func (s *pairSink) add(p records.Pair) error {
	if err := s.after(p); err != nil {
		return err
	}
	if s.spilling {
		return s.keep(p)
	}
	heap.Push(&s.waiting, p)
	if len(s.waiting) <= s.spill {
		return nil
	}
	// Too many wait: all that is to come goes to runs.
	s.spilling = true
	s.rest = append(s.rest, s.waiting...)
	s.waiting = nil
	if len(s.rest) >= s.spill {
		return s.writeRun()
	}
	return nil
}

// after checks that p sorts after the last pair written: a pair out of
// order (verified pairs not sorted, a member before its representative)
// would make an unsorted file.
func (s *pairSink) after(p records.Pair) error {
	if s.rows > 0 && workfile.ComparePair(p, s.last) <= 0 {
		return fmt.Errorf("%s: pair (%d, %d) after (%d, %d): not in order", job.PairFile(s.chunk), p.A, p.B, s.last.A, s.last.B)
	}
	return nil
}

// put writes p, the next pair of the file.
func (s *pairSink) put(p records.Pair) error {
	s.batch = append(s.batch, p)
	s.rows++
	s.last = p
	if len(s.batch) < sinkBatch {
		return nil
	}
	return s.flush()
}

// flush gives the writer the batch.
func (s *pairSink) flush() error {
	if s.w == nil {
		w, err := pqfile.NewWriter[records.Pair](s.ctx, s.st, job.PairFile(s.chunk), pairOptions(s.dense))
		if err != nil {
			return err
		}
		// The pairs are encoded and compressed while the expansion
		// makes the next (in the templated job at 0.5, the file of the
		// verify chunk of most pairs is the stage's last task).
		s.w = pqfile.NewBackground(w)
	}
	var err error
	s.batch, err = s.w.Write(s.batch)
	return err
}

// keep holds p, spilling, for the next run.
func (s *pairSink) keep(p records.Pair) error {
	s.rest = append(s.rest, p)
	if len(s.rest) < s.spill {
		return nil
	}
	return s.writeRun()
}

// writeRun writes the pairs kept as a sorted run.
func (s *pairSink) writeRun() error {
	slices.SortFunc(s.rest, workfile.ComparePair)
	name := job.ClusterTaskFile("expand", s.chunk, fmt.Sprintf("run-%04d.parquet", len(s.runs)))
	info, err := pqfile.Write(s.ctx, s.st, name, s.rest, pqfile.Options{Raw: true})
	if err != nil {
		return err
	}
	s.runs = append(s.runs, info)
	s.rest = s.rest[:0]
	return nil
}

// close writes the pairs still waiting or in runs, then the file, if it
// has any pair, and returns how many pairs it has.
func (s *pairSink) close() (int64, error) {
	var err error
	for len(s.waiting) > 0 && err == nil {
		err = s.put(heap.Pop(&s.waiting).(records.Pair))
	}
	if err == nil && len(s.rest) > 0 {
		err = s.writeRun()
	}
	if err == nil && len(s.runs) > 0 {
		err = s.mergeRuns()
	}
	if err == nil && len(s.batch) > 0 {
		err = s.flush()
	}
	if err != nil {
		s.abort()
		return 0, err
	}
	if s.w == nil {
		return 0, nil
	}
	if _, err := s.w.Close(); err != nil {
		return 0, err
	}
	return s.rows, nil
}

// mergeRuns writes the merge of the runs after the pairs written, and
// removes them.
func (s *pairSink) mergeRuns() error {
	infos := make([]*fileinfo.Info, len(s.runs))
	for i := range s.runs {
		infos[i] = &s.runs[i]
	}
	defer s.removeRuns()
	_, err := mergeInto(s.ctx, s.st, infos, job.PairFile(s.chunk), pairsGroupRows, workfile.ComparePair,
		func(rows []records.Pair) error {
			for _, p := range rows {
				if err := s.put(p); err != nil {
					return err
				}
			}
			return nil
		})
	return err
}

// removeRuns removes the runs written, best effort: they are in the
// task's own part of the work area, which the job removes at its end.
func (s *pairSink) removeRuns() {
	for _, r := range s.runs {
		s.st.Remove(s.ctx, r.Name)
	}
	s.runs = nil
}

// abort discards the file and the runs.
func (s *pairSink) abort() {
	if s.w != nil {
		s.w.Abort()
		s.w = nil
	}
	s.removeRuns()
}

// pairHeap holds pairs by (a, b), the smallest first.
type pairHeap []records.Pair

func (h pairHeap) Len() int           { return len(h) }
func (h pairHeap) Less(i, j int) bool { return workfile.ComparePair(h[i], h[j]) < 0 }
func (h pairHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *pairHeap) Push(x any)        { *h = append(*h, x.(records.Pair)) }
func (h *pairHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	*h = old[:len(old)-1]
	return p
}
