package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The coordinator lease: one key in the job's bucket, refreshed while a
// coordinator runs the job, so that a second coordinator started on the
// same job (an overlapping scheduled run, say) refuses instead of sharing
// its state. A coordinator that died leaves a lease that expires.
const (
	leaseKey     = "coordinator"
	leaseTTL     = 15 * time.Second
	leaseRefresh = 5 * time.Second
)

// ErrJobBusy is returned when another coordinator holds the job.
var ErrJobBusy = errors.New("another coordinator is running this job")

// Lease is the value of the lease key: who holds the job, writing where.
type Lease struct {
	Holder string `json:"holder"`
	Out    string `json:"out"`
}

// TakeLease makes l the job's coordinator until release is called.
// The caller holds the lock of its output directory, so a lease naming the
// same directory belongs to a coordinator that is gone: it is taken over
// at once, whatever its age.
func (s *State) TakeLease(ctx context.Context, l Lease, log *slog.Logger) (release func(), err error) {
	kv := s.kv
	holder, _ := json.Marshal(l)
	var rev uint64
	e, err := kv.Get(ctx, leaseKey)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		rev, err = kv.Create(ctx, leaseKey, holder)
		if errors.Is(err, jetstream.ErrKeyExists) {
			return nil, fmt.Errorf("%w (it started at the same moment)", ErrJobBusy)
		}
	case err != nil:
		return nil, fmt.Errorf("reading the coordinator lease: %w", err)
	default:
		var old Lease
		json.Unmarshal(e.Value(), &old)
		if age := time.Since(e.Created()); old.Out != l.Out && age < leaseTTL {
			return nil, fmt.Errorf("%w (%s writing %s, seen %s ago); wait for it, or stop it", ErrJobBusy, old.Holder, old.Out, age.Round(time.Second))
		}
		rev, err = kv.Update(ctx, leaseKey, holder, e.Revision())
		if err != nil {
			return nil, fmt.Errorf("%w (it took the lease first): %v", ErrJobBusy, err)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("taking the coordinator lease: %w", err)
	}
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(leaseRefresh)
		defer t.Stop()
		for {
			select {
			case <-lctx.Done():
				return
			case <-t.C:
				uctx, ucancel := context.WithTimeout(lctx, leaseRefresh)
				r, err := kv.Update(uctx, leaseKey, holder, rev)
				ucancel()
				if err != nil {
					log.Warn("could not refresh the coordinator lease", "err", err)
					continue
				}
				rev = r
			}
		}
	}()
	return func() {
		cancel()
		<-done
		dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer dcancel()
		kv.Delete(dctx, leaseKey, jetstream.LastRevision(rev))
	}, nil
}
