package queue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The coordinator lease: one key (LeaseKey) in the job's state, refreshed
// while a coordinator runs the job, so that a second coordinator started
// on the same job (an overlapping scheduled run, say) refuses instead of
// sharing its state. A coordinator that died leaves a lease that expires.
const (
	LeaseKey     = "coordinator"
	leaseTTL     = 15 * time.Second
	leaseRefresh = 5 * time.Second
)

// ErrJobBusy is returned when another coordinator holds the job.
var ErrJobBusy = errors.New("another coordinator is running this job")

// ErrLeaseLost is wrapped by the error that stops a coordinator whose
// lease is gone: taken by another coordinator, or deleted with the job's
// state. It matches ErrJobBusy too.
var ErrLeaseLost error = leaseLost{}

type leaseLost struct{}

func (leaseLost) Error() string { return "coordinator lease lost" }
func (leaseLost) Unwrap() error { return ErrJobBusy }

// stateGone tells whether err, from reading the lease, means that the
// job's state is gone: the key or the bucket deleted. A bucket deleted
// under an open handle answers reads with "no responders", as a server
// that is away does, so for any other error the bucket itself is looked
// up: JetStream says at once when it no longer exists.
func stateGone(ctx context.Context, kv jetstream.KeyValue, err error) bool {
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) {
		return true
	}
	sctx, cancel := context.WithTimeout(ctx, leaseRefresh)
	defer cancel()
	_, serr := kv.Status(sctx)
	return errors.Is(serr, jetstream.ErrStreamNotFound) || errors.Is(serr, jetstream.ErrBucketNotFound)
}

// takenErr is the error of a lease found held by other.
func takenErr(other []byte, when string) error {
	var l Lease
	json.Unmarshal(other, &l)
	return fmt.Errorf("%w: the lease was taken by %s writing %s%s", ErrLeaseLost, l.Holder, l.Out, when)
}

// goneErr is the error of a lease deleted with the job's state.
func goneErr(when string) error {
	return fmt.Errorf("%w: the job's state was deleted (by another coordinator that started the job afresh or finished it)%s", ErrLeaseLost, when)
}

// Lease is the value of the lease key: who holds the job, writing where.
type Lease struct {
	Holder string `json:"holder"`
	Out    string `json:"out"`
	// Unlocked says the taker holds no lock on Out (an object store has
	// none): a live lease of another holder on the same output is then
	// waited out, not taken over (see TakeLease). Not stored.
	Unlocked bool `json:"-"`
}

// Lease returns the job's lease and how long ago it was last refreshed,
// or an error wrapping ErrNotFound when no coordinator holds it.
func (s *State) Lease(ctx context.Context) (Lease, time.Duration, error) {
	e, err := s.kv.Get(ctx, LeaseKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Lease{}, 0, fmt.Errorf("queue: %s: %w", LeaseKey, ErrNotFound)
	}
	if err != nil {
		return Lease{}, 0, fmt.Errorf("queue: get %s: %w", LeaseKey, err)
	}
	var l Lease
	if err := json.Unmarshal(e.Value(), &l); err != nil {
		return Lease{}, 0, fmt.Errorf("queue: %s: %w", LeaseKey, err)
	}
	return l, time.Since(e.Created()), nil
}

// Live tells whether a lease refreshed age ago is still its holder's.
func Live(age time.Duration) bool { return age < leaseTTL }

// Held is a lease taken by TakeLease.
type Held struct {
	kv     jetstream.KeyValue
	holder []byte
	gone   atomic.Bool // lost: another coordinator's now
	// failing is when the first of the refreshes that fail began (Unix
	// nanoseconds), 0 while they succeed.
	failing atomic.Int64
	mu      sync.Mutex
	lastErr error // of the last refresh
	release func()
}

// Unrefreshed is how long the lease's refreshes have been failing (0
// while they succeed): the job's state can be neither read nor written
// for that long.
func (h *Held) Unrefreshed() time.Duration {
	if t := h.failing.Load(); t != 0 {
		return time.Since(time.Unix(0, t))
	}
	return 0
}

// RefreshError is the error of the last refresh of the lease, nil when it
// succeeded.
func (h *Held) RefreshError() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lastErr
}

// refreshed records the outcome of a refresh that began at began: err nil
// when it succeeded.
func (h *Held) refreshed(err error, began time.Time) {
	h.mu.Lock()
	h.lastErr = err
	h.mu.Unlock()
	if err == nil {
		h.failing.Store(0)
		return
	}
	h.failing.CompareAndSwap(0, began.UnixNano())
}

// Release stops refreshing the lease and deletes it, unless it was lost.
// It may be called more than once.
func (h *Held) Release() { h.release() }

