// Package faults injects failures at named points of a job, so that tests
// can prove recovery: a task that panics, a file that cannot be created, a
// process that stalls while holding a task (to be killed). The commands read
// a rule set from the NEARDUP_FAULTS environment variable; an empty set does
// nothing.
//
// A rule set is a list of rules separated by ";". A rule is
// ACTION@POINT[#N]:
//
//	panic@map/1               map task 1 panics
//	fail@reduce/*             every reduce task fails with an error
//	stall@verify/0            verify task 0 blocks until its context ends
//	slow@reduce/*             every reduce task first waits 2 seconds
//	fail@create:candidates/   creating a file whose name contains
//	                          "candidates/" fails as a full disk would
//	deny@create:pairs/        ... fails with permission denied
//	stall@create:_work/bandruns/chunk-000002-run0000
//	                          blocks while creating that file
//	stall@commit:_work/bandruns/chunk-000002-run0000
//	                          blocks after writing that file, before it
//	                          is renamed into place (its temporary file
//	                          exists)
//
// #N limits a rule to its first N hits in this process (fail@map/1#1 fails
// once, then lets the retry succeed).
package faults

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/neardup/neardup/internal/storage"
)

// EnvVar is the environment variable the commands read rules from.
const EnvVar = "NEARDUP_FAULTS"

// slowDelay is how long a "slow" point waits.
const slowDelay = 2 * time.Second

// ErrInjected marks every injected failure.
var ErrInjected = errors.New("injected fault")

type rule struct {
	action string // panic, fail, deny, stall, slow
	stage  string // task rules: stage name
	index  int    // task rules: index, -1 for any
	path   string // file rules: substring of the file name
	commit bool   // file rules: at commit rather than at create
	limit  int    // 0: unlimited
	hits   int
}

// Set is a parsed rule set. A nil *Set injects nothing.
type Set struct {
	mu    sync.Mutex
	rules []*rule
	log   *slog.Logger
}

// Parse reads a rule set.
func Parse(spec string, log *slog.Logger) (*Set, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Set{log: log}
	for _, text := range strings.Split(spec, ";") {
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		r := &rule{index: -1}
		action, point, ok := strings.Cut(text, "@")
		if !ok {
			return nil, fmt.Errorf("faults: rule %q: want ACTION@POINT", text)
		}
		switch action {
		case "panic", "fail", "deny", "stall", "slow":
			r.action = action
		default:
			return nil, fmt.Errorf("faults: rule %q: unknown action %q", text, action)
		}
		if p, n, ok := strings.Cut(point, "#"); ok {
			limit, err := strconv.Atoi(n)
			if err != nil || limit < 1 {
				return nil, fmt.Errorf("faults: rule %q: bad count %q", text, n)
			}
			point, r.limit = p, limit
		}
		create, isCreate := strings.CutPrefix(point, "create:")
		commit, isCommit := strings.CutPrefix(point, "commit:")
		if isCreate || isCommit {
			if r.action == "panic" {
				return nil, fmt.Errorf("faults: rule %q: file points take fail, deny, stall or slow", text)
			}
			r.path, r.commit = create, isCommit
			if isCommit {
				r.path = commit
			}
		} else {
			stage, idx, ok := strings.Cut(point, "/")
			if !ok || stage == "" {
				return nil, fmt.Errorf("faults: rule %q: want STAGE/INDEX, create:PATH or commit:PATH", text)
			}
			r.stage = stage
			if idx != "*" {
				i, err := strconv.Atoi(idx)
				if err != nil {
					return nil, fmt.Errorf("faults: rule %q: bad index %q", text, idx)
				}
				r.index = i
			}
		}
		s.rules = append(s.rules, r)
	}
	return s, nil
}

// match returns the first rule that fires for a predicate, counting its hit.
func (s *Set) match(pred func(*rule) bool) *rule {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.rules {
		if pred(r) && (r.limit == 0 || r.hits < r.limit) {
			r.hits++
			return r
		}
	}
	return nil
}

func (s *Set) fire(ctx context.Context, r *rule, where string) error {
	s.log.Warn("fault injected", "action", r.action, "at", where)
	switch r.action {
	case "panic":
		panic(fmt.Sprintf("%v: panic at %s", ErrInjected, where))
	case "stall":
		<-ctx.Done()
		return ctx.Err()
	case "slow":
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(slowDelay):
			return nil
		}
	}
	if r.action == "deny" {
		return fmt.Errorf("%w at %s: %w", ErrInjected, where, syscall.EACCES)
	}
	return fmt.Errorf("%w at %s: %w", ErrInjected, where, syscall.ENOSPC)
}

// Task is called when a task starts.
func (s *Set) Task(ctx context.Context, stage string, index int) error {
	r := s.match(func(r *rule) bool {
		return r.path == "" && r.stage == stage && (r.index < 0 || r.index == index)
	})
	if r == nil {
		return nil
	}
	return s.fire(ctx, r, fmt.Sprintf("%s/%d", stage, index))
}

// Create is called before a file is created.
func (s *Set) Create(ctx context.Context, name string) error {
	return s.file(ctx, name, false)
}

// Commit is called when a file is complete, before it is renamed into
// place.
func (s *Set) Commit(ctx context.Context, name string) error {
	return s.file(ctx, name, true)
}

func (s *Set) file(ctx context.Context, name string, commit bool) error {
	r := s.match(func(r *rule) bool { return r.path != "" && r.commit == commit && strings.Contains(name, r.path) })
	if r == nil {
		return nil
	}
	what := "create "
	if commit {
		what = "commit "
	}
	return s.fire(ctx, r, what+name)
}

// FS wraps a job's storage so that every file creation passes through the
// set's rules first. A nil set returns fsys unchanged.
func (s *Set) FS(fsys storage.FS) storage.FS {
	if s == nil {
		return fsys
	}
	return faultyFS{FS: fsys, set: s}
}

// faultyFS is a storage.FS whose Create can fail, stall or panic.
type faultyFS struct {
	storage.FS
	set *Set
}

func (f faultyFS) Create(ctx context.Context, name string) (storage.Writer, error) {
	if err := f.set.Create(ctx, name); err != nil {
		return nil, err
	}
	w, err := f.FS.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	return faultyWriter{Writer: w, ctx: ctx, name: name, set: f.set}, nil
}

// faultyWriter passes its commit through the set's commit rules.
type faultyWriter struct {
	storage.Writer
	ctx  context.Context
	name string
	set  *Set
}

func (w faultyWriter) Commit() error {
	if err := w.set.Commit(w.ctx, w.name); err != nil {
		w.Writer.Abort()
		return err
	}
	return w.Writer.Commit()
}
