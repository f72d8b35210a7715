package stage

import (
	"testing"

	"github.com/neardup/neardup/internal/job"
)

// resolved returns the default parameters changed by set, resolved.
func resolved(t *testing.T, set func(*job.Params)) job.Params {
	t.Helper()
	p := job.DefaultParams()
	set(&p)
	if err := p.Resolve(); err != nil {
		t.Fatal(err)
	}
	return p
}
