package stage

import (
	"context"
	"time"

	"github.com/neardup/neardup/internal/transient"
)

// cleanRetry is how long the coordinator's clean-ups retry an object
// store's transient errors: an outage longer than that fails the job,
// which the same command resumes.
const cleanRetry = 2 * time.Minute

// retried runs op until it succeeds, fails for good, ctx ends, or it has
// failed transiently for cleanRetry.
func Retried(ctx context.Context, op func() error) error {
	deadline := time.Now().Add(cleanRetry)
	wait := 250 * time.Millisecond
	for {
		err := op()
		if err == nil || !transient.Is(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}
