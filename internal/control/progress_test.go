package control

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"time"
)

// TestStageEndEvent checks the event that ends a stage: "stage done" when
// every task finished, "stage stopped" when the stage ended with tasks
// still waiting (the job interrupted or failed).
func TestStageEndEvent(t *testing.T) {
	tests := []struct {
		name        string
		tasks, done int
		want        string
	}{
		{"every task finished", 3, 3, "stage done"},
		{"interrupted with one task waiting", 3, 2, "stage stopped"},
		{"interrupted before any task", 1, 0, "stage stopped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := newProgress(nil, false, slog.New(slog.NewJSONHandler(&buf, nil)))
			p.start(time.Now(), etaModel{stages: []string{"map", "reduce"}, ratio: map[string]float64{"reduce": 0.2}})
			p.begin("map", tt.tasks, 0)
			for range tt.done {
				p.done(0, 0, false)
			}
			p.end("map")
			p.finish()
			var rec map[string]any
			if err := json.Unmarshal(bytes.TrimSpace(buf.Bytes()), &rec); err != nil {
				t.Fatalf("want one JSON event, got %q: %v", buf.String(), err)
			}
			if rec["msg"] != tt.want || rec["tasks_done"] != float64(tt.done) {
				t.Errorf("event %v, want msg %q with tasks_done %d", rec, tt.want, tt.done)
			}
		})
	}
}
