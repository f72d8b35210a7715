// Package rates computes where a finished job's duplicates are, for its
// manifest and report: how many documents and text bytes it drops by the
// host of their URL, by input file, and by the job of the document kept
// in their place (the job itself, or an earlier one of --against or a
// series). It reads the job's outputs, docs/ one chunk's file at a time
// joined with duplicates.parquet, both in document order, and holds the
// tallies only, never the documents: its memory grows with the distinct
// hosts and input files (about 100 bytes each), not with the documents.
package rates

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
)

// docRow is what Tally reads of a row of docs/ (records.DocRecord): only
// these columns are decoded.
type docRow struct {
	Doc   int64  `parquet:"doc"`
	URL   string `parquet:"url"`
	File  string `parquet:"file"`
	Bytes int64  `parquet:"bytes"`
}

// dupRow is what Tally reads of a row of duplicates.parquet
// (records.Duplicate).
type dupRow struct {
	Doc     int64   `parquet:"doc"`
	KeptJob *string `parquet:"kept_job,optional"`
}

// Tally computes the rates of the job whose outputs st holds: chunks are
// the job's own chunks (those with a docs/ file), in any order, and
// against the earlier jobs it was matched against, in their order. It
// fails, naming the file, when duplicates.parquet names a document that
// no docs/ file of chunks holds.
//
// repeated, when not nil, are the paragraph pass's files of repeated
// bytes by document (job.UnitDocsWorkFile): every row then also counts
// its documents' bytes of text in repeated units (Rate.RepeatedBytes),
// and Rates.Repeated says so.
func Tally(ctx context.Context, st storage.Opener, chunks []int, against []job.Against, repeated []fileinfo.Info) (*manifest.Rates, error) {
	return tallyAt(ctx, st, chunks, against, repeated, MaxHosts)
}

