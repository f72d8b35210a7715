package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/neardup/neardup/internal/control"
	"github.com/neardup/neardup/internal/redact"
	"github.com/neardup/neardup/internal/series"
	"github.com/neardup/neardup/internal/storage"
)

// seriesFlags are a job's --series and --name: the job is a member of a
// series (package series), written to DIR/NAME and matched against the
// finished members before it.
type seriesFlags struct {
	dir, name string
}

func (s *seriesFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.dir, "series", "", "a series' directory or URL: write the job to DIR/NAME (instead of --out) and match it against every finished member whose name sorts before NAME (as --against); --write-kept K writes its corpus to K/NAME")
	fs.StringVar(&s.name, "name", "", "with --series: the member's name, also the job name unless --job (default: today's UTC date, 2006-01-02)")
}

// apply checks the flags and sets the job's output and name, at now.
func (s *seriesFlags) apply(cfg *control.Config, now time.Time) error {
	switch {
	case s.dir == "" && s.name != "":
		return errors.New("--name goes with --series")
	case s.dir == "":
		return nil
	case cfg.Out != "":
		return errors.New("--series and --out: give one (a member's output is DIR/NAME)")
	}
	if s.name == "" {
		s.name = now.UTC().Format(time.DateOnly)
	}
	if err := series.CheckName(s.name); err != nil {
		return fmt.Errorf("--name: %w", err)
	}
	out, err := series.Location(s.dir, s.name)
	if err != nil {
		return fmt.Errorf("--series: %w", err)
	}
	cfg.Out = out
	if cfg.Job == "" {
		cfg.Job = s.name
	}
	if cfg.WriteKept != "" {
		// Each member's corpus in a directory of its own, named as it.
		if cfg.WriteKept, err = series.Location(cfg.WriteKept, s.name); err != nil {
			return fmt.Errorf("--write-kept: %w", err)
		}
	}
	return nil
}

// resolve adds the earlier members to cfg.Against, logging every earlier
// member it skips and why. An unfinished member (rerun without
// --overwrite) resumes against the earlier jobs it started with.
func (s *seriesFlags) resolve(ctx context.Context, cfg *control.Config, log *slog.Logger) error {
	if s.dir == "" {
		return nil
	}
	if !cfg.Overwrite {
		if done, err := s.resume(ctx, cfg, log); err != nil || done {
			return err
		}
	}
	dir, err := storage.Open(ctx, s.dir)
	if err != nil {
		return fmt.Errorf("--series %s: %w", redact.URL(s.dir), err)
	}
	defer dir.Close()
	members, ignored, err := series.Scan(ctx, dir)
	if err != nil {
		return err
	}
	for _, ig := range ignored {
		log.Warn("series entry ignored", "series", s.dir, "entry", ig.Name, "reason", ig.Reason)
	}
	c, err := series.Pick(members, s.name)
	if err != nil {
		return fmt.Errorf("series %s: %w", s.dir, err)
	}
	for _, sk := range c.Skipped {
		log.Warn("series member skipped", "series", s.dir, "member", sk.Member.Name, "state", sk.Member.State, "reason", sk.Reason)
	}
	for _, h := range c.Held {
		log.Info("series member matched through a compacted member", "series", s.dir, "member", h.Member.Name, "reason", h.Reason)
	}
	var later, names []string
	for _, m := range c.Later {
		if m.State.Usable() {
			later = append(later, m.Name)
		}
	}
	if len(later) > 0 {
		log.Warn("series members after this one exist: they are not matched against it, nor it against them", "series", s.dir, "member", s.name, "later", later)
	}
	for _, m := range c.Earlier {
		cfg.Against = append(cfg.Against, m.Out)
		names = append(names, m.Name)
	}
	log.Info("series member", "series", s.dir, "member", s.name, "earlier", len(names), "against", names)
	return nil
}