// Confirm reads the lease and returns nil when it is still this holder's,
// or an error wrapping ErrLeaseLost (and so ErrJobBusy) when another
// coordinator took it or the job's state was deleted. A coordinator
// confirms its lease before it concludes a job, so that one which was
// frozen or cut off while another took its job never writes the job's
// outcome. Errors reaching the server are retried until ctx ends.
func (h *Held) Confirm(ctx context.Context) error {
	for {
		e, err := h.kv.Get(ctx, LeaseKey)
		switch {
		case err == nil && bytes.Equal(e.Value(), h.holder):
			return nil
		case err == nil:
			h.gone.Store(true)
			return takenErr(e.Value(), "")
		case stateGone(ctx, h.kv, err):
			h.gone.Store(true)
			return goneErr("")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("confirming the coordinator lease: %w", err)
		case <-time.After(time.Second):
		}
	}
}

// afterFailedWrite reads the lease again after writing holder over
// revision was (0: creating it) failed with werr, whose outcome may be
// unknown (a timeout: the write may have happened, its reply lost). It
// returns the revision when the lease is holder's (this coordinator's
// own write happened); an error wrapping ErrJobBusy only when another
// coordinator's lease is there, written since (naming its holder; why
// says how), or the server refused the write as one on an older revision;
// and otherwise an error saying that the lease could not be written,
// naming the server and JetStream's error when the server answers
// (StoreFault).
func (s *State) afterFailedWrite(ctx context.Context, holder []byte, was uint64, werr error, why string) (uint64, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaseRefresh)
	defer cancel()
	e, err := s.kv.Get(rctx, LeaseKey)
	switch {
	case err == nil && bytes.Equal(e.Value(), holder):
		return e.Revision(), nil
	case err == nil && e.Revision() != was:
		var other Lease
		json.Unmarshal(e.Value(), &other)
		return 0, fmt.Errorf("%w (%s: %s writing %s)", ErrJobBusy, why, other.Holder, other.Out)
	case errors.Is(werr, jetstream.ErrKeyExists) || errors.Is(werr, jetstream.ErrKeyRevisionMismatch):
		// The server refused the write: the lease changed meanwhile
		// (deleted with the job's state, say, when not read again).
		return 0, fmt.Errorf("%w (%s): %v", ErrJobBusy, why, werr)
	}
	if ferr := s.StoreFault(rctx, "when taking the coordinator lease", werr); ferr != nil {
		return 0, ferr
	}
	return 0, fmt.Errorf("taking the coordinator lease: %w", werr)
}

// TakeLease makes l the job's coordinator until it is released.
// A caller that holds the lock of its output directory knows that a lease
// naming the same directory belongs to a coordinator that is gone: it is
// taken over at once, whatever its age. An output without a lock (an
// object store: l.Unlocked) has no such proof: a live lease of another
// holder is waited out, up to leaseTTL, and is ErrJobBusy if its holder
// refreshes it meanwhile. A write of the lease that fails is not taken
// for another coordinator's: the lease is read again (afterFailedWrite),
// and only another holder's lease, written since, is ErrJobBusy.
//
// The lease is refreshed every leaseRefresh. When a refresh fails (the
// server was away, or the reply to a refresh that did happen was lost),
// the lease is read again: if it is still l's, its revision is adopted and
// the lease goes on; if another coordinator holds it, or the job's state
// is gone (another coordinator started the job afresh or finished it),
// lost is called once with an error wrapping ErrLeaseLost, and refreshing
// stops.
// waitOut waits until the lease e, of old, is leaseTTL old unrefreshed,
// and returns it as it is then; an error wrapping ErrJobBusy if its
// holder refreshed it meanwhile (or another took it).
func (s *State) waitOut(ctx context.Context, e jetstream.KeyValueEntry, old Lease, log *slog.Logger) (jetstream.KeyValueEntry, error) {
	for {
		age := time.Since(e.Created())
		if age >= leaseTTL {
			return e, nil
		}
		if log != nil {
			log.Info("the job's lease was refreshed recently: waiting to see whether its holder is alive (an object-store output has no lock)",
				"holder", old.Holder, "seen", age.Round(time.Second), "wait", (leaseTTL - age).Round(time.Second))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(leaseTTL-age, time.Second) + 10*time.Millisecond):
		}
		now, err := s.kv.Get(ctx, LeaseKey)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			return nil, fmt.Errorf("%w (the lease of %s went while this coordinator waited for it: another coordinator is starting)", ErrJobBusy, old.Holder)
		case err != nil:
			return nil, fmt.Errorf("reading the coordinator lease: %w", err)
		case now.Revision() != e.Revision():
			return nil, fmt.Errorf("%w (%s refreshed its lease on %s while this coordinator waited: it is alive); stop it, or wait for it", ErrJobBusy, old.Holder, old.Out)
		}
	}
}

