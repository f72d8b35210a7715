package rates

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/pkg/records"
)

// shape is a made-up job for the parallel tests: chunks of documents of
// hosts drawn with a heavy tail, some of them duplicates, some kept for
// documents of earlier jobs.
type shape struct {
	name   string
	chunks []int // the job's own chunks (after earlier jobs' numbers)
	docs   int   // documents per chunk
	hosts  int   // distinct hosts drawn from
	files  int   // input files, each a run of consecutive documents
}

// make writes the shape's docs/ files and duplicates.parquet.
func (s shape) make(t *testing.T) (map[int][]records.DocRecord, []records.Duplicate) {
	rng := rand.New(rand.NewPCG(uint64(len(s.name)), uint64(s.docs)))
	docs := map[int][]records.DocRecord{}
	var dups []records.Duplicate
	n := 0
	for _, c := range s.chunks {
		for i := range s.docs {
			// host k with probability about 1/(k+1): a few hosts of many
			// documents, many of one
			h := int(float64(s.hosts) * rng.Float64() * rng.Float64() * rng.Float64())
			url := fmt.Sprintf("http://h%d.example/%d", h, i)
			if h%97 == 0 {
				url = "" // no host
			}
			file := fmt.Sprintf("f%03d.jsonl", n*s.files/(len(s.chunks)*s.docs))
			docs[c] = append(docs[c], doc(c, i, url, file, int64(1+rng.IntN(5000))))
			if u := rng.IntN(10); u < 3 {
				dups = append(dups, dup(c, i, []string{"", "", "w46", "w47"}[u+h%2]))
			}
			n++
		}
	}
	return docs, dups
}

var againstShapes = []job.Against{{Job: "w46", Docs: 900}, {Job: "w47c", Docs: 70, Held: []job.Against{{Job: "w45", Docs: 30}, {Job: "w47", Docs: 40}}}}

// TestTallyPartsExact counts jobs whose hosts fit the tally in 1 to 16
// parts: the rates, as JSON, are byte-identical to one pass's, with hosts
// under the bound, exactly at it, with many chunks and documents kept for
// earlier jobs.
func TestTallyPartsExact(t *testing.T) {
	for _, s := range []shape{
		{"one chunk", []int{3}, 500, 40, 2},
		{"many chunks", []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 150, 300, 7},
		{"gaps between chunks", []int{0, 4, 5, 9, 30, 31}, 400, 1000, 3},
	} {
		t.Run(s.name, func(t *testing.T) {
			docs, dups := s.make(t)
			st := write(t, docs, dups)
			ctx := context.Background()
			one, err := tallyAt(ctx, st, asChunks(s.chunks), againstShapes, nil, MaxHosts, 1)
			if err != nil {
				t.Fatal(err)
			}
			if one.HostsBound != 0 || one.HostCountEstimated {
				t.Fatalf("one pass is not exact: %+v", one)
			}
			want, _ := json.Marshal(one)
			// holding exactly the job's hosts: exact still
			for _, maxHosts := range []int{MaxHosts, int(one.HostCount)} {
				for _, parts := range []int{2, 3, 5, 16} {
					chunks := slices.Clone(s.chunks)
					rand.Shuffle(len(chunks), func(i, j int) { chunks[i], chunks[j] = chunks[j], chunks[i] })
					got, err := tallyAt(ctx, st, asChunks(chunks), againstShapes, nil, maxHosts, parts)
					if err != nil {
						t.Fatal(err)
					}
					if js, _ := json.Marshal(got); string(js) != string(want) {
						t.Errorf("%d hosts held, %d parts:\n%s\none pass:\n%s", maxHosts, parts, js, want)
					}
				}
			}
		})
	}
}

// TestTallyPartsBounded counts a job of more hosts than the tally holds
// in 1 to 16 parts: the totals, files and earlier jobs are exact, every
// listed host's row is within HostsBound below its exact row, never
// above, HostsBound is at most the job's duplicates over the hosts held,
// every host with more duplicates than that is listed, the rows sum to
// Total, and the hosts (fewer than the distinct sketch's size) are
// counted exactly.
func TestTallyPartsBounded(t *testing.T) {
	s := shape{"bounded", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 400, 3000, 5}
	docs, dups := s.make(t)
	st := write(t, docs, dups)
	ctx := context.Background()
	exact, err := tallyAt(ctx, st, asChunks(s.chunks), againstShapes, nil, 1<<20, 1)
	if err != nil {
		t.Fatal(err)
	}
	// every host's exact row: the hosts of the listed 20 from the exact
	// tally, the others counted here
	truth := map[string]manifest.Rate{}
	for _, rows := range docs {
		for _, d := range rows {
			r := truth[Host(d.URL)]
			r.Name = Host(d.URL)
			r.Docs++
			r.Bytes += d.Bytes
			truth[r.Name] = r
		}
	}
	for _, d := range dups {
		for _, rows := range docs {
			for _, x := range rows {
				if x.Doc == d.Doc {
					r := truth[Host(x.URL)]
					r.Duplicates++
					r.BytesRemoved += x.Bytes
					truth[r.Name] = r
				}
			}
		}
	}
	const held = 24
	for _, parts := range []int{1, 2, 3, 7, 16} {
		got, err := tallyAt(ctx, st, asChunks(s.chunks), againstShapes, nil, held, parts)
		if err != nil {
			t.Fatal(err)
		}
		if got.Total != exact.Total || !slices.Equal(got.Files, exact.Files) || !slices.Equal(got.Earlier, exact.Earlier) {
			t.Errorf("%d parts: total, files or earlier differ from the exact tally's", parts)
		}
		// fewer hosts than the distinct sketch holds: counted exactly
		if got.HostCountEstimated || got.HostCount != exact.HostCount || got.HostsBound == 0 {
			t.Errorf("%d parts: %d hosts (estimated %v), bound %d; want %d hosts and a bound", parts, got.HostCount, got.HostCountEstimated, got.HostsBound, exact.HostCount)
		}
		if limit := got.Total.Duplicates / held; got.HostsBound > limit {
			t.Errorf("%d parts: bound %d, more than %d duplicates over %d hosts held (%d)", parts, got.HostsBound, got.Total.Duplicates, held, limit)
		}
		var sum manifest.Rate
		listed := map[string]bool{}
		for _, h := range got.Hosts {
			addRate(&sum, &h)
			if h.Name == manifest.OtherHosts {
				continue
			}
			listed[h.Name] = true
			w := truth[h.Name]
			if h.Docs > w.Docs || h.Bytes > w.Bytes || h.Duplicates > w.Duplicates || h.BytesRemoved > w.BytesRemoved || h.Duplicates < w.Duplicates-got.HostsBound {
				t.Errorf("%d parts: host %s: %+v, exact %+v, bound %d", parts, h.Name, h, w, got.HostsBound)
			}
		}
		sum.Name = ""
		if sum != got.Total {
			t.Errorf("%d parts: rows sum to %+v, total %+v", parts, sum, got.Total)
		}
		for _, w := range exact.Hosts {
			if w.Name != manifest.OtherHosts && w.Duplicates > got.Total.Duplicates/held && !listed[w.Name] {
				t.Errorf("%d parts: host %s of %d duplicates (more than %d) not listed", parts, w.Name, w.Duplicates, got.Total.Duplicates/held)
			}
		}
	}
}

