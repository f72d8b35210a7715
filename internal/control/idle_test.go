package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/stage"
)

// lockedBuffer is a buffer that loggers on several goroutines share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// records are the JSON log records written so far with message msg.
func (l *lockedBuffer) records(t *testing.T, msg string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line not JSON: %v: %s", err, line)
		}
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// fakeActivity is a queue's consumer as the idle watch reads it.
type fakeActivity struct {
	delivered atomic.Uint64
	held      int
	advance   bool // each read finds one more delivery
}

func (f *fakeActivity) Deliveries(context.Context) (uint64, int, error) {
	if f.advance {
		f.delivered.Add(1)
	}
	return f.delivered.Load(), f.held, nil
}

// TestNoWorkerWarning watches a stage for 400 ms with a warning after
// 60 ms: with no sign of a worker it warns, again at most every 60 ms,
// naming the URL; a task held, delivered or finished is a worker.
func TestNoWorkerWarning(t *testing.T) {
	const after, watched = 60 * time.Millisecond, 400 * time.Millisecond
	tests := []struct {
		name     string
		after    time.Duration
		activity *fakeActivity
		finishes bool // a task finishes every 10 ms
		warns    bool
	}{
		{name: "no worker", after: after, activity: &fakeActivity{}, warns: true},
		{name: "no worker, no queue to ask", after: after, warns: true},
		{name: "a worker holds a task", after: after, activity: &fakeActivity{held: 1}},
		{name: "workers take tasks", after: after, activity: &fakeActivity{advance: true}},
		{name: "tasks finish", after: after, activity: &fakeActivity{}, finishes: true},
		{name: "warning off", after: 0, activity: &fakeActivity{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs lockedBuffer
			w := idleWatch{after: tt.after, nats: "nats://coordinator:4222", log: slog.New(slog.NewJSONHandler(&logs, nil))}
			if tt.activity != nil {
				w.src = tt.activity
			}
			ctx, cancel := context.WithTimeout(context.Background(), watched)
			defer cancel()
			var finished atomic.Int64
			if tt.finishes {
				go func() {
					for ctx.Err() == nil {
						finished.Add(1)
						time.Sleep(10 * time.Millisecond)
					}
				}()
			}
			w.watch(ctx, "cluster-ls-01", &finished, func() int { return 7 })
			warnings := logs.records(t, "no worker has taken a task")
			if !tt.warns {
				if len(warnings) > 0 {
					t.Errorf("%d warnings, want none: %v", len(warnings), warnings)
				}
				return
			}
			// Bounded: one per period at most (the first after one).
			if n := len(warnings); n < 2 || n > int(watched/after) {
				t.Fatalf("%d warnings in %v, want 2 to %d", n, watched, watched/after)
			}
			// The idle time of a repeat counts from the last sign of a
			// worker.
			first, err1 := time.ParseDuration(warnings[0]["idle"].(string))
			second, err2 := time.ParseDuration(warnings[1]["idle"].(string))
			if err1 != nil || err2 != nil || first < after || second < first+after {
				t.Errorf("idle %v then %v, want at least %v then %v more", warnings[0]["idle"], warnings[1]["idle"], after, after)
			}
			rec := warnings[0]
			if rec["level"] != "WARN" || rec["stage"] != "cluster" || rec["nats"] != "nats://coordinator:4222" ||
				rec["tasks_waiting"] != 7.0 || !strings.Contains(rec["hint"].(string), "worker --nats nats://coordinator:4222") {
				t.Errorf("warning %v", rec)
			}
		})
	}
}

// TestNoWorkerWarningInStage runs a stage whose tasks no worker takes:
// the coordinator warns while it waits.
func TestNoWorkerWarningInStage(t *testing.T) {
	st := &fakeState{keys: map[string][]byte{}}
	q := &fakeQueue{state: st, outcome: map[int]string{0: "untaken"}}
	var logs lockedBuffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	c := &coordinator{log: log, q: q, state: st, spec: &job.Spec{Job: "j", Epoch: "r1"}, prog: newProgress(nil, false, nil), life: "l",
		idle: idleWatch{after: 50 * time.Millisecond, src: &fakeActivity{}, nats: "nats://h:4222", log: log}}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := c.Execute(ctx, stage.Stage{Name: StageMap}, []int{0}); err == nil {
		t.Fatal("the stage ended with its task not done")
	}
	if w := logs.records(t, "no worker has taken a task"); len(w) == 0 || w[0]["stage"] != "map" {
		t.Errorf("warnings %v, want some for the map stage", w)
	}
}

// TestReachableURL checks the URL the no-worker warning tells workers to
// dial: an unspecified listening address becomes the host's name.
func TestReachableURL(t *testing.T) {
	host := func() (string, error) { return "crawler-7", nil }
	noHost := func() (string, error) { return "", errors.New("no name") }
	tests := []struct {
		url, want string
		hostname  func() (string, error)
	}{
		{"nats://0.0.0.0:4222", "nats://crawler-7:4222", host},
		{"nats://[::]:4222", "nats://crawler-7:4222", host},
		{"nats://127.0.0.1:4222", "nats://127.0.0.1:4222", host},
		{"nats://nats.internal:4222", "nats://nats.internal:4222", host},
		{"nats://0.0.0.0:4222", "nats://0.0.0.0:4222", noHost},
	}
	for _, tt := range tests {
		if got := reachableURL(tt.url, tt.hostname); got != tt.want {
			t.Errorf("reachableURL(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}
