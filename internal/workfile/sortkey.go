package workfile

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/radix"
	"github.com/neardup/neardup/pkg/records"
)

// The reduce stage sorts a partition's candidate edges and the gather
// requests they make, and the gather stage its requests again: millions
// of records on a large job. Rather than compare records (a pdqsort of
// 24-byte structs through a comparator), they are packed into uint64
// keys of the same order and radix-sorted (package radix), which is
// several times faster. A document ordinal, chunk<<32 | index, packs into
// the bits its partition's ordinals span: on the templated 20k corpus, 15
// of 64 (2 chunks of 10,000), so an edge (a, b, band) fits in 38. Records
// whose keys would not fit in 64 bits are sorted by comparison, as
// before; both ways give the same order.

// ordinalSpan is the range of document ordinals added to it.
type ordinalSpan struct {
	minChunk, maxChunk, maxIndex uint64
	seen, negative               bool
}

// add widens the span to x.
func (s *ordinalSpan) add(x int64) {
	if x < 0 {
		s.negative = true
		return
	}
	c, i := uint64(job.ChunkOf(x)), uint64(uint32(x))
	if !s.seen {
		s.minChunk, s.maxChunk, s.seen = c, c, true
	}
	s.minChunk, s.maxChunk, s.maxIndex = min(s.minChunk, c), max(s.maxChunk, c), max(s.maxIndex, i)
}

// code returns the narrowest ordinalCode of the span's ordinals; false
// if one was negative (no ordinal is: it cannot be packed so).
func (s *ordinalSpan) code() (ordinalCode, bool) {
	return ordinalCode{
		minChunk:  s.minChunk,
		chunkBits: uint(bits.Len64(s.maxChunk - s.minChunk)),
		indexBits: uint(bits.Len64(s.maxIndex)),
	}, !s.negative
}

// ordinalCode packs the ordinals of a span into bits() bits, in order:
// the chunk less the span's first, then the index.
type ordinalCode struct {
	minChunk             uint64
	chunkBits, indexBits uint
}

func (c ordinalCode) bits() uint { return c.chunkBits + c.indexBits }

func (c ordinalCode) pack(x int64) uint64 {
	return (uint64(job.ChunkOf(x))-c.minChunk)<<c.indexBits | uint64(uint32(x))
}

func (c ordinalCode) unpack(k uint64) int64 {
	return job.Ordinal(int(k>>c.indexBits+c.minChunk), int(k&(1<<c.indexBits-1)))
}

// SortBufs are the arrays a reduce task compacts its partitions' edges
// in, kept from one partition to the next rather than grown and cleared
// again for each: a partition's edges and their keys take tens of
// megabytes on a large job. The zero value is ready; a nil *SortBufs
// allocates for each call.
type SortBufs struct {
	Edges     []records.Candidate
	keys, tmp []uint64
}

// keyBufs returns an array for n keys and radix scratch for them.
func (s *SortBufs) keyBufs(n int) ([]uint64, []uint64) {
	if s == nil {
		return make([]uint64, n), make([]uint64, n)
	}
	if len(s.keys) < n {
		s.keys, s.tmp = make([]uint64, n), make([]uint64, n)
	}
	return s.keys[:n], s.tmp[:n]
}

// CompactEdges sorts edges by (a, b, band) and keeps, of the edges of one
// pair, the first: the one of its lowest band. It reuses edges' array,
// and sorts in bufs' arrays.
func CompactEdges(edges []records.Candidate, bufs *SortBufs) []records.Candidate {
	code, bandBits, ok := edgeCode(edges)
	if !ok {
		return compactEdgesCompared(edges)
	}
	keys, tmp := bufs.keyBufs(len(edges))
	for i, e := range edges {
		keys[i] = (code.pack(e.A)<<code.bits()|code.pack(e.B))<<bandBits | uint64(e.Band)
	}
	radix.Sort(keys, tmp)
	out := edges[:0]
	for i, k := range keys {
		pair := k >> bandBits
		if i > 0 && pair == keys[i-1]>>bandBits {
			continue // the same pair in a higher band
		}
		out = append(out, records.Candidate{
			A:    code.unpack(pair >> code.bits()),
			B:    code.unpack(pair & (1<<code.bits() - 1)),
			Band: int32(k & (1<<bandBits - 1)),
		})
	}
	return out
}

