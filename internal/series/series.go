// Package series finds the members of a series of jobs: the outputs of
// jobs, and compacted indexes, kept side by side under one directory or
// object-store prefix, each in a directory named after it (a date, a
// week, any name), and picks the ones a new member is matched against
// (--against): every finished member whose name sorts before the new
// one's, with a compacted index standing for the members it holds.
//
// Layout:
//
//	DIR/2026-W47/            a job's output (_SUCCESS, manifest.json, index/, pairs/, ...)
//	DIR/2026-W47-compact/    an index written by `coordinator index compact` (index/ only)
//	DIR/2026-W48/            the next member
//	DIR/_report/             the series' report (coordinator series report)
//
// Directories whose names start with "_" or "." are not members, nor are
// files and symbolic links (not followed); Scan reports each such entry,
// and CheckName refuses a new member's name starting with "_".
package series

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/redact"
	"github.com/neardup/neardup/internal/storage"
)

// State is what a member's directory holds.
type State string

// The states of a member. Complete, Partial and Compacted members are
// matched against; the others are not.
const (
	// Complete is a finished job (_SUCCESS) with its index.
	Complete State = "complete"
	// Partial is a job finished with --allow-partial (_PARTIAL): its
	// index lacks the chunks of its failed map tasks.
	Partial State = "partial"
	// Compacted is an index written by `coordinator index compact`.
	Compacted State = "compacted"
	// Incomplete is a job not finished: running, interrupted or failed.
	Incomplete State = "incomplete"
	// NoIndex is a finished job without an index (--index=false); one whose
	// index cannot be read is an error of Read, not a state.
	NoIndex State = "no-index"
	// NotJob is a directory that holds neither a job nor an index.
	NotJob State = "not-a-job"
)

// Usable reports whether a member in state s can be matched against.
func (s State) Usable() bool { return s == Complete || s == Partial || s == Compacted }

// Member is one directory of a series.
type Member struct {
	Name  string `json:"name"`
	Out   string `json:"out"`
	State State  `json:"state"`
	// Note says more about the state: the error that made it NoIndex or
	// NotJob, or the manifest's status of an Incomplete job.
	Note string `json:"note,omitempty"`
	// Job is its job name (the index's), Docs its documents.
	Job  string `json:"job,omitempty"`
	Docs int64  `json:"docs"`
	// Chunks are the chunk numbers of its index's documents; FirstChunk
	// and End (one past the last) their range.
	Chunks     []int `json:"-"`
	FirstChunk int   `json:"first_chunk"`
	End        int   `json:"end_chunk"`
	// Pairs and PairsAgainst are its manifest's counts (a job's only).
	Pairs        int64     `json:"pairs"`
	PairsAgainst int64     `json:"pairs_against"`
	Finished     time.Time `json:"finished,omitzero"`
	// Holds names the jobs a compacted index holds, when it records
	// them (index.Index.Compacted).
	Holds []string `json:"holds,omitempty"`
}

// Location is where member name of the series at dir is: dir/name, with
// an object-store URL's query (?endpoint=...&region=...) kept at its end.
func Location(dir, name string) (string, error) {
	l, err := storage.ParseLocation(dir)
	if err != nil {
		return "", fmt.Errorf("series %s: %w", redact.URL(dir), err)
	}
	return l.Join(name).String(), nil
}

// CheckName refuses a member name that cannot be a job name (letters,
// digits, - and _; it names the member's directory too), or that Scan
// would not list: one starting with _ (a series' own entries).
func CheckName(name string) error {
	ok := name != "" && len(name) <= 64
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("member name %q: use letters, digits, - and _ (at most 64)", name)
	}
	if reason := notMember(storage.Entry{Name: name, Kind: storage.KindDir}); reason != "" {
		return fmt.Errorf("member name %q: %s, so a member of that name would be listed by no later member nor by series list", name, reason)
	}
	return nil
}

// Ignored is an entry of a series' directory that is not a member, and
// why.
type Ignored struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// notMember says why the entry e of a series' directory is not a member,
// "" if it is one. Members are the directories whose names start with
// neither _ nor .; a symbolic link is not followed (a member is a
// directory of the series itself, not a path elsewhere that a link may
// later point away from).
func notMember(e storage.Entry) string {
	switch {
	case e.Kind == storage.KindSymlink:
		return "a symbolic link, not followed: a member is a directory of the series itself (move the directory here, or give its path to --against)"
	case e.Kind != storage.KindDir:
		return "a file, not a directory: members are directories"
	case strings.HasPrefix(e.Name, "_") || strings.HasPrefix(e.Name, "."):
		return "a name starting with _ or . is not a member"
	}
	return ""
}

// ReportDir is the directory of the series' report (`coordinator series
// report`): no member, and not among Scan's ignored entries either, since
// it is the series' own.
const ReportDir = "_report"

