// Command gencorpus writes a deterministic synthetic corpus with planted
// near-duplicates, plus its ground truth, for tests and benchmarks.
//
//	go run ./cmd/gencorpus -n 100000 -seed 1 -format jsonl -out /tmp/corpus
//
// -profile templated writes long pages of template families instead (see
// corpus.TemplatedConfig), for measuring low thresholds:
//
//	go run ./cmd/gencorpus -profile templated -n 20000 -seed 1 -gzip -out /tmp/templated
//
// -profile sites writes pages of web sites instead (corpus.Sites: each
// site's header, menu and footer lines around each page's body, and
// paragraphs mirrored across sites), for the paragraph pass:
//
//	go run ./cmd/gencorpus -profile sites -n 100000 -seed 1 -out /tmp/sites
//
// The same flags always produce byte-identical files. See package
// github.com/neardup/neardup/internal/corpus for how documents are built.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/neardup/neardup/internal/corpus"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gencorpus:", err)
		os.Exit(1)
	}
}

func run() error {
	def := corpus.DefaultConfig(0, 1)
	var (
		n       = flag.Int("n", 10000, "number of documents")
		seed    = flag.Uint64("seed", def.Seed, "random seed")
		format  = flag.String("format", "jsonl", "output format: jsonl, wet, warc or parquet")
		out     = flag.String("out", "", "output directory (required)")
		files   = flag.Int("files", 0, "number of data files (0: one per 10,000 documents)")
		gz      = flag.Bool("gzip", false, "gzip the data files (WARC/WET: one gzip member per record)")
		name    = flag.String("name", "", "data file stem (default part-0000...; with one file, NAME.EXT)")
		truth   = flag.String("truth", "_truth.jsonl", "ground-truth file name inside -out (ending in .gz: gzipped; empty: none); a leading _ keeps it out of neardup's directory inputs")
		prose   = flag.String("prose", "", "directory of .txt prose files (default: the prose built into gencorpus, the same as internal/corpus/prose)")
		dup     = flag.Float64("dup", def.DupFraction, "fraction of documents in planted near-duplicate families")
		exact   = flag.Float64("exact", def.ExactFraction, "fraction of documents that are exact copies")
		short   = flag.Float64("short", def.ShortFraction, "fraction of short (5-30 word) documents")
		empty   = flag.Float64("empty", def.EmptyFraction, "fraction of empty or punctuation-only documents")
		maxClus = flag.Int("max-cluster", def.MaxCluster, "largest planted family, counting its base")
		editMin = flag.Float64("edit-min", def.EditRateMin, "lowest per-mutation word edit rate")
		editMax = flag.Float64("edit-max", def.EditRateMax, "highest per-mutation word edit rate")
		accCfg  = flag.Bool("accuracy", false, "start from corpus.AccuracyConfig (length mix, short families, graded copies, a template family) instead of DefaultConfig; the flags above override it only when given")
		profile = flag.String("profile", "default", "starting configuration: default (corpus.DefaultConfig), accuracy (corpus.AccuracyConfig, as -accuracy) templated (corpus.TemplatedConfig: long pages of template families of 150 pages) or sites (corpus.Sites: pages of sites with their header, menu and footer lines, for --paragraphs; only -n, -seed, the -site-* flags and the output flags apply); the other flags override it only when given")
		pages   = flag.Int("template-pages", 0, "pages of the template family (with -accuracy, default min(1000, n/10))")
		tfams   = flag.Int("template-families", 0, "template families the template pages are split into, each with its own template (0: one)")
		copyEv  = flag.Int("site-copy-every", 0, "with -profile sites, make a page of every N a copy of the page before it on another site: same body, another template (corpus.SitesConfig.CopyEvery; 0: none)")
		thinEv  = flag.Int("site-thin-every", 0, "with -profile sites, make the pages of every N-th row thin: their site's template and 3 words (corpus.SitesConfig.ThinEvery; 0: none)")
		paired  = flag.Bool("site-paired-lines", false, "with -profile sites, make each line of a page's body two sentences of the pool: lines of its own at any size, where one sentence a line repeats in dozens of pages of 100,000 (corpus.SitesConfig.PairedLines)")
		workers = flag.Int("workers", 0, "files written at once (0: GOMAXPROCS); never changes the output")
		quiet   = flag.Bool("q", false, "do not print a summary")
	)
	flag.Parse()
	if *out == "" {
		flag.Usage()
		return fmt.Errorf("-out is required")
	}
	f, err := corpus.ParseFormat(*format)
	if err != nil {
		return err
	}

	start := time.Now()
	pool, err := corpus.PoolFrom(*prose)
	if err != nil {
		return err
	}
	if *accCfg {
		*profile = "accuracy"
	}
	var src corpus.Source
	var cfg corpus.Config
	switch *profile {
	case "sites":
		sc := corpus.DefaultSitesConfig(*n, *seed)
		sc.CopyEvery, sc.ThinEvery, sc.PairedLines = *copyEv, *thinEv, *paired
		if sc.ThinEvery > 0 {
			sc.ThinWords = 3
		}
		if src, err = corpus.NewSites(pool, sc); err != nil {
			return err
		}
	case "default":
		cfg = corpus.DefaultConfig(*n, *seed)
	case "accuracy":
		cfg = corpus.AccuracyConfig(*n, *seed)
	case "templated":
		cfg = corpus.TemplatedConfig(*n, *seed)
	default:
		return fmt.Errorf("-profile %q: want default, accuracy, templated or sites", *profile)
	}
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "dup":
			cfg.DupFraction = *dup
		case "exact":
			cfg.ExactFraction = *exact
		case "short":
			cfg.ShortFraction = *short
		case "empty":
			cfg.EmptyFraction = *empty
		case "max-cluster":
			cfg.MaxCluster = *maxClus
		case "edit-min":
			cfg.EditRateMin = *editMin
		case "edit-max":
			cfg.EditRateMax = *editMax
		case "template-pages":
			cfg.TemplatePages = *pages
		case "template-families":
			cfg.TemplateFamilies = *tfams
		}
	})
	clusters := 0
	if src == nil {
		g, err := corpus.New(pool, cfg)
		if err != nil {
			return err
		}
		src, clusters = g, g.Clusters()
	}
	written, err := corpus.Write(src, corpus.WriteOptions{
		Dir: *out, Format: f, Files: *files, Gzip: *gz, Name: *name, Truth: *truth, Workers: *workers,
	})
	if err != nil {
		return err
	}
	if !*quiet {
		fmt.Fprintf(os.Stderr, "gencorpus: %d documents (%d planted families, pool of %d sentences) in %d file(s) under %s in %v\n",
			src.Len(), clusters, pool.Len(), len(written.Files), *out, time.Since(start).Round(time.Millisecond))
	}
	return nil
}
