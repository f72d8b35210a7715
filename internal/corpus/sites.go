package corpus

import (
	"fmt"
	"strings"
)

// The kinds of page of a Sites corpus.
const (
	// KindSitePage is a page of its site's template around a body of
	// its own.
	KindSitePage Kind = "site-page"
	// KindSiteCopy is a page whose body is that of the page before it,
	// of another site (SitesConfig.CopyEvery): same body, another
	// template.
	KindSiteCopy Kind = "site-copy"
	// KindSiteThin is a page whose body is a few words of its own
	// (SitesConfig.ThinEvery): its site's template and little else.
	KindSiteThin Kind = "site-thin"
)

// streamSites draws the pages and sites of a Sites corpus.
const streamSites uint64 = 101

// SitesConfig describes a corpus of web sites (-profile sites): every
// page of a site has the site's header, menu and footer lines around a
// body of its own, and some pages carry one of a few paragraphs mirrored
// across sites. The paragraph pass (--paragraphs) finds the site lines
// and the mirrored paragraphs; the bodies' sentences, drawn from the
// pool, repeat by chance too.
type SitesConfig struct {
	N    int
	Seed uint64
	// Sites is the number of sites; page i is of site i mod Sites.
	Sites int
	// Mirrored is the number of paragraphs mirrored across sites, and
	// MirrorEvery says that one page in MirrorEvery carries one.
	Mirrored    int
	MirrorEvery int
	// CopyEvery, when not 0, makes page i a copy (KindSiteCopy) when i
	// mod CopyEvery is 1, i mod Sites is not 0, and neither it nor page
	// i-1 is thin: its body is page i-1's, under its own site's template.
	CopyEvery int
	// ThinEvery, when not 0, makes the pages of every ThinEvery-th row
	// of sites thin (KindSiteThin): page i when (i / Sites) mod
	// ThinEvery is ThinEvery-1. Its body is ThinWords words.
	ThinEvery int
	ThinWords int
	// MenuLines are menu lines of the template beyond its first 3 (a
	// larger template).
	MenuLines int
	// PairedLines makes each line of a body two sentences of the pool,
	// not one: a body's lines are then its own, as on a real site, at
	// any size. With one sentence a line, a pool of some ten thousand
	// sentences puts each in dozens of pages of a corpus of 100,000,
	// where the frequency that tells boilerplate finds them.
	PairedLines bool
}

// DefaultSitesConfig is n pages on n/100 sites (at least 2), 50
// mirrored paragraphs, one in 4 pages carrying one.
func DefaultSitesConfig(n int, seed uint64) SitesConfig {
	return SitesConfig{N: n, Seed: seed, Sites: max(2, n/100), Mirrored: 50, MirrorEvery: 4}
}

// Sites is a generated corpus of site pages (see SitesConfig); its
// documents are pure functions of their position.
type Sites struct {
	pool *Pool
	cfg  SitesConfig
}

// NewSites returns the corpus cfg describes, of sentences from pool.
func NewSites(pool *Pool, cfg SitesConfig) (*Sites, error) {
	if cfg.N < 0 || cfg.Sites < 1 || cfg.Mirrored < 1 || cfg.MirrorEvery < 1 {
		return nil, fmt.Errorf("sites corpus: n %d, sites %d, mirrored %d, mirror-every %d: want n >= 0 and the others >= 1", cfg.N, cfg.Sites, cfg.Mirrored, cfg.MirrorEvery)
	}
	if cfg.CopyEvery < 0 || cfg.ThinEvery < 0 || cfg.MenuLines < 0 || cfg.ThinEvery > 0 && cfg.ThinWords < 1 {
		return nil, fmt.Errorf("sites corpus: copy-every %d, thin-every %d, thin-words %d, menu-lines %d: want them not negative, and thin pages of one word or more", cfg.CopyEvery, cfg.ThinEvery, cfg.ThinWords, cfg.MenuLines)
	}
	if pool.Len() == 0 || len(pool.vocab) == 0 {
		return nil, fmt.Errorf("sites corpus: the pool has no sentences")
	}
	return &Sites{pool: pool, cfg: cfg}, nil
}

// WriteSites writes the corpus cfg describes, of the bundled prose
// (BundledPool), as opts says.
func WriteSites(cfg SitesConfig, opts WriteOptions) (*Sites, Written, error) {
	pool, err := BundledPool()
	if err != nil {
		return nil, Written{}, err
	}
	src, err := NewSites(pool, cfg)
	if err != nil {
		return nil, Written{}, err
	}
	w, err := Write(src, opts)
	return src, w, err
}

