// Package kepttest reads kept corpora for tests: a corpus's files by name,
// so that two runs' corpora can be compared byte for byte.
package kepttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/internal/storage"
)

// Files returns the files of the kept corpus in dir by name, kept.json and
// the marker without the job's path and epoch (which name the run). A
// temporary file left in it is an error.
func Files(dir string) (map[string][]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if strings.Contains(e.Name(), storage.TempMarker) {
			return nil, fmt.Errorf("%s: a temporary file left in a finished corpus", e.Name())
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if e.Name() == kept.SummaryFile || e.Name() == kept.MarkerFile {
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				return nil, fmt.Errorf("%s: %w", e.Name(), err)
			}
			delete(m, "job")
			delete(m, "epoch")
			data, _ = json.Marshal(m)
		}
		files[e.Name()] = data
	}
	return files, nil
}

// Same returns the first difference between two corpora's files, nil
// when they hold the same files, byte for byte.
func Same(want, got map[string][]byte) error {
	for name, data := range want {
		if other, ok := got[name]; !ok || !bytes.Equal(data, other) {
			return fmt.Errorf("%s differs (%d bytes, want %d)", name, len(other), len(data))
		}
	}
	if len(got) != len(want) {
		return fmt.Errorf("%d files, want %d", len(got), len(want))
	}
	return nil
}
