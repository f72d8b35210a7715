package control

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/stage"
)

// fakeState is a job state in memory: Follow replays the keys, then sends
// every later put.
type fakeState struct {
	mu      sync.Mutex
	keys    map[string][]byte
	deleted []string
	follow  chan queue.Update
}

func (s *fakeState) Follow(ctx context.Context, prefix string) (<-chan queue.Update, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.follow = make(chan queue.Update, 100)
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range s.keys {
			if !yield(k) {
				return
			}
		}
	}) {
		s.follow <- queue.Update{Key: k, Value: s.keys[k]}
	}
	s.follow <- queue.Update{Replayed: true}
	return s.follow, nil
}

func (s *fakeState) put(key string, v []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[key] = v
	if s.follow != nil {
		s.follow <- queue.Update{Key: key, Value: v}
	}
}

func (s *fakeState) Create(ctx context.Context, key string, v []byte) error {
	s.mu.Lock()
	_, ok := s.keys[key]
	s.mu.Unlock()
	if ok {
		return queue.ErrExists
	}
	s.put(key, v)
	return nil
}

func (s *fakeState) Delete(ctx context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.keys, key)
	s.deleted = append(s.deleted, key)
	return nil
}

// fakeQueue runs each published task at once as a worker would: it
// records the task done, failed, or (for an exhausted task) reports it to
// the exhaustion watcher.
type fakeQueue struct {
	state     *fakeState
	outcome   map[int]string // "done" (default), "failed", "exhausted" or "untaken"
	published []int
	exhausted func(queue.Exhausted)
}

func (q *fakeQueue) Purge(ctx context.Context, job, run string) error { return nil }

func (q *fakeQueue) WatchExhausted(ctx context.Context, fn func(queue.Exhausted)) (func(), error) {
	q.exhausted = fn
	return func() {}, nil
}

func (q *fakeQueue) Publish(ctx context.Context, jobName, run, id string, data []byte) error {
	var t Task
	if err := json.Unmarshal(data, &t); err != nil {
		return err
	}
	q.published = append(q.published, t.Index)
	switch q.outcome[t.Index] {
	case "failed":
		f, _ := json.Marshal(manifest.Failure{Stage: t.Stage, Index: t.Index, Attempts: 4, Error: "boom"})
		q.state.put(failedKey(t.Epoch, t.Stage, t.Index), f)
	case "exhausted":
		q.exhausted(queue.Exhausted{Data: data, Deliveries: 4})
	case "untaken": // no worker takes it
	default:
		q.state.put(doneKey(t.Epoch, t.Stage, t.Index), []byte(`"result"`))
	}
	return nil
}

// TestStagePolicy checks what the coordinator does with a stage's state:
// tasks already done are not published again, failures a previous life saw
// are cleared and retried, and failures of this life (recorded by a worker
// or by the exhaustion watcher) end the stage as failures.
func TestStagePolicy(t *testing.T) {
	const run = "r1"
	tests := []struct {
		name          string
		before        map[string]string // state keys (without the stage prefix) before the stage
		outcome       map[int]string
		wantPublished []int
		wantDone      []int
		wantFailed    []int
		wantDeleted   []string
	}{
		{name: "fresh", wantPublished: []int{0, 1, 2}, wantDone: []int{0, 1, 2}},
		{name: "resumed: done tasks stay done", before: map[string]string{"done.000001": `"old"`},
			wantPublished: []int{0, 2}, wantDone: []int{0, 1, 2}},
		{name: "a failure of a previous life is retried", before: map[string]string{"failed.000002": `{}`},
			wantPublished: []int{0, 1, 2}, wantDone: []int{0, 1, 2}, wantDeleted: []string{run + ".map.failed.000002"}},
		{name: "a task failing for good", outcome: map[int]string{1: "failed"},
			wantPublished: []int{0, 1, 2}, wantDone: []int{0, 2}, wantFailed: []int{1}},
		{name: "a task whose workers all died", outcome: map[int]string{2: "exhausted"},
			wantPublished: []int{0, 1, 2}, wantDone: []int{0, 1}, wantFailed: []int{2}},
		{name: "keys of another run are ignored", before: map[string]string{"x": ""},
			wantPublished: []int{0, 1, 2}, wantDone: []int{0, 1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &fakeState{keys: map[string][]byte{}}
			for k, v := range tt.before {
				if k == "x" {
					st.keys["r0.map.done.000000"] = []byte(v)
					continue
				}
				st.keys[run+".map."+k] = []byte(v)
			}
			q := &fakeQueue{state: st, outcome: tt.outcome}
			c := &coordinator{log: slog.New(slog.DiscardHandler), q: q, state: st,
				spec: &job.Spec{Job: "j", Epoch: run}, prog: newProgress(nil, false, nil), life: "l"}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			out, err := c.Execute(ctx, stage.Stage{Name: StageMap}, []int{0, 1, 2})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(q.published, tt.wantPublished) {
				t.Errorf("published %v, want %v", q.published, tt.wantPublished)
			}
			if got := out.Done; !slices.Equal(got, tt.wantDone) {
				t.Errorf("done %v, want %v", got, tt.wantDone)
			}
			var failed []int
			for _, f := range out.Failures {
				failed = append(failed, f.Index)
			}
			if !slices.Equal(failed, tt.wantFailed) {
				t.Errorf("failed %v, want %v", failed, tt.wantFailed)
			}
			if !slices.Equal(st.deleted, tt.wantDeleted) {
				t.Errorf("deleted %v, want %v", st.deleted, tt.wantDeleted)
			}
		})
	}
}