// edgeCode returns the packing of edges' documents and the bits of their
// bands; false if a key (a, b, band) would not fit in 64 bits, or a band
// is negative (a claim's: edges have none).
func edgeCode(edges []records.Candidate) (ordinalCode, uint, bool) {
	var span ordinalSpan
	var minBand, maxBand int32
	for _, e := range edges {
		span.add(e.A)
		span.add(e.B)
		minBand, maxBand = min(minBand, e.Band), max(maxBand, e.Band)
	}
	code, ok := span.code()
	bandBits := uint(bits.Len32(uint32(maxBand)))
	return code, bandBits, ok && minBand >= 0 && 2*code.bits()+bandBits <= 64
}

// compactEdgesCompared is compactEdges by a comparison sort, for edges
// whose keys would not fit in 64 bits.
func compactEdgesCompared(edges []records.Candidate) []records.Candidate {
	slices.SortFunc(edges, CompareEdge)
	return slices.CompactFunc(edges, func(x, y records.Candidate) bool { return x.A == y.A && x.B == y.B })
}

// EdgeRequests returns the requests of edges, sorted by their first
// document (see writeRequests): both documents of each, for the verify
// task of the first's chunk, sorted by (chunk of the document, verify
// chunk, document) without repeats.
func EdgeRequests(edges []records.Candidate) []Request {
	code, firsts, ok := requestCode(edges)
	if !ok {
		return edgeRequestsCompared(edges)
	}
	// A key is the document's chunk, the verify chunk (of the first
	// document: one of the span's), then the document's index.
	key := func(doc int64, dest uint64) uint64 {
		p := code.pack(doc)
		return (p>>code.indexBits<<code.chunkBits|dest)<<code.indexBits | p&(1<<code.indexBits-1)
	}
	keys := make([]uint64, 0, len(edges)+firsts)
	for i, e := range edges {
		dest := uint64(job.ChunkOf(e.A)) - code.minChunk
		// The first document's request is made once, not once an edge
		// (edges come sorted by it).
		if i == 0 || e.A != edges[i-1].A {
			keys = append(keys, key(e.A, dest))
		}
		keys = append(keys, key(e.B, dest))
	}
	radix.Sort(keys, nil)
	keys = slices.Compact(keys)
	reqs := make([]Request, len(keys))
	for i, k := range keys {
		index := k & (1<<code.indexBits - 1)
		dest := k >> code.indexBits & (1<<code.chunkBits - 1)
		chunk := k >> (code.indexBits + code.chunkBits)
		reqs[i] = Request{
			Doc:  code.unpack(chunk<<code.indexBits | index),
			Dest: int32(dest + code.minChunk),
		}
	}
	return reqs
}

// requestCode returns the packing of edges' documents and the number of
// their distinct first documents (runs of equal a); false if a request
// key (chunk, verify chunk, index) would not fit in 64 bits.
func requestCode(edges []records.Candidate) (ordinalCode, int, bool) {
	var span ordinalSpan
	firsts := 0
	for i, e := range edges {
		span.add(e.A)
		span.add(e.B)
		if i == 0 || e.A != edges[i-1].A {
			firsts++
		}
	}
	code, ok := span.code()
	return code, firsts, ok && 2*code.chunkBits+code.indexBits <= 64
}

// edgeRequestsCompared is edgeRequests by a comparison sort, for edges
// whose keys would not fit in 64 bits.
func edgeRequestsCompared(edges []records.Candidate) []Request {
	reqs := make([]Request, 0, 2*len(edges))
	for i, e := range edges {
		dest := int32(job.ChunkOf(e.A))
		if i == 0 || e.A != edges[i-1].A {
			reqs = append(reqs, Request{e.A, dest})
		}
		reqs = append(reqs, Request{e.B, dest})
	}
	slices.SortFunc(reqs, compareSourceRequest)
	return slices.Compact(reqs)
}

// compareSourceRequest orders requests by the chunk of their document,
// then as compareRequest.
func compareSourceRequest(x, y Request) int {
	if c := cmp.Compare(job.ChunkOf(x.Doc), job.ChunkOf(y.Doc)); c != 0 {
		return c
	}
	return CompareRequest(x, y)
}

