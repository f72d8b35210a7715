package cli

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"

	"golang.org/x/term"

	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/redact"
)

// summary is the one JSON object a coordinator's job writes on stdout when
// it ends, for a scheduler to read; logs and progress go to stderr.
type summary struct {
	// Status is the manifest's (complete or partial) for a job that
	// finished, else failed, already_complete or kept_not_empty (exit 3:
	// the output holds a complete job, or the kept corpus's directory
	// holds other files) or busy (exit 5).
	Status   string `json:"status"`
	ExitCode int    `json:"exit_code"`
	// Out is the output location, as given to --out.
	Out     string           `json:"out"`
	Job     string           `json:"job,omitempty"`
	Seconds float64          `json:"seconds,omitempty"`
	Chunks  int              `json:"chunks,omitempty"`
	Counts  *manifest.Counts `json:"counts,omitempty"`
	// Failed is the number of tasks that failed for good.
	Failed int    `json:"failed_tasks"`
	Error  string `json:"error,omitempty"`
}

// newSummary describes a job that ended with exit status code and either
// its manifest or its error.
func newSummary(out string, code int, man *manifest.Manifest, err error) summary {
	s := summary{ExitCode: code, Out: redact.URL(out)}
	if man != nil {
		s.Status, s.Job, s.Seconds, s.Chunks, s.Failed = man.Status, man.Job, man.Seconds, man.Chunks, len(man.Failures)
		s.Counts = &man.Counts
	}
	if err != nil {
		s.Error = err.Error()
		s.Status = map[int]string{3: "already_complete", 5: "busy"}[code]
		if errors.Is(err, kept.ErrNotEmpty) {
			s.Status = "kept_not_empty"
		}
		if s.Status == "" {
			s.Status = "failed"
		}
	}
	return s
}

// writeSummary writes s on w as one line of JSON.
func writeSummary(w io.Writer, log *slog.Logger, s summary) {
	if err := json.NewEncoder(w).Encode(s); err != nil {
		log.Warn("could not write the summary on stdout", "err", err)
	}
}

// isTerminal tells whether w is a terminal (progress then redraws a line).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