func (s *State) TakeLease(ctx context.Context, l Lease, log *slog.Logger, lost func(error)) (*Held, error) {
	kv := s.kv
	holder, _ := json.Marshal(l)
	var rev uint64
	// A cluster electing a stream's leader answers "no responders" for a
	// moment: read again, for up to leaseTTL, while time may mend it.
	var e jetstream.KeyValueEntry
	rctx, cancel := context.WithTimeout(ctx, leaseTTL)
	err := Retry(rctx, func(ctx context.Context) error {
		var err error
		e, err = kv.Get(ctx, LeaseKey)
		if err != nil && (errors.Is(err, jetstream.ErrKeyNotFound) || !Transient(err)) {
			return Permanent(err)
		}
		return err
	})
	cancel()
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		rev, err = kv.Create(ctx, LeaseKey, holder)
		if err != nil {
			rev, err = s.afterFailedWrite(ctx, holder, 0, err, "it started at the same moment")
		}
	case err != nil:
		return nil, fmt.Errorf("reading the coordinator lease: %w", err)
	default:
		var old Lease
		json.Unmarshal(e.Value(), &old)
		if age := time.Since(e.Created()); old.Out != l.Out && age < leaseTTL {
			return nil, fmt.Errorf("%w (%s writing %s, seen %s ago); wait for it, or stop it", ErrJobBusy, old.Holder, old.Out, age.Round(time.Second))
		}
		if l.Unlocked && !bytes.Equal(e.Value(), holder) {
			// No lock keeps a second coordinator off the output: a
			// live lease may be another's running the job. Wait until
			// it has gone unrefreshed for leaseTTL (a crashed
			// coordinator's); refreshed meanwhile, it is busy.
			if e, err = s.waitOut(ctx, e, old, log); err != nil {
				return nil, err
			}
		}
		rev, err = kv.Update(ctx, LeaseKey, holder, e.Revision())
		if err != nil {
			rev, err = s.afterFailedWrite(ctx, holder, e.Revision(), err, "it took the lease first")
		}
	}
	if err != nil {
		return nil, err
	}
	h := &Held{kv: kv, holder: holder}
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
				began := time.Now()
				uctx, ucancel := context.WithTimeout(lctx, leaseRefresh)
				// Read before writing: a revision is a position in the
				// bucket's stream, and a bucket deleted and made again by
				// another coordinator counts from 1 again, so an update
				// on an old revision alone could overwrite that
				// coordinator's lease.
				e, gerr := kv.Get(uctx, LeaseKey)
				var werr error // the update's
				if gerr == nil && bytes.Equal(e.Value(), holder) {
					r, err := kv.Update(uctx, LeaseKey, holder, rev)
					if err == nil {
						rev = r
						h.refreshed(nil, began)
						ucancel()
						continue
					}
					// The write failed: read again, to tell a lost reply
					// from a lease taken meanwhile.
					werr = err
					e, gerr = kv.Get(uctx, LeaseKey)
					if gerr != nil {
						gerr = fmt.Errorf("%w (after the update failed: %v)", gerr, err)
					}
				}
				ucancel()
				switch {
				case gerr == nil && bytes.Equal(e.Value(), holder) && e.Revision() != rev:
					// Still ours: a refresh happened whose reply was lost.
					rev = e.Revision()
					h.refreshed(nil, began)
					log.Info("coordinator lease renewed after a lost refresh", "revision", rev)
				case gerr == nil && bytes.Equal(e.Value(), holder):
					// Still ours, as it was: the refresh was not stored
					// (JetStream refused it: its limits, say).
					h.refreshed(werr, began)
					log.Warn("could not refresh the coordinator lease", "err", werr)
				case gerr == nil:
					h.gone.Store(true)
					lost(takenErr(e.Value(), " while this one could not refresh it"))
					return
				case stateGone(lctx, kv, gerr):
					h.gone.Store(true)
					lost(goneErr(" while this one could not refresh its lease"))
					return
				default:
					h.refreshed(gerr, began)
					log.Warn("could not refresh the coordinator lease", "err", gerr)
				}
			}
		}
	}()
	h.release = sync.OnceFunc(func() {
		cancel()
		<-done
		if h.gone.Load() {
			return // another coordinator's now: not ours to delete
		}
		// While refreshes fail the delete most likely fails too: it gets
		// a second, not to hold up a job stopping because of that. (The
		// lease left is stale: the next run of this output takes it over.)
		wait := 5 * time.Second
		if h.failing.Load() != 0 {
			wait = time.Second
		}
		dctx, dcancel := context.WithTimeout(context.Background(), wait)
		defer dcancel()
		kv.Delete(dctx, LeaseKey, jetstream.LastRevision(rev))
	})
	return h, nil
}
