package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/neardup/neardup/internal/dataroot"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/internal/storage"
)

// keptFormatHelp is the help of write-kept's --format and of the job's
// --kept-format.
const keptFormatHelp = "what the corpus's files are: auto (each input in its own format), jsonl (.jsonl.gz: a Parquet row as a JSON object of its columns; " +
	"a WARC, WET or text document as {id, url, text}), parquet (.parquet: a JSONL document as a row of its members, the text once; a WARC, WET or text document as id, url, text) " +
	"or warc (WARC and WET records as they are; refused for other inputs)"

// writeKeptSetup registers the flags of `coordinator write-kept` and
// returns its Prepare: it writes the corpus of a finished job without its
// duplicates (package kept).
func writeKeptSetup(fs *flag.FlagSet) Prepare {
	var o kept.Options
	fs.StringVar(&o.Job, "job", "", "the finished job's output directory or URL (its --out; required)")
	fs.StringVar(&o.Dir, "dir", "", "where to write the corpus: an empty directory or URL (required)")
	fs.StringVar(&o.Format, "format", kept.FormatAuto, keptFormatHelp)
	fs.BoolVar(&o.Annotate, "annotate", false, "write every document, with its cluster, cluster size, keep flag and best match, instead of the kept ones only")
	fs.Int64Var(&o.ShardDocs, "shard-docs", 0, "start a new output file every N documents of an input file (0: one output file per input file)")
	fs.BoolVar(&o.Overwrite, "overwrite", false, "replace the corpus in a --dir that holds one write-kept wrote (a --dir of other files is refused)")
	var roots stringList
	fs.Var(&roots, "data-root", "read the inputs the job's manifest names only if they lie under this directory or object-store prefix (repeatable; default: under the INPUTs)")
	fs.BoolVar(&o.Fsync, "fsync", false, "flush each file to disk before renaming it")
	checkStrip := registerStrip(fs, &o.Strip)
	var logs logFlags
	logs.register(fs)
	return func(args []string, out Streams) (Run, error) {
		switch {
		case o.Job == "":
			return nil, errors.New("--job is required")
		case o.Dir == "":
			return nil, errors.New("--dir is required")
		case kept.CheckFormat(o.Format, nil) != nil:
			return nil, fmt.Errorf("--format: %w", kept.CheckFormat(o.Format, nil))
		case o.ShardDocs < 0:
			return nil, fmt.Errorf("--shard-docs must be 0 or more, not %d", o.ShardDocs)
		case checkStrip() != nil:
			return nil, checkStrip()
		case kept.CheckStrip(o.Strip, o.Format) != nil:
			return nil, kept.CheckStrip(o.Strip, o.Format)
		case len(args) == 0 && len(roots) == 0:
			return nil, errors.New("name the job's inputs as you gave them to the coordinator (write-kept --job OUT --dir DIR INPUT...), " +
				"or the directories they lie under (--data-root DIR): write-kept reads only inputs under those, never a path the job's files alone name")
		}
		for _, loc := range []string{o.Job, o.Dir} {
			if _, err := storage.ParseLocation(loc); err != nil {
				return nil, err
			}
		}
		inputs, err := expandPatterns(args)
		if err != nil {
			return nil, err
		}
		for _, r := range []struct {
			what  string
			paths []string
		}{{"INPUT", inputs}, {"--data-root", roots}} {
			if len(r.paths) == 0 {
				continue
			}
			dr, err := dataroot.Resolve(r.paths)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.what, err)
			}
			o.Roots = append(o.Roots, dr)
		}
		o.Inputs = inputs
		log, err := logs.logger(out.Stderr)
		if err != nil {
			return nil, err
		}
		o.Log = log
		return func(ctx context.Context) int {
			sum, err := kept.Write(ctx, o)
			code, status := 0, "complete"
			switch {
			case errors.Is(err, kept.ErrNotEmpty):
				code, status = 3, "not_empty"
			case err != nil:
				code, status = 1, "failed"
			}
			result := struct {
				Status   string `json:"status"`
				ExitCode int    `json:"exit_code"`
				Dir      string `json:"dir"`
				Error    string `json:"error,omitempty"`
				Docs     int64  `json:"docs"`
				Kept     int64  `json:"kept"`
				Dropped  int64  `json:"dropped"`
				Files    int    `json:"files"`
			}{Status: status, ExitCode: code, Dir: o.Dir}
			if err != nil {
				log.Error("write-kept failed", "err", err)
				result.Error = err.Error()
			} else {
				result.Docs, result.Kept, result.Dropped = sum.Docs, sum.Kept, sum.Dropped
				for _, f := range sum.Files {
					result.Files += len(f.Outputs)
				}
				log.Info("corpus written", "dir", o.Dir, "docs", sum.Docs, "kept", sum.Kept, "dropped", sum.Dropped, "files", result.Files)
			}
			data, _ := json.Marshal(result)
			fmt.Fprintf(out.Stdout, "%s\n", data)
			return code
		}, nil
	}
}

// registerStrip registers --strip-paragraphs and --min-kept-chars, which
// set *strip (nil without --strip-paragraphs), and returns the check
// of the two once parsed: --min-kept-chars without --strip-paragraphs is
// refused.
func registerStrip(fs *flag.FlagSet, strip **job.Strip) func() error {
	sf := &stripFlag{strip: strip}
	fs.Var(sf, "strip-paragraphs", "min-count=N[,keep-first=false]: remove the units (lines or paragraphs, --paragraph-unit) that the job's paragraph pass (--paragraphs) found in at least N documents "+
		"from every kept document but the first holding them (keep-first=false: from all); each document is written as its id, url and text (--format jsonl or parquet)")
	fs.IntVar(&sf.minChars, "min-kept-chars", 0, "with --strip-paragraphs, drop a document left with fewer characters, listed with the reason in short/ beside the corpus")
	return func() error {
		switch {
		case sf.minChars < 0:
			return fmt.Errorf("--min-kept-chars must be 0 or more, not %d", sf.minChars)
		case sf.minChars > 0 && *strip == nil:
			return errors.New("--min-kept-chars goes with --strip-paragraphs")
		case *strip != nil:
			(*strip).MinKeptChars = sf.minChars
		}
		return nil
	}
}

// stripFlag is --strip-paragraphs: its value as given ("" for none), and
// the strip it sets.
type stripFlag struct {
	value    string
	strip    **job.Strip
	minChars int
}

func (f *stripFlag) String() string {
	if f == nil {
		return ""
	}
	return f.value
}

func (f *stripFlag) Set(v string) error {
	s, err := job.ParseStrip(v)
	if err != nil {
		return err
	}
	f.value, *f.strip = v, s
	return nil
}

// expandPatterns replaces each glob among the INPUTs of write-kept by the
// paths it matches, as the coordinator does; a pattern that matches
// nothing is an error. Object-store URLs are prefixes, never patterns.
func expandPatterns(args []string) ([]string, error) {
	var paths []string
	for _, a := range args {
		if storage.IsURL(a) || !strings.ContainsAny(a, "*?[") {
			paths = append(paths, a)
			continue
		}
		m, err := filepath.Glob(a)
		if err != nil {
			return nil, fmt.Errorf("INPUT pattern %q: %w", a, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("INPUT pattern %q matches no file", a)
		}
		paths = append(paths, m...)
	}
	return paths, nil
}
