package index

import (
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/sketch"
)

// TestCheckModel checks that CheckModel refuses an index of version 3 on
// whose document model is not this build's.
func TestCheckModel(t *testing.T) {
	base := job.DefaultParams()
	if err := base.Resolve(); err != nil {
		t.Fatal(err)
	}
	fp0, err := sketch.ModelFingerprint(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		version int
		model   string
		ok      bool
	}{
		{3, fp0, true},
		{3, "0123456789abcdef", false}, // another build's model
		{3, "", false},
		{2, "", true}, // signature files: nothing is sketched again
		{1, "", true},
	} {
		ix := &Index{Version: tc.version, Params: base, Model: tc.model}
		err := CheckModel(ix)
		if (err == nil) != tc.ok {
			t.Errorf("version %d model %q: %v", tc.version, tc.model, err)
		}
		if err != nil && !strings.Contains(err.Error(), "another document model") {
			t.Errorf("version %d model %q: error %v does not say why", tc.version, tc.model, err)
		}
	}
}
