package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/procstat"
	"github.com/neardup/neardup/internal/query"
	"github.com/neardup/neardup/internal/redact"
	"github.com/neardup/neardup/internal/storage"
)

// querySetup registers the flags of `coordinator query` and returns its
// Prepare: it prints one JSON line per document read, with its matches in
// the indexes (query.Result), and logs the latency and what was read.
func querySetup(fs *flag.FlagSet) Prepare {
	var indexes listFlag
	fs.Var(&indexes, "index", "a finished job's output whose index to query (repeatable)")
	threshold := fs.Float64("threshold", 0, "similarity at or above which an indexed document is reported (0: each index's own --threshold)")
	format := fs.String("format", query.FormatAuto, "input format: auto, jsonl (id and text fields) or text (one document a line, id = line number)")
	batch := fs.Int("batch", 256, "documents queried together: a batch reads each partition it needs once, and its results are printed when it is done (1 for interactive use)")
	var tokenizer job.Tokenizer
	fs.Var(&tokenizer, "tokenizer", "if given (scripts or words-only), refuse an index made with the other tokenizer; without it each index's documents are shingled by its own rule, which the queries follow")
	cacheMB := fs.Int64("cache-mb", 256, "memory for the band files and decoded text frames kept between batches (20 bytes a band record, a frame up to 8 MiB; 0: none, each batch reads the columns it needs)")
	serve := fs.Bool("serve", false, `serve requests on standard input until it ends, instead of reading a FILE: a first line {"ready":true,"indexes":[...]}, then for each line {"docs":[{"id":...,"text":...},...]} one line {"results":[...]} (or {"error":...}), its documents queried as one batch (--format and --batch do not apply)`)
	var logs logFlags
	logs.register(fs)
	return func(args []string, out Streams) (Run, error) {
		if len(indexes) == 0 {
			return nil, errors.New("--index is required")
		}
		switch {
		case *serve && len(args) != 0:
			return nil, fmt.Errorf("--serve reads its requests from standard input: no FILE, not %d arguments", len(args))
		case !*serve && len(args) != 1:
			return nil, fmt.Errorf("want one FILE (or - for standard input), not %d arguments", len(args))
		}
		if !(*threshold >= 0 && *threshold <= 1) {
			return nil, fmt.Errorf("--threshold must be in (0, 1] (or 0: each index's own), not %g", *threshold)
		}
		switch *format {
		case query.FormatAuto, query.FormatJSONL, query.FormatText:
		default:
			return nil, fmt.Errorf("--format must be auto, jsonl or text, not %q", *format)
		}
		if *batch < 1 {
			return nil, fmt.Errorf("--batch %d: must be at least 1", *batch)
		}
		if *cacheMB < 0 {
			return nil, fmt.Errorf("--cache-mb %d: must be at least 0", *cacheMB)
		}
		for _, loc := range indexes {
			if _, err := storage.ParseLocation(loc); err != nil {
				return nil, fmt.Errorf("--index %s: %w", redact.URL(loc), err)
			}
		}
		log, err := logs.logger(out.Stderr)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) int {
			fail := func(err error) int {
				fmt.Fprintln(out.Stderr, "coordinator query:", oneLine(err))
				return 1
			}
			start := time.Now()
			s, err := query.Open(ctx, indexes, query.Options{Threshold: *threshold, CacheBytes: *cacheMB << 20, Tokenizer: tokenizer})
			if err != nil {
				return fail(err)
			}
			defer s.Close()
			for _, ix := range s.Indexes() {
				if tokenizer == "" && ix.Params.Tokenizer != job.TokenizeScripts {
					log.Warn("an index was made with an earlier tokenizer: queries are cut into tokens by its rule, so near copies in scripts written without spaces are mostly missed; rebuild it for the default rule",
						"index", ix.Job, "tokenizer", ix.Params.Tokenizer)
				}
			}
			var (
				total query.Stats
				lat   []time.Duration // per document: its batch's time over its size
			)
			observe := func(n int, st query.Stats, took time.Duration) {
				for range n {
					lat = append(lat, took/time.Duration(n))
				}
				total.Add(st)
			}
			if *serve {
				err = query.Serve(ctx, s, os.Stdin, out.Stdout, observe)
			} else {
				err = queryFile(ctx, s, args[0], *format, *batch, out.Stdout, observe)
			}
			if err != nil {
				return fail(err)
			}
			mean, p50, p99 := latencies(lat)
			log.Info("query done", "docs", total.Docs, "empty", total.Empty, "matches", total.Matches,
				"candidates", total.Candidates, "partitions", total.Partitions, "band_files", total.BandFiles, "cached", total.Cached,
				"band_mib", float64(total.BandBytes)/(1<<20), "seconds", time.Since(start).Seconds(),
				"ms_per_doc_mean", ms(mean), "ms_per_doc_p50", ms(p50), "ms_per_doc_p99", ms(p99),
				"peak_rss_mib", procstat.PeakRSSMiB())
			return 0
		}, nil
	}
}

// queryFile prints the results of the documents of path (query.Stdin:
// standard input) on w, one JSON line each, a batch's as soon as they are
// known, and passes observe what each batch read and took.
func queryFile(ctx context.Context, s *query.Searcher, path, format string, batch int, w io.Writer, observe func(int, query.Stats, time.Duration)) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return query.ReadDocs(ctx, path, os.Stdin, format, batch, func(docs []query.Doc) error {
		t0 := time.Now()
		res, st, err := s.Query(ctx, docs)
		if err != nil {
			return err
		}
		observe(len(docs), st, time.Since(t0))
		for _, r := range res {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return bw.Flush()
	})
}

// latencies returns the mean, median and 99th percentile of d.
func latencies(d []time.Duration) (mean, p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0, 0
	}
	var sum time.Duration
	for _, v := range d {
		sum += v
	}
	s := slices.Sorted(slices.Values(d))
	return sum / time.Duration(len(d)), s[len(s)/2], s[min(len(s)-1, len(s)*99/100)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