// resume looks at the member's output: a finished member is left to the
// job, which refuses it (exit 3), and an unfinished one resumes against
// the earlier jobs it started with. done says there is nothing to pick.
func (s *seriesFlags) resume(ctx context.Context, cfg *control.Config, log *slog.Logger) (done bool, err error) {
	if !storage.IsURL(cfg.Out) {
		if _, err := os.Stat(cfg.Out); errors.Is(err, fs.ErrNotExist) {
			return false, nil // a new member: not made here, before its job checks its inputs
		}
	}
	own, err := storage.Open(ctx, cfg.Out)
	if err != nil {
		return false, err
	}
	defer own.Close()
	m, err := series.Read(ctx, own)
	if err != nil {
		return false, fmt.Errorf("%s: %w", cfg.Out, err)
	}
	if m.State == series.Complete || m.State == series.Partial || m.State == series.NoIndex {
		return true, nil
	}
	outs, ok, err := series.Resumed(ctx, own)
	if err != nil || !ok {
		return false, err
	}
	for _, a := range cfg.Against {
		if !slices.Contains(outs, a) && !slices.Contains(outs, storage.AbsLocation(a)) {
			return false, fmt.Errorf("%s holds an unfinished job started without --against %s: rerun it without, or pass --overwrite to start again", cfg.Out, a)
		}
	}
	log.Info("resuming a series member against the earlier jobs it started with", "series", s.dir, "member", s.name, "against", outs)
	cfg.Against = outs
	return true, nil
}

// seriesSetup registers the flags of `coordinator series list` and
// returns its Prepare: it prints the members of a series.
func seriesSetup(fs *flag.FlagSet) Prepare {
	asJSON := fs.Bool("json", false, "one JSON object a member instead of a table")
	return func(args []string, out Streams) (Run, error) {
		switch {
		case len(args) == 0 || args[0] != "list":
			return nil, errors.New(`the action is "list": coordinator series list DIR`)
		case len(args) != 2:
			return nil, errors.New("name one series directory or URL")
		}
		loc := args[1]
		if _, err := storage.ParseLocation(loc); err != nil {
			return nil, err
		}
		return func(ctx context.Context) int {
			if err := listSeries(ctx, loc, *asJSON, out.Stdout, out.Stderr); err != nil {
				fmt.Fprintln(out.Stderr, "coordinator series list:", err)
				return 1
			}
			return 0
		}, nil
	}
}

// listed is a member as `series list` prints it: with what a new member
// named after every one would do with it.
type listed struct {
	series.Member
	Next string `json:"next"`
}

// listSeries prints the members of the series at loc, by name, on w, and
// a warning on warn for each entry of loc that is not a member.
func listSeries(ctx context.Context, loc string, asJSON bool, w, warn io.Writer) error {
	if !storage.IsURL(loc) {
		if _, err := os.Stat(loc); err != nil {
			return err
		}
	}
	dir, err := storage.Open(ctx, loc)
	if err != nil {
		return err
	}
	defer dir.Close()
	members, ignored, err := series.Scan(ctx, dir)
	if err != nil {
		return err
	}
	for _, ig := range ignored {
		fmt.Fprintf(warn, "coordinator series list: warning: %s: %q ignored: %s\n", loc, ig.Name, ig.Reason)
	}
	next := map[string]string{}
	c, pickErr := series.Pick(members, series.AfterEvery)
	if pickErr == nil {
		for _, m := range c.Earlier {
			next[m.Name] = "matched"
		}
		for _, sk := range c.Skipped {
			next[sk.Member.Name] = "skipped: " + sk.Reason
		}
		for _, h := range c.Held {
			next[h.Member.Name] = h.Reason
		}
	}
	var rows []listed
	for _, m := range members {
		rows = append(rows, listed{m, next[m.Name]})
	}
	if asJSON {
		enc := json.NewEncoder(w)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "MEMBER\tSTATE\tJOB\tDOCS\tPAIRS\tPAIRS_AGAINST\tCHUNKS\tNEXT MEMBER")
		for _, r := range rows {
			chunks := "-"
			if len(r.Chunks) > 0 {
				chunks = fmt.Sprintf("%d-%d", r.FirstChunk, r.End-1)
			}
			nxt := r.Next
			if len(r.Holds) > 0 {
				nxt += " (holds " + strings.Join(r.Holds, ", ") + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", r.Name, r.State, r.Job, r.Docs, r.Pairs, r.PairsAgainst, chunks, nxt)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return pickErr
}
