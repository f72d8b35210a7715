package metrics

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/metrics/metricstest"
)

// TestServe counts a few events, scrapes the endpoint and checks every
// series, then checks that stop stops serving.
func TestServe(t *testing.T) {
	m := New()
	m.TaskStarted("map", 1)
	m.TaskStarted("map", 2)
	m.TaskStarted("cluster", 1)
	m.TaskEnded("map", 2*time.Second, nil)
	m.TaskEnded("map", time.Second, errors.New("disk full"))
	m.TaskEnded("cluster", 30*time.Millisecond, nil)
	m.Read(10, 100, 50, map[string]int64{"invalid JSON": 2, `missing text field "text"`: 1})
	m.Read(5, 20, 10, nil)
	m.StageDone("cluster", time.Second)
	m.StageDone("cluster", 2*time.Second)
	m.Pending("verify", 4)
	m.WatchQueue(func(context.Context) (int, error) { return 7, nil })

	addr, stop, err := m.Serve("127.0.0.1:0", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	got, err := metricstest.Scrape(addr)
	if err != nil {
		t.Fatal(err)
	}
	s := metricstest.Series
	want := map[string]float64{
		s("neardup_tasks_started_total", "stage", "map"):                  2,
		s("neardup_tasks_started_total", "stage", "cluster"):              1,
		s("neardup_tasks_redelivered_total", "stage", "map"):              1,
		s("neardup_tasks_done_total", "stage", "map"):                     1,
		s("neardup_tasks_done_total", "stage", "cluster"):                 1,
		s("neardup_tasks_failed_total", "stage", "map"):                   1,
		s("neardup_task_duration_seconds_count", "stage", "map"):          1,
		s("neardup_task_duration_seconds_sum", "stage", "map"):            2,
		"neardup_documents_read_total":                                    15,
		"neardup_input_bytes_read_total":                                  120,
		"neardup_text_bytes_read_total":                                   60,
		s("neardup_rejects_total", "reason", "invalid JSON"):              2,
		s("neardup_rejects_total", "reason", `missing text field "text"`): 1,
		s("neardup_stage_duration_seconds_total", "stage", "cluster"):     3,
		s("neardup_tasks_pending", "stage", "verify"):                     4,
		"neardup_queue_tasks":                                             7,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if _, ok := got["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics")
	}
	if _, ok := got[s("neardup_tasks_redelivered_total", "stage", "cluster")]; ok {
		t.Error("a first delivery counted as redelivered")
	}
	stop()
	if _, err := metricstest.Scrape(addr); err == nil {
		t.Error("still serving after stop")
	}
}

// TestWatchQueueFails checks that a queue that cannot be read shows as
// NaN, not as an empty queue.
func TestWatchQueueFails(t *testing.T) {
	m := New()
	m.WatchQueue(func(context.Context) (int, error) { return 0, errors.New("no server") })
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "neardup_queue_tasks" {
			if v := f.GetMetric()[0].GetGauge().GetValue(); !math.IsNaN(v) {
				t.Errorf("neardup_queue_tasks = %v, want NaN", v)
			}
			return
		}
	}
	t.Error("no neardup_queue_tasks")
}
