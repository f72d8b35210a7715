// Package rates computes where a finished job's duplicates are, for its
// manifest and report: how many documents and text bytes it drops by the
// host of their URL, by input file, and by the job of the document kept
// in their place (the job itself, or an earlier one of --against or a
// series). It reads each chunk's facts file, which the chunk's map task
// wrote (FactsWriter; the chunk's docs/ file for a chunk without one, or
// whose facts file is missing or damaged), one chunk at a time joined
// with duplicates.parquet, both in document order, and holds the tallies
// only, never the documents: its memory grows with the distinct hosts and
// input files (about 100 bytes each), not with the documents.
package rates

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"

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

// Chunk is one of a job's own chunks as Tally counts it: its index, and
// the facts file its map task wrote (see FactsWriter); with Facts nil,
// Tally reads the chunk's docs/ file instead.
type Chunk struct {
	Index int
	Facts *fileinfo.Info
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
//
// The chunks are counted in Parts parts of consecutive chunks, up to
// GOMAXPROCS at once, each part reading its chunks' docs/ files and its
// own rows of duplicates.parquet; the parts' tallies are merged in chunk
// order. The rates are those of one pass over every chunk in order
// whenever the job's hosts fit MaxHosts; past it, the merged host tallies
// keep the same bounds (hostTally.merge), and the hosts they list depend
// on the job's chunks alone, not on the coordinator's cores: the parts
// are always the same.
func Tally(ctx context.Context, st storage.Opener, chunks []Chunk, against []job.Against, repeated []fileinfo.Info) (*manifest.Rates, error) {
	return tallyAt(ctx, st, chunks, against, repeated, MaxHosts, Parts)
}

// Parts is how many parts Tally counts a job's chunks in (fewer when it
// has fewer chunks): a fixed number, so that a job's rates do not depend
// on the machine that counts them. Each part holds up to MaxHosts hosts'
// tallies until merged.
const Parts = 8

// tallyAt is Tally holding at most maxHosts hosts' tallies, in parts
// parts, GOMAXPROCS at once.
func tallyAt(ctx context.Context, st storage.Opener, chunks []Chunk, against []job.Against, repeated []fileinfo.Info, maxHosts, parts int) (*manifest.Rates, error) {
	sorted := slices.SortedFunc(slices.Values(chunks), func(a, b Chunk) int { return cmp.Compare(a.Index, b.Index) })
	groups := split(sorted, parts)
	partCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	tallies := make([]*tally, len(groups))
	errs := make([]error, len(groups))
	done := make([]chan struct{}, len(groups))
	for i := range done {
		done[i] = make(chan struct{})
	}
	// The parts start in chunk order, GOMAXPROCS at once, so that the
	// merge below, in that order, takes each as soon as the parts before
	// it are merged, while the later ones are counted: its work is not
	// left to the end, on one core.
	var wg sync.WaitGroup
	wg.Go(func() {
		running := make(chan struct{}, runtime.GOMAXPROCS(0))
		for i := range groups {
			select {
			case running <- struct{}{}:
			case <-partCtx.Done():
				// This part and the later ones are not counted.
				for j := i; j < len(groups); j++ {
					errs[j] = partCtx.Err()
					close(done[j])
				}
				return
			}
			wg.Go(func() {
				defer func() { <-running }()
				defer close(done[i])
				tallies[i], errs[i] = countPart(partCtx, st, groups, i, repeated, maxHosts)
				if errs[i] != nil {
					cancel()
				}
			})
		}
	})
	var t *tally
	for i := range groups {
		<-done[i]
		if errs[i] != nil {
			break
		}
		if t == nil {
			t = tallies[i]
		} else {
			t.merge(tallies[i])
		}
		tallies[i] = nil
	}
	wg.Wait()
	// The first part's error in chunk order, not the others' cancellation.
	for _, err := range errs {
		if err != nil && (ctx.Err() != nil || !errors.Is(err, context.Canceled)) {
			return nil, fmt.Errorf("rates: %w", err)
		}
	}
	if t == nil {
		t = newTally(maxHosts)
	}
	out := t.rates(against)
	out.Repeated = repeated != nil
	return out, nil
}

// countPart counts the part i of groups: from its first chunk's documents
// to the next part's (the first and last parts without a bound). A
// chunk's facts file missing or damaged (found as it is read, perhaps
// after rows of it were counted) is only a shortcut lost: the part is
// counted again with that chunk's docs/ file, which says the same.
func countPart(ctx context.Context, st storage.Opener, groups [][]Chunk, i int, repeated []fileinfo.Info, maxHosts int) (*tally, error) {
	g := groups[i]
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if i > 0 {
		lo = job.Ordinal(g[0].Index, 0)
	}
	if i+1 < len(groups) {
		hi = job.Ordinal(groups[i+1][0].Index, 0)
	}
	for {
		t, err := tallyPart(ctx, st, g, repeated, lo, hi, maxHosts)
		var lost *factsLost
		if err == nil || !errors.As(err, &lost) {
			return t, err
		}
		g[lost.at].Facts = nil
	}
}

// split cuts chunks into at most n runs of consecutive chunks of nearly
// equal length.
func split(chunks []Chunk, n int) [][]Chunk {
	n = max(1, min(n, len(chunks)))
	var out [][]Chunk
	for i := range n {
		if g := chunks[i*len(chunks)/n : (i+1)*len(chunks)/n]; len(g) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// tallyPart counts the documents of chunks, in order, with the duplicates
// of duplicates.parquet and the rows of the repeated files from lo up to
// hi (the part's share of document ordinals): each must be of a document
// of chunks.
func tallyPart(ctx context.Context, st storage.Opener, chunks []Chunk, repeated []fileinfo.Info, lo, hi int64, maxHosts int) (*tally, error) {
	dups, err := pqfile.Open[dupRow](ctx, st, job.DuplicatesFile, nil)
	if err != nil {
		return nil, err
	}
	defer dups.Close()
	if lo != math.MinInt64 {
		if err := dups.SeekSorted("doc", lo); err != nil {
			return nil, err
		}
	}
	next := &dupCursor{r: dups, buf: make([]dupRow, 4096), lo: lo}
	var rep *repeatedCursor
	if repeated != nil {
		if rep, err = openRepeated(ctx, st, repeated, lo); err != nil {
			return nil, err
		}
		defer rep.Close()
	}
	t := newTally(maxHosts)
	add := func(doc int64, host, file string, bytes int64) error {
		dup, err := next.match(doc)
		if err != nil {
			return err
		}
		var r int64
		if rep != nil {
			if r, err = rep.match(doc); err != nil {
				return err
			}
		}
		t.add(host, file, bytes, dup, r)
		return nil
	}
	for at, c := range chunks {
		if c.Facts != nil {
			err := readFacts(ctx, st, *c.Facts, func(slot int64, host, file string, bytes int64) error {
				return add(job.Ordinal(c.Index, int(slot)), host, file, bytes)
			})
			if errors.Is(err, ErrCorruptFacts) || errors.Is(err, fs.ErrNotExist) {
				return nil, &factsLost{at: at, err: err}
			}
			if err != nil {
				return nil, err
			}
			continue
		}
		err := pqfile.Stream(ctx, st, job.DocFile(c.Index), nil, 4096, func(rows []docRow) error {
			for _, d := range rows {
				if err := add(d.Doc, Host(d.URL), d.File, d.Bytes); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	// Every duplicate of the part must have been met as a document.
	if d, ok, err := next.peek(); err != nil {
		return nil, err
	} else if ok && d.Doc < hi {
		return nil, fmt.Errorf("%s lists document %d, which no docs/ file of the job holds", job.DuplicatesFile, d.Doc)
	}
	if rep != nil {
		if name, doc, ok := rep.rest(); ok && doc < hi {
			return nil, fmt.Errorf("%s lists document %d, which no docs/ file of the job holds", name, doc)
		}
	}
	return t, nil
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

// add counts a document of host and file with bytes of text, a
// duplicate when dup is not nil, holding repeated bytes of text in
// repeated units.
func (t *tally) add(host, file string, bytes int64, dup *dupRow, repeated int64) {
	t.hosts.add(host, bytes, repeated, dup != nil)
	f, made := row(t.files, file)
	if made {
		t.order = append(t.order, file)
	}
	for _, r := range []*manifest.Rate{&t.total, f} {
		r.Docs++
		r.Bytes += bytes
		r.RepeatedBytes += repeated
		if dup != nil {
			r.Duplicates++
			r.BytesRemoved += bytes
		}
	}
	if dup != nil {
		name := manifest.ThisJob
		if dup.KeptJob != nil {
			name = *dup.KeptJob
		}
		e, _ := row(t.earlier, name)
		e.Duplicates++
		e.BytesRemoved += bytes
	}
}

// merge adds o's tallies, of the chunks after t's, to t's.
func (t *tally) merge(o *tally) {
	addRate(&t.total, &o.total)
	t.hosts.merge(o.hosts)
	for _, name := range o.order {
		f, made := row(t.files, name)
		if made {
			t.order = append(t.order, name)
		}
		addRate(f, o.files[name])
	}
	for name, r := range o.earlier {
		e, _ := row(t.earlier, name)
		addRate(e, r)
	}
}

// addRate adds r's counts to into's.
func addRate(into *manifest.Rate, r *manifest.Rate) {
	into.Docs += r.Docs
	into.Bytes += r.Bytes
	into.Duplicates += r.Duplicates
	into.BytesRemoved += r.BytesRemoved
	into.RepeatedBytes += r.RepeatedBytes
}

// rates are the tallies as the manifest gives them.
func (t *tally) rates(against []job.Against) *manifest.Rates {
	out := &manifest.Rates{Total: t.total}
	out.HostCount, out.HostCountEstimated = t.hosts.count()
	listedHosts := t.hosts.listed()
	hosts := make([]manifest.Rate, 0, manifest.TopHosts+1)
	listed := t.total
	for _, e := range topHosts(listedHosts, manifest.TopHosts) {
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
	if len(listedHosts) > manifest.TopHosts || t.hosts.evicted {
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
// host (as net/url reads it).
func Host(raw string) string {
	if h, ok := plainHost(raw); ok {
		return h
	}
	return parsedHost(raw)
}

// parsedHost is Host by net/url.
func parsedHost(raw string) string {
	if raw == "" {
		return manifest.NoHost
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return manifest.NoHost
	}
	return strings.ToLower(u.Hostname())
}

// plainHost reads the host of a URL of the plain form most are in
// without net/url (which allocates the URL's parts): a scheme, "//", a
// host of letters, digits and "-._~" with an optional port of digits,
// and the rest of printable ASCII without "%". It is Host's result, and
// ok false, for every other URL: net/url cannot fail on such a URL (it
// has no escapes to decode, no control byte, no user, no IP literal),
// and its host is the authority without the port.
func plainHost(raw string) (host string, ok bool) {
	i := 0
	for i < len(raw) && (isAlpha(raw[i]) || i > 0 && (isDigit(raw[i]) || raw[i] == '+' || raw[i] == '-' || raw[i] == '.')) {
		i++
	}
	if i == 0 || !strings.HasPrefix(raw[i:], "://") {
		return "", false
	}
	i += 3
	start, end, port, upper := i, -1, -1, false
	for ; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c <= ' ' || c >= 0x7f || c == '%':
			return "", false
		case end >= 0:
		case c == '/' || c == '?' || c == '#':
			end = i
		case port >= 0:
			if !isDigit(c) {
				return "", false
			}
		case c == ':':
			port = i
		case 'A' <= c && c <= 'Z':
			upper = true
		case !(isAlpha(c) || isDigit(c) || c == '-' || c == '.' || c == '_' || c == '~'):
			return "", false
		}
	}
	if end < 0 {
		end = len(raw)
	}
	if port >= 0 {
		if port+1 == end { // an empty port: net/url's to read
			return "", false
		}
		end = port
	}
	if end == start {
		return "", false
	}
	if upper {
		return strings.ToLower(raw[start:end]), true
	}
	return raw[start:end], true
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