// SortRequests sorts requests by (verify chunk, document) without
// repeats. It reuses reqs' array.
func SortRequests(reqs []Request) []Request {
	code, minDest, ok := destCode(reqs)
	if !ok {
		return sortRequestsCompared(reqs)
	}
	keys := make([]uint64, len(reqs))
	for i, r := range reqs {
		keys[i] = uint64(r.Dest-minDest)<<code.bits() | code.pack(r.Doc)
	}
	radix.Sort(keys, nil)
	keys = slices.Compact(keys)
	reqs = reqs[:len(keys)]
	for i, k := range keys {
		reqs[i] = Request{Doc: code.unpack(k & (1<<code.bits() - 1)), Dest: int32(k>>code.bits()) + minDest}
	}
	return reqs
}

// destCode returns the packing of reqs' documents and their first verify
// chunk; false if a key (verify chunk, document) would not fit in 64
// bits or a verify chunk is negative.
func destCode(reqs []Request) (ordinalCode, int32, bool) {
	if len(reqs) == 0 {
		return ordinalCode{}, 0, true
	}
	var span ordinalSpan
	minDest, maxDest := reqs[0].Dest, reqs[0].Dest
	for _, r := range reqs {
		span.add(r.Doc)
		minDest, maxDest = min(minDest, r.Dest), max(maxDest, r.Dest)
	}
	code, ok := span.code()
	destBits := uint(bits.Len32(uint32(maxDest - minDest)))
	return code, minDest, ok && minDest >= 0 && destBits+code.bits() <= 64
}

// sortRequestsCompared is sortRequests by a comparison sort, for requests
// whose keys would not fit in 64 bits.
func sortRequestsCompared(reqs []Request) []Request {
	slices.SortFunc(reqs, CompareRequest)
	return slices.Compact(reqs)
}

// SortBySecond sorts idx, indices of edges, by their edges' second
// documents, then by index: verify's windows of second documents. The
// document packs into the bits its edges' span, the index below it, and
// the keys are radix-sorted; keys that would not fit in 64 bits are
// sorted by comparison.
func SortBySecond(edges []records.Candidate, idx []int) {
	var span ordinalSpan
	for _, i := range idx {
		span.add(edges[i].B)
	}
	code, ok := span.code()
	low := uint(bits.Len(uint(len(edges))))
	if !ok || code.bits()+low > 64 {
		slices.SortFunc(idx, func(x, y int) int { return cmp.Or(cmp.Compare(edges[x].B, edges[y].B), cmp.Compare(x, y)) })
		return
	}
	keys := make([]uint64, len(idx))
	for k, i := range idx {
		keys[k] = code.pack(edges[i].B)<<low | uint64(i)
	}
	radix.Sort(keys, nil)
	for k, key := range keys {
		idx[k] = int(key & (1<<low - 1))
	}
}

// SortEdgesGrouped sorts edges by (group(a), a, b, band), for group
// values in [0, groups): slices.SortFunc's order with that comparison,
// in which edges that compare equal are equal. groups 1 (group nil) sorts
// by CompareEdge.
func SortEdgesGrouped(edges []records.Candidate, groups int, group func(a int64) int) {
	code, bandBits, ok := edgeCode(edges)
	groupBits := uint(bits.Len(uint(max(groups, 1) - 1)))
	if !ok || 2*code.bits()+bandBits+groupBits > 64 {
		slices.SortFunc(edges, func(x, y records.Candidate) int {
			if group != nil {
				if c := cmp.Compare(group(x.A), group(y.A)); c != 0 {
					return c
				}
			}
			return CompareEdge(x, y)
		})
		return
	}
	keys := make([]uint64, len(edges))
	for i, e := range edges {
		k := (code.pack(e.A)<<code.bits()|code.pack(e.B))<<bandBits | uint64(e.Band)
		if group != nil {
			k |= uint64(group(e.A)) << (2*code.bits() + bandBits)
		}
		keys[i] = k
	}
	radix.Sort(keys, nil)
	for i, k := range keys {
		pair := k >> bandBits & (1<<(2*code.bits()) - 1)
		edges[i] = records.Candidate{
			A:    code.unpack(pair >> code.bits()),
			B:    code.unpack(pair & (1<<code.bits() - 1)),
			Band: int32(k & (1<<bandBits - 1)),
		}
	}
}
