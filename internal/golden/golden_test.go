package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records failures instead of stopping.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Fatal(...any)          { r.failed = true }

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "a.golden")
	tests := []struct {
		name   string
		got    string
		update bool
		fails  bool
		file   string // the file's content after the call, "" for none
	}{
		{"missing", "x", false, true, ""},
		{"update creates", "x", true, false, "x"},
		{"equal", "x", false, false, "x"},
		{"different", "y", false, true, "x"},
		{"update rewrites", "y", true, false, "y"},
	}
	for _, tc := range tests {
		r := &recorder{TB: t}
		Check(r, path, []byte(tc.got), tc.update)
		if r.failed != tc.fails {
			t.Errorf("%s: failed %v, want %v", tc.name, r.failed, tc.fails)
		}
		data, err := os.ReadFile(path)
		if (err != nil) != (tc.file == "") || string(data) != tc.file {
			t.Errorf("%s: the file holds %q (%v), want %q", tc.name, data, err, tc.file)
		}
	}
}