// Len returns the number of pages.
func (s *Sites) Len() int { return s.cfg.N }

// Doc returns page i.
func (s *Sites) Doc(i int) Doc { return Doc{ID: ID(i), URL: s.URL(i), Text: s.Text(i)} }

// URL returns the URL of page i, on its site's host.
func (s *Sites) URL(i int) string {
	return fmt.Sprintf("https://site-%s.example/page-%d.html", pad(i%s.cfg.Sites, 5), i)
}

// Truth returns the ground truth of page i: its kind and its site (as
// Cluster).
func (s *Sites) Truth(i int) Truth {
	return Truth{ID: ID(i), URL: s.URL(i), Kind: s.Kind(i), Cluster: fmt.Sprintf("site-%s", pad(i%s.cfg.Sites, 5))}
}

// Kind returns the kind of page i.
func (s *Sites) Kind(i int) Kind {
	switch {
	case s.thin(i):
		return KindSiteThin
	case s.cfg.CopyEvery > 0 && i%s.cfg.CopyEvery == 1 && i%s.cfg.Sites != 0 && !s.thin(i-1):
		return KindSiteCopy
	}
	return KindSitePage
}

// thin tells whether page i is thin (SitesConfig.ThinEvery).
func (s *Sites) thin(i int) bool {
	return s.cfg.ThinEvery > 0 && i/s.cfg.Sites%s.cfg.ThinEvery == s.cfg.ThinEvery-1
}

// Text returns page i: its site's header and menu lines, a blank line,
// its body (paragraphs of one sentence a line), perhaps a mirrored
// paragraph, and its site's footer line.
func (s *Sites) Text(i int) string {
	site := i % s.cfg.Sites
	sr := newRNG(s.cfg.Seed, streamSites, uint64(site)|1<<40)
	v := s.pool.vocab
	name := fmt.Sprintf("%s %s %d", strings.ToUpper(pick(&sr, v)), pick(&sr, v), site)
	var b strings.Builder
	fmt.Fprintf(&b, "%s | Home | About | Contact\n", name)
	for range 3 {
		fmt.Fprintf(&b, "> %s · %s · %s\n", pick(&sr, v), pick(&sr, v), pick(&sr, v))
	}
	footer := fmt.Sprintf("© 2026 %s · %s · privacy · terms\n", name, pick(&sr, v))
	for range s.cfg.MenuLines { // drawn after the footer: the 3 lines' draws as without
		fmt.Fprintf(&b, "> %s · %s · %s\n", pick(&sr, v), pick(&sr, v), pick(&sr, v))
	}
	b.WriteString(s.body(i))
	b.WriteByte('\n')
	b.WriteString(footer)
	return b.String()
}

// body returns page i's body, the text between its menu and its footer
// (the page before's for a copy).
func (s *Sites) body(i int) string {
	switch s.Kind(i) {
	case KindSiteThin:
		r := newRNG(s.cfg.Seed, streamSites, uint64(i)|3<<40)
		words := make([]string, s.cfg.ThinWords)
		for k := range words {
			words[k] = pick(&r, s.pool.vocab)
		}
		return "\n" + strings.Join(words, " ") + "\n"
	case KindSiteCopy:
		i--
	}
	var b strings.Builder
	r := newRNG(s.cfg.Seed, streamSites, uint64(i))
	for range r.between(2, 5) {
		b.WriteByte('\n')
		for range r.between(1, 4) {
			b.WriteString(s.pool.Sentence(r.intn(s.pool.Len())))
			if s.cfg.PairedLines {
				b.WriteByte(' ')
				b.WriteString(s.pool.Sentence(r.intn(s.pool.Len())))
			}
			b.WriteByte('\n')
		}
	}
	if r.intn(s.cfg.MirrorEvery) == 0 {
		m := r.intn(s.cfg.Mirrored)
		mr := newRNG(s.cfg.Seed, streamSites, uint64(m)|2<<40)
		b.WriteByte('\n')
		for range mr.between(2, 3) {
			b.WriteString(s.pool.Sentence(mr.intn(s.pool.Len())))
			b.WriteByte('\n')
		}
	}
	return b.String()
}