// Scan lists the members of the series at dir (a local directory or an
// object-store prefix), sorted by name, each with its state, and the
// entries of dir that are not members (but ReportDir), each with why. A
// missing directory has none.
func Scan(ctx context.Context, dir *storage.Dir) ([]Member, []Ignored, error) {
	entries, err := dir.ListEntries(ctx, "")
	if err != nil {
		return nil, nil, err
	}
	var out []Member
	var ignored []Ignored
	for _, e := range entries {
		if reason := notMember(e); reason != "" {
			if e.Name != ReportDir || e.Kind != storage.KindDir {
				ignored = append(ignored, Ignored{e.Name, reason})
			}
			continue
		}
		name := e.Name
		m, err := Read(ctx, sub{dir, name})
		if err != nil {
			return nil, nil, fmt.Errorf("series %s: member %s: %w", dir.Root(), name, err)
		}
		if m.Out, err = Location(dir.Root(), name); err != nil {
			return nil, nil, err
		}
		m.Name = name
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Member) int { return strings.Compare(a.Name, b.Name) })
	return out, ignored, nil
}

// sub is the files of one member: the series' under the member's name.
type sub struct {
	dir  *storage.Dir
	name string
}

func (s sub) Open(ctx context.Context, name string) (storage.File, error) {
	return s.dir.Open(ctx, s.name+"/"+name)
}