// TestHostTallyMergeBound adds documents of a heavy-tailed host stream to
// parts of 8 places each, merges them in order and checks the merged
// tally's bounds against the truth: a listed host's duplicates are at most
// its own and short of them by at most its error, which is at most the
// floor; a host not listed has at most floor duplicates; floor is at most
// the duplicates over the places.
func TestHostTallyMergeBound(t *testing.T) {
	const places = 8
	for _, parts := range []int{1, 2, 3, 5, 9} {
		for seed := range uint64(20) {
			rng := rand.New(rand.NewPCG(seed, uint64(parts)))
			truth := map[string]int64{}
			var dups int64
			tallies := make([]*hostTally, parts)
			for i := range tallies {
				tallies[i] = newHostTally(places)
			}
			for i := range 3000 {
				h := fmt.Sprintf("h%d", int(200*rng.Float64()*rng.Float64()))
				dup := rng.IntN(3) > 0
				if dup {
					truth[h]++
					dups++
				}
				tallies[i*parts/3000].add(h, 1, 0, dup)
			}
			m := tallies[0]
			for _, o := range tallies[1:] {
				m.merge(o)
			}
			if m.floor > dups/places {
				t.Errorf("%d parts, seed %d: floor %d > %d duplicates / %d places", parts, seed, m.floor, dups, places)
			}
			if len(m.heap) > places {
				t.Errorf("%d parts, seed %d: %d hosts held", parts, seed, len(m.heap))
			}
			for h, c := range truth {
				e, ok := m.byName.get(h, xxhash.Sum64String(h))
				switch {
				case !ok && c > m.floor:
					t.Errorf("%d parts, seed %d: host %s of %d duplicates not listed, floor %d", parts, seed, h, c, m.floor)
				case ok && (e.Duplicates > c || c > e.rank() || e.err > m.floor):
					t.Errorf("%d parts, seed %d: host %s of %d duplicates: %d, error %d, floor %d", parts, seed, h, c, e.Duplicates, e.err, m.floor)
				}
			}
		}
	}
}

// TestTallyPartsUnknownDuplicate fails, naming duplicates.parquet and the
// document, when a duplicate is of no document the docs/ files hold, in
// any part: before the first chunk, between chunks, in the middle of a
// part's chunk, after the last.
func TestTallyPartsUnknownDuplicate(t *testing.T) {
	docs := map[int][]records.DocRecord{}
	chunks := []int{2, 3, 5, 6, 8, 9}
	for _, c := range chunks {
		for i := range 10 {
			docs[c] = append(docs[c], doc(c, 2*i, "http://a.example/", "f", 1))
		}
	}
	for _, tt := range []struct {
		name string
		doc  int64
	}{
		{"before the first chunk", job.Ordinal(1, 0)},
		{"in a chunk no part has", job.Ordinal(4, 2)},
		{"between two documents", job.Ordinal(6, 5)},
		{"after the last", job.Ordinal(10, 0)},
	} {
		dups := []records.Duplicate{dup(2, 0, ""), dup(5, 4, ""), dup(9, 18, "")}
		dups = append(dups, records.Duplicate{Doc: tt.doc})
		slices.SortFunc(dups, func(a, b records.Duplicate) int { return int(a.Doc>>1 - b.Doc>>1) })
		st := write(t, docs, dups)
		for _, parts := range []int{1, 2, 3, 6} {
			_, err := tallyAt(context.Background(), st, asChunks(chunks), nil, nil, MaxHosts, parts)
			if err == nil || !strings.Contains(err.Error(), job.DuplicatesFile) || !strings.Contains(err.Error(), fmt.Sprint(tt.doc)) {
				t.Errorf("%s, %d parts: err %v, want one naming %s and document %d", tt.name, parts, err, job.DuplicatesFile, tt.doc)
			}
		}
	}
}
