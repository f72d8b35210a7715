package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"

	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/internal/storage"
)

// writeKeptSetup registers the flags of `coordinator write-kept` and
// returns its Prepare: it writes the corpus of a finished job without its
// duplicates (package kept).
func writeKeptSetup(fs *flag.FlagSet) Prepare {
	var o kept.Options
	fs.StringVar(&o.Job, "job", "", "the finished job's output directory or URL (its --out; required)")
	fs.StringVar(&o.Dir, "dir", "", "where to write the corpus: an empty directory or URL (required)")
	fs.StringVar(&o.Format, "format", kept.FormatAuto, "how JSONL and Parquet inputs are written: auto (each in its own format), jsonl (all as .jsonl.gz: a Parquet row as a JSON object of its columns) or parquet (all as .parquet: a JSONL document as columns id, url, text and json, its line unchanged)")
	fs.BoolVar(&o.Annotate, "annotate", false, "write every document, with its cluster, cluster size, keep flag and best match, instead of the kept ones only")
	fs.Int64Var(&o.ShardDocs, "shard-docs", 0, "start a new output file every N documents of an input file (0: one output file per input file)")
	fs.BoolVar(&o.Overwrite, "overwrite", false, "empty a --dir that holds files first")
	fs.BoolVar(&o.Fsync, "fsync", false, "flush each file to disk before renaming it")
	var logs logFlags
	logs.register(fs)
	return func(args []string, out Streams) (Run, error) {
		switch {
		case len(args) > 0:
			return nil, fmt.Errorf("no arguments, not %q", args)
		case o.Job == "":
			return nil, errors.New("--job is required")
		case o.Dir == "":
			return nil, errors.New("--dir is required")
		case o.Format != kept.FormatAuto && o.Format != kept.FormatJSONL && o.Format != kept.FormatParquet:
			return nil, fmt.Errorf("--format must be auto, jsonl or parquet, not %q", o.Format)
		case o.ShardDocs < 0:
			return nil, fmt.Errorf("--shard-docs must be 0 or more, not %d", o.ShardDocs)
		}
		for _, loc := range []string{o.Job, o.Dir} {
			if _, err := storage.ParseLocation(loc); err != nil {
				return nil, err
			}
		}
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
