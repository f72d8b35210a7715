package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"

	"github.com/neardup/neardup/internal/control"
	"github.com/neardup/neardup/internal/redact"
)

// indexSetup registers the flags of `coordinator index compact` and
// returns its Prepare: it writes the indexes of a series of finished jobs
// as one (control.CompactIndexes).
func indexSetup(fs *flag.FlagSet) Prepare {
	var cfg control.CompactConfig
	fs.StringVar(&cfg.Out, "out", "", "where to write the compacted index: a directory or URL (required)")
	fs.StringVar(&cfg.Job, "job", "", "the compacted index's job name (default: derived from its jobs' names)")
	fs.BoolVar(&cfg.Overwrite, "overwrite", false, "replace an index --out holds")
	var logs logFlags
	logs.register(fs)
	return func(args []string, out Streams) (Run, error) {
		switch {
		case len(args) == 0 || args[0] != "compact":
			return nil, errors.New(`the action is "compact": coordinator index compact --out DIR OUT...`)
		case len(args) < 2:
			return nil, errors.New("name the finished jobs' outputs whose indexes to compact")
		case cfg.Out == "":
			return nil, errors.New("--out is required")
		}
		cfg.Indexes = args[1:]
		log, err := logs.logger(out.Stderr)
		if err != nil {
			return nil, err
		}
		cfg.Log = log
		return func(ctx context.Context) int {
			ix, err := control.CompactIndexes(ctx, cfg)
			result := struct {
				Status    string `json:"status"`
				ExitCode  int    `json:"exit_code"`
				Out       string `json:"out"`
				Error     string `json:"error,omitempty"`
				Job       string `json:"job,omitempty"`
				Docs      int64  `json:"docs"`
				Chunks    int    `json:"chunks"`
				BandFiles int    `json:"band_files"`
				// Units counts the merged unit table's rows (--paragraphs).
				Units int64 `json:"units,omitempty"`
			}{Status: "complete", Out: redact.URL(cfg.Out)}
			if err != nil {
				log.Error("index compact failed", "err", err)
				result.Status, result.ExitCode, result.Error = "failed", 1, err.Error()
			} else {
				result.Job, result.Docs, result.Chunks, result.BandFiles = ix.Job, ix.Docs, len(ix.Chunks), len(ix.BandFiles)
				if ix.Units != nil {
					result.Units = ix.Units.Units
				}
			}
			data, _ := json.Marshal(result)
			fmt.Fprintln(out.Stdout, string(data))
			return result.ExitCode
		}, nil
	}
}
