package rates

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// write writes docs/ files of chunks and duplicates.parquet into a new
// directory.
func write(t *testing.T, docs map[int][]records.DocRecord, dups []records.Duplicate) *storage.Dir {
	t.Helper()
	ctx := context.Background()
	d, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for c, rows := range docs {
		if _, err := pqfile.Write(ctx, d, job.DocFile(c), rows, pqfile.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pqfile.Write(ctx, d, job.DuplicatesFile, dups, pqfile.Options{}); err != nil {
		t.Fatal(err)
	}
	return d
}

// asChunks are chunks whose documents Tally reads from their docs/
// files.
func asChunks(chunks []int) []Chunk {
	out := make([]Chunk, len(chunks))
	for i, c := range chunks {
		out[i] = Chunk{Index: c}
	}
	return out
}

func doc(chunk, i int, url, file string, bytes int64) records.DocRecord {
	return records.DocRecord{Doc: job.Ordinal(chunk, i), URL: url, File: file, Bytes: bytes}
}

func dup(chunk, i int, keptJob string) records.Duplicate {
	d := records.Duplicate{Doc: job.Ordinal(chunk, i)}
	if keptJob != "" {
		d.KeptJob = &keptJob
	}
	return d
}

// twoChunks are the documents of two chunks (numbered after two earlier
// jobs'), three input files and documents of two hosts and none.
func twoChunks() map[int][]records.DocRecord {
	return map[int][]records.DocRecord{
		5: {
			doc(5, 0, "https://A.example/1", "a.jsonl", 100),
			doc(5, 1, "https://a.example:8443/2", "a.jsonl", 50),
			doc(5, 2, "", "a.jsonl", 10),
			doc(5, 3, "http://b.example/", "b.jsonl", 7),
		},
		6: {
			doc(6, 0, "http://b.example/x", "b.jsonl", 3),
			doc(6, 1, "not a url", "c.jsonl", 1000),
		},
	}
}

// TestTally counts a job of two chunks (numbered after two earlier jobs'),
// three input files and documents of two hosts and none: every document
// once in Total, its host's and its file's rows, and each duplicate in the
// row of its kept document's job.
func TestTally(t *testing.T) {
	docs := twoChunks()
	dups := []records.Duplicate{dup(5, 1, ""), dup(5, 3, "w46"), dup(6, 0, "w47"), dup(6, 1, "w46")}
	st := write(t, docs, dups)
	against := []job.Against{{Job: "w46", Docs: 40}, {Job: "w47c", Docs: 70, Held: []job.Against{{Job: "w45", Docs: 30}, {Job: "w47", Docs: 40}}}}
	got, err := Tally(context.Background(), st, asChunks([]int{6, 5}), against, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := &manifest.Rates{
		Total: manifest.Rate{Docs: 6, Bytes: 1170, Duplicates: 4, BytesRemoved: 1060},
		Hosts: []manifest.Rate{
			{Name: "b.example", Docs: 2, Bytes: 10, Duplicates: 2, BytesRemoved: 10},
			{Name: manifest.NoHost, Docs: 2, Bytes: 1010, Duplicates: 1, BytesRemoved: 1000},
			{Name: "a.example", Docs: 2, Bytes: 150, Duplicates: 1, BytesRemoved: 50},
		},
		HostCount: 3,
		Files: []manifest.Rate{
			{Name: "a.jsonl", Docs: 3, Bytes: 160, Duplicates: 1, BytesRemoved: 50},
			{Name: "b.jsonl", Docs: 2, Bytes: 10, Duplicates: 2, BytesRemoved: 10},
			{Name: "c.jsonl", Docs: 1, Bytes: 1000, Duplicates: 1, BytesRemoved: 1000},
		},
		Earlier: []manifest.Rate{
			{Name: manifest.ThisJob, Docs: 6, Bytes: 1170, Duplicates: 1, BytesRemoved: 50},
			{Name: "w46", Docs: 40, Duplicates: 2, BytesRemoved: 1007},
			{Name: "w45", Docs: 30},
			{Name: "w47", Docs: 40, Duplicates: 1, BytesRemoved: 3},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Tally =\n%+v\nwant\n%+v", got, want)
	}
}

// TestTallyRepeated counts the bytes in repeated units of TestTally's
// documents, from two files of the paragraph pass (a document's units in
// both): each row sums its documents'; a file naming a document that no
// docs/ file holds, or out of order, fails naming the file; the chunks
// counted in one part or two.
func TestTallyRepeated(t *testing.T) {
	docs := twoChunks()
	dups := []records.Duplicate{dup(5, 1, ""), dup(5, 3, "")}
	db := func(chunk, i int, n int64) job.DocBytes { return job.DocBytes{Doc: job.Ordinal(chunk, i), Bytes: n} }
	tests := []struct {
		name  string
		files [][]job.DocBytes
		want  string // the error, "" for none
	}{
		{"two files", [][]job.DocBytes{{db(5, 0, 30), db(5, 3, 7), db(6, 1, 100)}, {db(5, 0, 20), db(6, 1, 50)}}, ""},
		{"a document of no docs/ file", [][]job.DocBytes{{db(5, 0, 30), db(5, 9, 7)}}, "parts-00000-00000.parquet lists document"},
		{"after the last", [][]job.DocBytes{{db(6, 1, 30)}, {db(7, 0, 1)}}, "parts-00001-00001.parquet lists document"},
		{"out of order", [][]job.DocBytes{{db(5, 3, 30), db(5, 0, 7)}}, "parts-00000-00000.parquet"},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := write(t, docs, dups)
			var files []fileinfo.Info
			for i, rows := range tt.files {
				f, err := pqfile.Write(ctx, st, job.UnitDocsWorkFile(i, i), rows, pqfile.Options{})
				if err != nil {
					t.Fatal(err)
				}
				files = append(files, f)
			}
			for _, parts := range []int{1, 2} { // the chunks in one part, and one each
				got, err := tallyAt(ctx, st, asChunks([]int{5, 6}), nil, files, MaxHosts, parts)
				if tt.want != "" {
					if err == nil || !strings.Contains(err.Error(), tt.want) {
						t.Fatalf("error %v, want one saying %q", err, tt.want)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if !got.Repeated || got.Total.RepeatedBytes != 207 {
					t.Errorf("repeated %v, total %+v: want 207 bytes", got.Repeated, got.Total)
				}
				want := map[string]int64{"a.example": 50, "b.example": 7, manifest.NoHost: 150, "a.jsonl": 50, "b.jsonl": 7, "c.jsonl": 150, manifest.ThisJob: 207}
				for _, r := range slices.Concat(got.Hosts, got.Files, got.Earlier) {
					if r.RepeatedBytes != want[r.Name] {
						t.Errorf("row %s: %d repeated bytes, want %d", r.Name, r.RepeatedBytes, want[r.Name])
					}
				}
			}
		})
	}
	plain, err := Tally(ctx, write(t, docs, dups), asChunks([]int{5, 6}), nil, nil)
	if err != nil || plain.Repeated || plain.Total.RepeatedBytes != 0 {
		t.Errorf("without the paragraph pass: repeated %v, total %+v (%v)", plain.Repeated, plain.Total, err)
	}
}

// TestTallyOtherHosts lists the 20 hosts of most duplicates and sums the
// others in one row, and counts every host.
func TestTallyOtherHosts(t *testing.T) {
	var rows []records.DocRecord
	var dups []records.Duplicate
	for i := range 30 {
		// Host i has i documents, the first i/2 of them duplicates.
		for j := range i {
			n := len(rows)
			rows = append(rows, doc(0, n, fmt.Sprintf("http://h%02d.example/%d", i, j), "f.jsonl", 1))
			if j < i/2 {
				dups = append(dups, dup(0, n, ""))
			}
		}
	}
	got, err := Tally(context.Background(), write(t, map[int][]records.DocRecord{0: rows}, dups), asChunks([]int{0}), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.HostCount != 29 || len(got.Hosts) != manifest.TopHosts+1 {
		t.Fatalf("%d hosts, %d rows; want 29 hosts, %d rows", got.HostCount, len(got.Hosts), manifest.TopHosts+1)
	}
	if first := got.Hosts[0]; first.Name != "h29.example" || first.Duplicates != 14 {
		t.Errorf("first host %+v, want h29.example with 14 duplicates", first)
	}
	var sum manifest.Rate
	for _, h := range got.Hosts {
		sum.Docs += h.Docs
		sum.Duplicates += h.Duplicates
	}
	other := got.Hosts[manifest.TopHosts]
	// Hosts 1 to 9 (h01 to h09): 45 documents, 0+1+1+2+2+3+3+4+4 = 20 duplicates.
	if other.Name != manifest.OtherHosts || other.Docs != 45 || other.Duplicates != 20 || sum.Docs != got.Total.Docs || sum.Duplicates != got.Total.Duplicates {
		t.Errorf("other hosts %+v, sums %+v, total %+v", other, sum, got.Total)
	}
}

// TestTallyUnknownDuplicate fails, naming duplicates.parquet and the
// document, when a duplicate is of no document the docs/ files hold.
func TestTallyUnknownDuplicate(t *testing.T) {
	docs := map[int][]records.DocRecord{0: {doc(0, 0, "", "f", 1), doc(0, 2, "", "f", 1)}}
	for _, tt := range []struct {
		name string
		dups []records.Duplicate
		doc  int64
	}{
		{"between documents", []records.Duplicate{dup(0, 1, "")}, job.Ordinal(0, 1)},
		{"after the last", []records.Duplicate{dup(0, 2, ""), dup(1, 0, "")}, job.Ordinal(1, 0)},
	} {
		_, err := Tally(context.Background(), write(t, docs, tt.dups), asChunks([]int{0}), nil, nil)
		if err == nil || !strings.Contains(err.Error(), job.DuplicatesFile) || !strings.Contains(err.Error(), fmt.Sprint(tt.doc)) {
			t.Errorf("%s: err %v, want one naming %s and document %d", tt.name, err, job.DuplicatesFile, tt.doc)
		}
	}
}

// TestHost reads hosts from URLs.
func TestHost(t *testing.T) {
	for in, want := range map[string]string{
		"":                              manifest.NoHost,
		"https://Example.COM:443/a?b=c": "example.com",
		"http://[::1]:80/":              "::1",
		"urn:uuid:1234":                 manifest.NoHost,
		"http://%zz":                    manifest.NoHost,
		"https://user:pw@host.example/": "host.example",
	} {
		if got := Host(in); got != want {
			t.Errorf("Host(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTallyBoundedHosts tallies 3 hosts of many duplicates among 20,000
// hosts of one document each, holding 16 hosts at most: the 3 are listed
// first, each row within HostsBound of its exact tally (a tally holding
// every host) and never above it, the rows sum to Total, the estimated
// host count is within 5% of 20,003 (k minimum values over 16,384 hashes:
// a standard error of 0.8%, so 5% is six of them), and a tally with
// room for every host is exact, as Tally's.
func TestTallyBoundedHosts(t *testing.T) {
	var rows []records.DocRecord
	var dups []records.Duplicate
	heavy := []string{"big.example", "bigger.example", "biggest.example"}
	for i := range 20000 {
		n := len(rows)
		rows = append(rows, doc(0, n, fmt.Sprintf("http://one%05d.example/", i), "f.jsonl", 1))
		if i%3 == 0 {
			dups = append(dups, dup(0, n, ""))
		}
		if i%50 == 0 {
			for k, h := range heavy {
				for range k + 1 {
					n := len(rows)
					rows = append(rows, doc(0, n, "http://"+h+"/", "f.jsonl", 2))
					dups = append(dups, dup(0, n, ""))
				}
			}
		}
	}
	st := write(t, map[int][]records.DocRecord{0: rows}, dups)
	ctx := context.Background()
	exact, err := tallyAt(ctx, st, asChunks([]int{0}), nil, nil, 1<<20, Parts)
	if err != nil {
		t.Fatal(err)
	}
	if exact.HostsBound != 0 || exact.HostCountEstimated || exact.HostCount != 20003 {
		t.Fatalf("with room for every host: bound %d, estimated %v, %d hosts; want 0, false, 20003", exact.HostsBound, exact.HostCountEstimated, exact.HostCount)
	}
	got, err := tallyAt(ctx, st, asChunks([]int{0}), nil, nil, 16, Parts)
	if err != nil {
		t.Fatal(err)
	}
	if !got.HostCountEstimated || got.HostCount < 19003 || got.HostCount > 21003 {
		t.Errorf("estimated %v, %d hosts; want an estimate within 5%% of 20003", got.HostCountEstimated, got.HostCount)
	}
	if got.HostsBound == 0 {
		t.Errorf("bound 0 with 16 places for 20003 hosts")
	}
	truth := map[string]manifest.Rate{}
	for _, h := range exact.Hosts {
		truth[h.Name] = h
	}
	var sum manifest.Rate
	for i, h := range got.Hosts {
		sum.Docs += h.Docs
		sum.Bytes += h.Bytes
		sum.Duplicates += h.Duplicates
		sum.BytesRemoved += h.BytesRemoved
		if h.Name == manifest.OtherHosts {
			continue
		}
		if i < len(heavy) && h.Name != heavy[len(heavy)-1-i] {
			t.Errorf("row %d is %s, want %s", i, h.Name, heavy[len(heavy)-1-i])
		}
		w, ok := truth[h.Name]
		if !ok {
			// a host of one document: not among the exact tally's 20, so
			// its truth is one document, a duplicate or not
			w = manifest.Rate{Docs: 1, Duplicates: h.Duplicates}
		}
		if h.Duplicates > w.Duplicates || h.Duplicates < w.Duplicates-got.HostsBound || h.Docs > w.Docs {
			t.Errorf("host %s: %+v, exact %+v, bound %d", h.Name, h, w, got.HostsBound)
		}
	}
	if sum != got.Total || got.Total != exact.Total {
		t.Errorf("rows sum to %+v; total %+v, exact total %+v", sum, got.Total, exact.Total)
	}
}

// FuzzPlainHost checks that plainHost, where it reads a URL, reads the
// host net/url reads; its seeds are plain URLs and ones it must leave to
// net/url.
func FuzzPlainHost(f *testing.F) {
	for _, s := range []string{
		"https://Example.COM:443/a?b=c", "http://a.example/x#y", "http://a.example?q", "http://a.example#f",
		"http://a.example", "http://a.example:/", "http://a.example:80:90/", "http://:80/", "http:///x",
		"http://a.example/%zz", "http://a.example/\x01", "http://user@a.example/", "http://[::1]:80/",
		"HTTP://A.EXAMPLE/", "h2+x-y.z://a_b~c.example/", "1http://a.example/", "http//a.example/",
		"http://a.example/ä", "http://ä.example/", "http://a example/", "http://a.example/ b", "mailto:x@a.example",
		"http://a.example:8x/", "http://a%41.example/", "http://a.example/?%", "http://a.example/#%zz",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if h, ok := plainHost(raw); ok && h != parsedHost(raw) {
			t.Errorf("plainHost(%q) = %q, net/url reads %q", raw, h, parsedHost(raw))
		}
	})
}

// TestPlainHost reads the plain URLs of a crawl without net/url.
func TestPlainHost(t *testing.T) {
	for in, want := range map[string]string{
		"https://Example.COM:443/a?b=c":  "example.com",
		"http://a.example/x#y":           "a.example",
		"http://a.example?q":             "a.example",
		"http://a.example":               "a.example",
		"https://www.a-b_c~d.example/p/": "www.a-b_c~d.example",
	} {
		if got, ok := plainHost(in); !ok || got != want {
			t.Errorf("plainHost(%q) = %q, %v; want %q, true", in, got, ok, want)
		}
	}
}

// TestHostIndexCollisions checks that hosts whose names hash alike (forced
// here) are told apart by name, whichever of them is removed first.
func TestHostIndexCollisions(t *testing.T) {
	const h = 42
	for _, tc := range []struct {
		name string
		del  []string // removed in this order
	}{
		{"none removed", nil},
		{"the first removed", []string{"a.example"}},
		{"a collided one removed", []string{"b.example"}},
		{"all removed", []string{"b.example", "a.example", "c.example"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := hostIndex{byHash: map[uint64]*hostEntry{}}
			entries := map[string]*hostEntry{}
			for _, name := range []string{"a.example", "b.example", "c.example"} {
				e := &hostEntry{Rate: manifest.Rate{Name: name}, hash: h}
				x.put(e)
				entries[name] = e
			}
			gone := map[string]bool{}
			for _, name := range tc.del {
				x.del(entries[name])
				gone[name] = true
			}
			for name, want := range entries {
				got, ok := x.get(name, h)
				switch {
				case gone[name] && ok:
					t.Errorf("%s removed, still found", name)
				case !gone[name] && got != want:
					t.Errorf("%s: got %v, want its entry", name, got)
				}
			}
			if n := x.len(); n != len(entries)-len(gone) {
				t.Errorf("len %d, want %d", n, len(entries)-len(gone))
			}
			if _, ok := x.get("d.example", h); ok {
				t.Error("a host never added found")
			}
		})
	}
}

// TestDistinctSketch checks that the sketch of distinct hosts holds
// exactly the smallest distinct hashes met, the largest of them first,
// whatever repeats and order they come in.
func TestDistinctSketch(t *testing.T) {
	for _, n := range []int{0, 1, distinctSketch - 1, distinctSketch, 3 * distinctSketch} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(n), 7))
			tl := newHostTally(MaxHosts)
			var met []uint64
			for range n {
				h := rng.Uint64()
				met = append(met, h)
				tl.distinct(h)
				if rng.IntN(4) == 0 { // a repeat
					tl.distinct(met[rng.IntN(len(met))])
				}
			}
			slices.Sort(met)
			want := slices.Compact(met)[:min(len(met), distinctSketch)]
			got := slices.Sorted(slices.Values(tl.smallest))
			if !slices.Equal(got, want) {
				t.Fatalf("sketch of %d hashes: %d held, want the %d smallest", n, len(got), len(want))
			}
			if len(want) > 0 && tl.smallest[0] != want[len(want)-1] {
				t.Errorf("top %d, want the largest held, %d", tl.smallest[0], want[len(want)-1])
			}
			if len(tl.seen) != len(want) {
				t.Errorf("%d hashes marked seen, want %d", len(tl.seen), len(want))
			}
		})
	}
}

// TestTopHosts checks that the hosts chosen through a heap are the first
// of a sort of all, in its order, many tied but for their (distinct)
// names.
func TestTopHosts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var entries []*hostEntry
	for i, n := range rng.Perm(500) {
		entries = append(entries, &hostEntry{Rate: manifest.Rate{
			Name: fmt.Sprintf("h%03d.example", n), Docs: int64(rng.IntN(4)),
			Duplicates: int64(rng.IntN(5)), BytesRemoved: int64(rng.IntN(3) * 100),
		}, hash: uint64(i)})
	}
	all := slices.Clone(entries)
	slices.SortFunc(all, compareHosts)
	for _, k := range []int{0, 1, 7, 100, 499, 500, 600} {
		got := topHosts(entries, k)
		want := all[:min(k, len(all))]
		if !slices.Equal(got, want) {
			t.Errorf("k %d: %d hosts, not the first %d of the sort", k, len(got), len(want))
		}
	}
}
