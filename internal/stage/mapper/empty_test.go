package mapper

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/worktest"
	"github.com/neardup/neardup/pkg/records"
)

// TestCompleteMapOutputs checks that rejects/ gets an empty file, with
// its schema, exactly when no map task wrote one, that an
// empty file of an earlier run goes once other chunks have rows, and that
// a task's own file is left alone.
func TestCompleteMapOutputs(t *testing.T) {
	info := &fileinfo.Info{Name: "x", Rows: 1}
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
			st := worktest.NewStore(t)
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

// TestSlimMaps checks that the map results other stages read lose their
// band files and keep the rest.
func TestSlimMaps(t *testing.T) {
	info := fileinfo.Info{Name: "x", Rows: 1}
	var maps []job.MapResult
	for c := range 4 {
		maps = append(maps, job.MapResult{Chunk: c, Docs: int64(c), BandFiles: map[int]fileinfo.Info{c: info}, BandRunFiles: []fileinfo.Info{info}})
	}
	for _, m := range slimMaps(maps) {
		if m.BandFiles != nil || m.BandRunFiles != nil || m.Docs != int64(m.Chunk) {
			t.Errorf("slim map result %+v", m)
		}
	}
	if maps[0].BandRunFiles == nil {
		t.Error("slimMaps changed its argument")
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
