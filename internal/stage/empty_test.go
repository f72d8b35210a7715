package stage

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// TestCompleteMapOutputs checks that rejects/ gets an empty file, with
// its schema, exactly when no map task wrote one, that an
// empty file of an earlier run goes once other chunks have rows, and that
// a task's own file is left alone.
func TestCompleteMapOutputs(t *testing.T) {
	info := &pqfile.Info{Name: "x", Rows: 1}
	tests := []struct {
		name   string
		before int // rows of the files there before: -1 none, 0 an empty file of an earlier run, 1 chunk 0's own
		maps   []job.MapResult
		after  int // rows of rejects/chunk-000000 after, -1 for none
	}{
		{"nothing written", -1, []job.MapResult{{Chunk: 0}, {Chunk: 1}}, 0},
		{"nothing written, again", 0, []job.MapResult{{Chunk: 0}, {Chunk: 1}}, 0},
		{"chunk 1 wrote", 0, []job.MapResult{{Chunk: 0}, {Chunk: 1, RejectFile: info}}, -1},
		{"chunk 0 failed, chunk 1 wrote", 0, []job.MapResult{{Chunk: 1, RejectFile: info}}, -1},
		{"chunk 0 wrote", 1, []job.MapResult{{Chunk: 0, RejectFile: info}}, 1},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := newStore(t)
			rejects := job.RejectFile(0)
			if tc.before >= 0 {
				if _, err := pqfile.Write(ctx, st, rejects, make([]records.RejectRecord, tc.before), rejectOptions()); err != nil {
					t.Fatal(err)
				}
			}
			if err := CompleteMapOutputs(ctx, st, tc.maps, false); err != nil {
				t.Fatal(err)
			}
			checkRows[records.RejectRecord](t, st, rejects, tc.after)
		})
	}
}

// checkRows checks that name holds want rows of T, or is absent when want
// is -1.
func checkRows[T any](t *testing.T, st storage.Opener, name string, want int) {
	t.Helper()
	rows, err := pqfile.Read[T](context.Background(), st, name, nil)
	switch {
	case want < 0 && errors.Is(err, fs.ErrNotExist):
	case err != nil:
		t.Errorf("%s: %v", name, err)
	case len(rows) != want:
		t.Errorf("%s: %d rows, want %d", name, len(rows), want)
	}
}