// Read finds the state of the member in st (its Name and Out left
// empty). A missing file is a state; any other error reading the
// markers or the index (the storage failing, an index.json that does not
// decode or is of an unknown version) is returned: a member whose index
// cannot be read must fail the job, not be skipped.
func Read(ctx context.Context, st storage.Opener) (Member, error) {
	var m Member
	exists := func(name string) (bool, error) {
		f, err := st.Open(ctx, name)
		if err == nil {
			f.Close()
			return true, nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	success, err := exists(job.SuccessFile)
	if err != nil {
		return m, err
	}
	partial, err := exists(job.PartialFile)
	if err != nil {
		return m, err
	}
	working, err := exists(job.SpecFile)
	if err != nil {
		return m, err
	}
	locked, err := exists(job.LockFile)
	if err != nil {
		return m, err
	}
	ix, ixErr := index.Load(ctx, st)
	if ixErr != nil && !errors.Is(ixErr, index.ErrNoIndex) && !errors.Is(ixErr, fs.ErrNotExist) {
		return m, fmt.Errorf("its index: %w", ixErr)
	}
	man, manErr := manifest.Read(ctx, st)
	hasMan := !errors.Is(manErr, fs.ErrNotExist)
	if ix != nil {
		m.Job, m.Docs, m.FirstChunk, m.End = ix.Job, ix.Docs, ix.FirstChunk, ix.End()
		for _, c := range ix.Chunks {
			m.Chunks = append(m.Chunks, c.Chunk)
		}
		slices.Sort(m.Chunks)
		for _, a := range ix.Compacted {
			m.Holds = append(m.Holds, a.Job)
		}
	}
	if man != nil {
		if m.Job == "" {
			m.Job = man.Job
		}
		m.Pairs, m.PairsAgainst, m.Finished = man.Counts.Pairs, man.Counts.PairsAgainst, man.Finished
	}
	switch {
	case success || partial:
		m.State = Complete
		if !success {
			m.State = Partial
		}
		if ixErr != nil {
			m.State, m.Note = NoIndex, ixErr.Error()
		}
	case ix != nil && !working && !hasMan:
		m.State = Compacted
	case working || hasMan || ix != nil || locked:
		m.State = Incomplete
		switch {
		case man != nil:
			m.Note = "manifest status " + man.Status + ", no _SUCCESS"
		case working:
		case ix != nil:
			m.Note = "an index without the job's markers"
		default:
			m.Note = "started, nothing planned: failed or running"
		}
	default:
		m.State = NotJob
	}
	return m, nil
}

// Skipped is an earlier member not matched against, and why.
type Skipped struct {
	Member Member
	Reason string
}

// Choice is what a new member is matched against.
type Choice struct {
	// Earlier are the members to match against, by name.
	Earlier []Member
	// Skipped are the other members whose names sort before the new
	// one's that are not usable, by name, each with why.
	Skipped []Skipped
	// Held are the earlier members whose chunks a compacted member in
	// Earlier holds, by name: they are matched through it.
	Held []Skipped
	// Later are the members whose names sort after the new one's: a
	// rerun of an earlier member is not matched against them.
	Later []Member
}

// AfterEvery is a name that sorts after every member's: U+10FFFF, the
// last code point, sorts after any name of valid UTF-8 that does not begin
// with it. Pick(members, AfterEvery) is what the next member would match.
const AfterEvery = "\U0010FFFF"

// Pick chooses, of the members of a series (as Scan gives them), those
// the member named self is matched against: every usable member whose
// name sorts before self and that has documents, except those whose
// chunks are all in a
// compacted member's (compaction copies chunks under their numbers, so
// this holds for compacted indexes that do not record their sources);
// of two compacted members with the same chunks, the later name. The
// members picked must number their documents apart, as every job of a
// series run against all the finished ones before it does; two that do
// not (one ran while the other was unfinished, or was not run in this
// series) are an error naming both.
func Pick(members []Member, self string) (Choice, error) {
	var c Choice
	var usable []Member
	members = slices.Clone(members)
	slices.SortFunc(members, func(a, b Member) int { return strings.Compare(a.Name, b.Name) })
	var own []int // the chunks of self's earlier run, when it is rerun
	for _, m := range members {
		if m.Name == self {
			own = m.Chunks
		}
	}
	for _, m := range members {
		switch {
		case m.Name == self:
		case m.Name > self:
			c.Later = append(c.Later, m)
		case m.State == Compacted && holdsNotBefore(m, self, own) != "":
			c.Skipped = append(c.Skipped, Skipped{m, "it holds " + holdsNotBefore(m, self, own) + ", not earlier than " + self})
		case !m.State.Usable():
			c.Skipped = append(c.Skipped, Skipped{m, skipReason(m)})
		case len(m.Chunks) == 0:
			c.Skipped = append(c.Skipped, Skipped{m, "no documents to match against"})
		default:
			usable = append(usable, m)
		}
	}
	for _, m := range usable {
		if by, ok := heldBy(m, usable); ok {
			c.Held = append(c.Held, Skipped{m, "held by the compacted member " + by.Name})
			continue
		}
		c.Earlier = append(c.Earlier, m)
	}
	for i, a := range c.Earlier {
		for _, b := range c.Earlier[:i] {
			if a.FirstChunk < b.End && b.FirstChunk < a.End {
				return Choice{}, fmt.Errorf("members %s (chunks %d to %d) and %s (chunks %d to %d) number their documents alike: "+
					"one ran while the other was unfinished, or was not run in this series; run the later one again with --overwrite, or move one out of the series",
					b.Name, b.FirstChunk, b.End-1, a.Name, a.FirstChunk, a.End-1)
			}
		}
	}
	return c, nil
}

// holdsNotBefore names what of the compacted member m is not earlier
// than the member self (whose earlier run, if any, has the chunks own):
// a job it records holding whose name does not sort before self, or
// self's own chunks; "" if none. Matching a rerun of self against it
// would match self against itself.
func holdsNotBefore(m Member, self string, own []int) string {
	for _, h := range m.Holds {
		if h >= self {
			return "the job " + h
		}
	}
	for _, c := range own {
		if _, ok := slices.BinarySearch(m.Chunks, c); ok {
			return fmt.Sprintf("chunk %d of %s's earlier run", c, self)
		}
	}
	return ""
}

// heldBy returns the compacted member among all that holds every chunk
// of m (one with more chunks, or with the same ones when m is not
// compacted or sorts before it), if any: of several, the one with the
// most chunks, then the last by name, which nothing else holds.
func heldBy(m Member, all []Member) (Member, bool) {
	var best Member
	found := false
	for _, c := range all {
		if c.State != Compacted || c.Name == m.Name || !subset(m.Chunks, c.Chunks) {
			continue
		}
		if len(c.Chunks) > len(m.Chunks) || m.State != Compacted || m.Name < c.Name {
			if !found || len(c.Chunks) > len(best.Chunks) || len(c.Chunks) == len(best.Chunks) && c.Name > best.Name {
				best, found = c, true
			}
		}
	}
	return best, found
}

// subset reports whether every element of a is in b (both sorted).
func subset(a, b []int) bool {
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			return false
		}
	}
	return true
}

func skipReason(m Member) string {
	var why string
	switch m.State {
	case Incomplete:
		why = "incomplete: not finished (running, interrupted or failed); run its command again to finish it"
	case NoIndex:
		why = "finished without an index (--index=false), so it cannot be matched against"
	default:
		why = "neither a job's output nor a compacted index"
	}
	if m.Note != "" {
		why += " (" + m.Note + ")"
	}
	return why
}

// Resumed returns the earlier jobs' outputs an unfinished job in st was
// started against (its spec), and whether st holds an unfinished job:
// its rerun resumes it against the same ones, whatever the series holds
// now.
func Resumed(ctx context.Context, st storage.Opener) ([]string, bool, error) {
	data, err := storage.ReadFile(ctx, st, job.SpecFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var spec job.Spec
	if err := json.Unmarshal(data, &spec); err != nil {
		return nil, false, fmt.Errorf("%s: %w", job.SpecFile, err)
	}
	var outs []string
	for _, a := range spec.Against {
		outs = append(outs, a.Out)
	}
	return outs, true, nil
}
