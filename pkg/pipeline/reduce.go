package pipeline

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/neardup/neardup/pkg/formats"
	"github.com/neardup/neardup/pkg/pqfile"
)

// runReduce merges the sorted band files of one partition. Every group of
// records with equal (band, key) links each member to the group's smallest
// document: k-1 edges for a group of k. The edges are deduplicated, written
// as the partition's candidates, and routed by the chunk of their first
// document to the verify stage.
func runReduce(ctx context.Context, st store, part int, maps []MapResult) (*ReduceResult, error) {
	start := time.Now()
	res := &ReduceResult{Part: part, EdgeFiles: map[int]pqfile.Info{}}
	m := &merger{}
	defer m.close()
	for _, mr := range maps {
		info, ok := mr.BandFiles[part]
		if !ok {
			continue
		}
		r, err := pqfile.Open[formats.BandRecord](ctx, st, info.Name, &info)
		if err != nil {
			return nil, fmt.Errorf("reduce partition %d: %w", part, err)
		}
		if err := m.add(r); err != nil {
			return nil, fmt.Errorf("reduce partition %d: %w", part, err)
		}
	}

	var edges []formats.Candidate
	var group int64
	var head formats.BandRecord
	for n := 0; ; n++ {
		if n%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		rec, ok, err := m.next()
		if err != nil {
			return nil, fmt.Errorf("reduce partition %d: %w", part, err)
		}
		if !ok {
			break
		}
		res.Records++
		if group > 0 && rec.Band == head.Band && rec.Key == head.Key {
			if rec.Doc == head.Doc {
				return nil, fmt.Errorf("reduce partition %d: document %d twice in band %d: a band file was read twice", part, rec.Doc, rec.Band)
			}
			group++
			edges = append(edges, formats.Candidate{A: head.Doc, B: rec.Doc, Band: rec.Band})
			res.MaxGroup = max(res.MaxGroup, group)
			continue
		}
		head, group = rec, 1
		res.Groups++
	}
	res.MaxGroup = max(res.MaxGroup, min(group, 1))

	slices.SortFunc(edges, compareEdge)
	edges = slices.CompactFunc(edges, func(a, b formats.Candidate) bool { return a.A == b.A && a.B == b.B })
	res.Candidates = int64(len(edges))
	info, err := pqfile.Write(ctx, st, candidateFile(part), edges, pqfile.Sorted("a", "b"))
	if err != nil {
		return nil, err
	}
	res.File = info
	for lo := 0; lo < len(edges); {
		c := chunkOf(edges[lo].A)
		hi := lo
		for hi < len(edges) && chunkOf(edges[hi].A) == c {
			hi++
		}
		info, err := writeEdges(ctx, st, edgeFile(part, c), edges[lo:hi])
		if err != nil {
			return nil, err
		}
		res.EdgeFiles[c] = info
		lo = hi
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// compareEdge orders edges by (a, b, band), so that compacting on (a, b)
// keeps the lowest band.
func compareEdge(a, b formats.Candidate) int {
	if c := cmp.Compare(a.A, b.A); c != 0 {
		return c
	}
	if c := cmp.Compare(a.B, b.B); c != 0 {
		return c
	}
	return cmp.Compare(a.Band, b.Band)
}

// cursor reads one sorted band file in batches.
type cursor struct {
	r   *pqfile.Reader[formats.BandRecord]
	buf []formats.BandRecord
	pos int
	eof bool
}

// fill makes buf[pos] valid; it reports false at the end of the file.
func (c *cursor) fill() (bool, error) {
	for c.pos >= len(c.buf) {
		if c.eof {
			return false, nil
		}
		n, err := c.r.Read(c.buf[:cap(c.buf)])
		c.buf, c.pos = c.buf[:n], 0
		if errors.Is(err, io.EOF) {
			c.eof = true
		} else if err != nil {
			return false, err
		}
	}
	return true, nil
}

// merger is a k-way merge of sorted band files.
type merger struct {
	h     cursorHeap
	all   []*cursor
	last  formats.BandRecord
	first bool
}

func (m *merger) add(r *pqfile.Reader[formats.BandRecord]) error {
	c := &cursor{r: r, buf: make([]formats.BandRecord, 0, 4096)}
	m.all = append(m.all, c)
	ok, err := c.fill()
	if err != nil {
		return err
	}
	if ok {
		heap.Push(&m.h, c)
	}
	return nil
}

// next returns the smallest remaining record. It checks that the records
// come in order, so an unsorted file is an error, not a wrong result.
func (m *merger) next() (formats.BandRecord, bool, error) {
	if len(m.h) == 0 {
		return formats.BandRecord{}, false, nil
	}
	c := m.h[0]
	rec := c.buf[c.pos]
	c.pos++
	ok, err := c.fill()
	if err != nil {
		return rec, false, err
	}
	if ok {
		if compareBand(c.buf[c.pos], rec) < 0 {
			return rec, false, fmt.Errorf("band file not sorted at record %+v", c.buf[c.pos])
		}
		heap.Fix(&m.h, 0)
	} else {
		heap.Pop(&m.h)
	}
	if m.first && compareBand(rec, m.last) < 0 {
		return rec, false, fmt.Errorf("band records out of order: %+v after %+v", rec, m.last)
	}
	m.last, m.first = rec, true
	return rec, true, nil
}

func (m *merger) close() {
	for _, c := range m.all {
		c.r.Close()
	}
}

type cursorHeap []*cursor

func (h cursorHeap) Len() int { return len(h) }
func (h cursorHeap) Less(i, j int) bool {
	return compareBand(h[i].buf[h[i].pos], h[j].buf[h[j].pos]) < 0
}
func (h cursorHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)   { *h = append(*h, x.(*cursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}