// tallyAt is Tally holding at most maxHosts hosts' tallies.
func tallyAt(ctx context.Context, st storage.Opener, chunks []int, against []job.Against, repeated []fileinfo.Info, maxHosts int) (*manifest.Rates, error) {
	dups, err := pqfile.Open[dupRow](ctx, st, job.DuplicatesFile, nil)
	if err != nil {
		return nil, fmt.Errorf("rates: %w", err)
	}
	defer dups.Close()
	next := &dupCursor{r: dups, buf: make([]dupRow, 4096)}
	var rep *repeatedCursor
	if repeated != nil {
		if rep, err = openRepeated(ctx, st, repeated); err != nil {
			return nil, fmt.Errorf("rates: %w", err)
		}
		defer rep.Close()
	}
	t := newTally(maxHosts)
	for _, c := range slices.Sorted(slices.Values(chunks)) {
		name := job.DocFile(c)
		err := pqfile.Stream(ctx, st, name, nil, 4096, func(rows []docRow) error {
			for _, d := range rows {
				dup, err := next.match(d.Doc)
				if err != nil {
					return err
				}
				var r int64
				if rep != nil {
					if r, err = rep.match(d.Doc); err != nil {
						return err
					}
				}
				t.add(d, dup, r)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("rates: %w", err)
		}
	}
	// Every duplicate must have been met as a document.
	if d, ok, err := next.peek(); err != nil {
		return nil, fmt.Errorf("rates: %w", err)
	} else if ok {
		return nil, fmt.Errorf("rates: %s lists document %d, which no docs/ file of the job holds", job.DuplicatesFile, d.Doc)
	}
	if rep != nil {
		if name, doc, ok := rep.rest(); ok {
			return nil, fmt.Errorf("rates: %s lists document %d, which no docs/ file of the job holds", name, doc)
		}
	}
	out := t.rates(against)
	out.Repeated = rep != nil
	return out, nil
}

// dupCursor walks duplicates.parquet in document order.
type dupCursor struct {
	r    *pqfile.Reader[dupRow]
	buf  []dupRow
	i, n int
	eof  bool
}

// peek returns the next duplicate without taking it; ok is false at the
// end.
func (c *dupCursor) peek() (dupRow, bool, error) {
	for c.i == c.n && !c.eof {
		n, err := c.r.Read(c.buf)
		c.i, c.n = 0, n
		if errors.Is(err, io.EOF) {
			c.eof = true
		} else if err != nil {
			return dupRow{}, false, err
		}
	}
	if c.i == c.n {
		return dupRow{}, false, nil
	}
	return c.buf[c.i], true, nil
}

// match returns the duplicate of document doc, nil when doc is none;
// documents come in increasing order, and a duplicate passed over (of a
// document that docs/ does not hold) is an error.
func (c *dupCursor) match(doc int64) (*dupRow, error) {
	d, ok, err := c.peek()
	switch {
	case err != nil:
		return nil, err
	case !ok || d.Doc > doc:
		return nil, nil
	case d.Doc < doc:
		return nil, fmt.Errorf("%s lists document %d, which no docs/ file of the job holds (the next document read is %d)", job.DuplicatesFile, d.Doc, doc)
	}
	c.i++
	return &d, nil
}

// tally is the rates being counted.
type tally struct {
	total   manifest.Rate
	hosts   *hostTally
	files   map[string]*manifest.Rate
	order   []string // files in the order first met
	earlier map[string]*manifest.Rate
}

func newTally(maxHosts int) *tally {
	return &tally{hosts: newHostTally(maxHosts), files: map[string]*manifest.Rate{}, earlier: map[string]*manifest.Rate{}}
}

// row returns m's row name, made if new.
func row(m map[string]*manifest.Rate, name string) (*manifest.Rate, bool) {
	r, ok := m[name]
	if !ok {
		r = &manifest.Rate{Name: name}
		m[name] = r
	}
	return r, !ok
}

// add counts document d, a duplicate when dup is not nil, holding
// repeated bytes of text in repeated units.
func (t *tally) add(d docRow, dup *dupRow, repeated int64) {
	t.hosts.add(Host(d.URL), d.Bytes, repeated, dup != nil)
	f, made := row(t.files, d.File)
	if made {
		t.order = append(t.order, d.File)
	}
	for _, r := range []*manifest.Rate{&t.total, f} {
		r.Docs++
		r.Bytes += d.Bytes
		r.RepeatedBytes += repeated
		if dup != nil {
			r.Duplicates++
			r.BytesRemoved += d.Bytes
		}
	}
	if dup != nil {
		name := manifest.ThisJob
		if dup.KeptJob != nil {
			name = *dup.KeptJob
		}
		e, _ := row(t.earlier, name)
		e.Duplicates++
		e.BytesRemoved += d.Bytes
	}
}

// rates are the tallies as the manifest gives them.
func (t *tally) rates(against []job.Against) *manifest.Rates {
	out := &manifest.Rates{Total: t.total}
	out.HostCount, out.HostCountEstimated = t.hosts.count()
	entries := slices.Clone(t.hosts.listed())
	slices.SortFunc(entries, func(a, b *hostEntry) int {
		return cmp.Or(cmp.Compare(b.Duplicates, a.Duplicates), cmp.Compare(b.BytesRemoved, a.BytesRemoved),
			cmp.Compare(b.Docs, a.Docs), strings.Compare(a.Name, b.Name))
	})
	hosts := make([]manifest.Rate, 0, manifest.TopHosts+1)
	listed := t.total
	for _, e := range entries[:min(len(entries), manifest.TopHosts)] {
		hosts = append(hosts, e.Rate)
		out.HostsBound = max(out.HostsBound, e.err)
		listed.Docs -= e.Docs
		listed.Bytes -= e.Bytes
		listed.Duplicates -= e.Duplicates
		listed.BytesRemoved -= e.BytesRemoved
		listed.RepeatedBytes -= e.RepeatedBytes
	}
	// The other hosts' row is the rest of the total: the tallies of the
	// hosts not listed, and those of hosts that gave up their place.
	if len(entries) > manifest.TopHosts || t.hosts.evicted {
		listed.Name = manifest.OtherHosts
		hosts = append(hosts, listed)
	}
	out.Hosts = hosts
	for _, name := range t.order {
		out.Files = append(out.Files, *t.files[name])
	}
	// The job itself, then each earlier job in the against order (a
	// compacted index's jobs in its order), then any other job a kept
	// document was of.
	self, _ := row(t.earlier, manifest.ThisJob)
	self.Docs, self.Bytes, self.RepeatedBytes = t.total.Docs, t.total.Bytes, t.total.RepeatedBytes
	out.Earlier = append(out.Earlier, *self)
	delete(t.earlier, manifest.ThisJob)
	for _, a := range flatten(against) {
		r, ok := t.earlier[a.Job]
		if !ok {
			r = &manifest.Rate{Name: a.Job}
		}
		r.Docs = a.Docs
		out.Earlier = append(out.Earlier, *r)
		delete(t.earlier, a.Job)
	}
	for _, name := range slices.Sorted(maps.Keys(t.earlier)) {
		out.Earlier = append(out.Earlier, *t.earlier[name])
	}
	return out
}

// flatten lists the jobs of against: each one's, or a compacted index's
// held jobs in its place.
func flatten(against []job.Against) []job.Against {
	var out []job.Against
	for _, a := range against {
		if len(a.Held) > 0 {
			out = append(out, a.Held...)
			continue
		}
		out = append(out, a)
	}
	return out
}

// Host is the host of a document's URL, lower case, without a port:
// manifest.NoHost for a document without a URL or with one that names no
// host.
func Host(raw string) string {
	if raw == "" {
		return manifest.NoHost
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return manifest.NoHost
	}
	return strings.ToLower(u.Hostname())
}
