package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/redact"
	"github.com/neardup/neardup/internal/storage"
)

// connect reaches the NATS server, starting an embedded one when no URL is
// given, and opens the coordinator's queue. open opens more queues on the
// embedded server (for in-process workers); stop releases everything.
func connect(ctx context.Context, cfg Config, st *storage.Dir, log *slog.Logger) (q *queue.Queue, open func(string) (*queue.Queue, error), srv *queue.Embedded, stop func(), err error) {
	if cfg.NATSURL != "" {
		cc := cfg.Conn
		cc.URL = cfg.NATSURL
		q, err := queue.Connect(ctx, cc, "neardup-coordinator", cfg.Queue, log)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		return q, nil, nil, q.Close, nil
	}
	srv, err = queue.StartEmbedded(natsStore(cfg, st), cfg.Listen)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if cfg.Listen != "" {
		log.Info("embedded NATS server listening", "url", redact.URL(srv.URL()))
	}
	open = func(name string) (*queue.Queue, error) { return srv.Open(ctx, name, cfg.Queue) }
	if q, err = open("neardup-coordinator"); err != nil {
		srv.Shutdown()
		return nil, nil, nil, nil, err
	}
	return q, open, srv, func() { q.Close(); srv.Shutdown() }, nil
}

// natsStore is the embedded server's store directory: --nats-store, or
// the job's work area when the output is local. An output in object
// storage cannot hold a JetStream store: the store then lives in the
// user's cache directory, named after the output, so that the same
// command run again on this machine resumes.
func natsStore(cfg Config, st *storage.Dir) string {
	if cfg.NATSStore != "" {
		return cfg.NATSStore
	}
	if st.Local() {
		return st.Path(job.NATSDir)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "neardup", "nats", strconv.FormatUint(xxhash.Sum64String(st.Root()), 16))
}

// jobState opens the job's state and takes the coordinator lease in it,
// then clears the state when it belongs to another run. The lease comes
// first: a running job's state is never cleared.
// failure is the reason to give for a run that failed with err. Tasks
// fail when another coordinator took the job (they belong to an epoch
// that is over), and the run's context is cancelled, with its cause, when
// the lease is lost, a disk stays full or the NATS server's store does
// not write: those causes are the reason,
// whichever was seen first. The lease goroutine may find the lease lost
// while the lease is being confirmed here, cancelling the confirmation,
// so the cause is read after it.
func failure(ctx context.Context, err error, lease confirmer) error {
	if ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		cerr := lease.Confirm(cctx)
		cancel()
		if errors.Is(cerr, ErrJobBusy) {
			return cerr
		}
	}
	if cause := context.Cause(ctx); errors.Is(cause, ErrJobBusy) || errors.Is(cause, ErrDiskFull) || errors.Is(cause, queue.ErrStoreFailed) {
		return cause
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted; run the same command again to resume: %w", ctx.Err())
	}
	return err
}

func jobState(ctx context.Context, q *queue.Queue, spec *job.Spec, holder queue.Lease, overwrite bool, log *slog.Logger, lost func(error)) (*queue.State, *queue.Held, error) {
	state, err := q.State(ctx, spec.Job)
	if err != nil {
		return nil, nil, err
	}
	if !overwrite {
		if err := othersJob(ctx, state, spec); err != nil {
			return nil, nil, err
		}
	}
	lease, err := state.TakeLease(ctx, holder, log, lost)
	if err != nil {
		return nil, nil, err
	}
	if v, err := getRetried(ctx, state, specKey); err == nil {
		var old job.Spec
		if json.Unmarshal(v, &old) == nil && old.Epoch == spec.Epoch {
			// The same epoch, resumed: keep its state, but tell workers
			// where the output is now (it may have moved).
			return state, lease, putSpec(ctx, state, spec, lease)
		}
		lease.Release()
		if err := q.DeleteState(ctx, spec.Job); err != nil {
			return nil, nil, err
		}
		if state, err = q.State(ctx, spec.Job); err != nil {
			return nil, nil, err
		}
		if lease, err = state.TakeLease(ctx, holder, log, lost); err != nil {
			return nil, nil, err
		}
	} else if !errors.Is(err, queue.ErrNotFound) {
		lease.Release()
		return nil, nil, fmt.Errorf("job %s: %w", spec.Job, err)
	}
	return state, lease, putSpec(ctx, state, spec, lease)
}

// othersJob returns an error wrapping ErrJobBusy, naming the holder, when
// the job's state holds an unfinished run of the job that writes another
// output: starting afresh would throw it away, which only --overwrite
// does. (A run of the same output is this output's own earlier run, which
// its lock shows to be over.)
func othersJob(ctx context.Context, state *queue.State, spec *job.Spec) error {
	v, err := getRetried(ctx, state, specKey)
	if errors.Is(err, queue.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("job %s: %w", spec.Job, err)
	}
	var old job.Spec
	if json.Unmarshal(v, &old) != nil || old.Epoch == spec.Epoch || old.Out == spec.Out {
		return nil
	}
	who := "no coordinator holds it now"
	if l, age, err := state.Lease(ctx); err == nil {
		state := "live"
		if !queue.Live(age) {
			state = "expired"
		}
		who = fmt.Sprintf("its lease is held by %s writing %s (%s: refreshed %s ago)", l.Holder, l.Out, state, age.Round(time.Second))
	}
	return fmt.Errorf("%w: job %s has an unfinished run writing %s (epoch %s); %s. "+
		"Run that command again to resume it, or pass --overwrite to discard it and start this one",
		ErrJobBusy, spec.Job, old.Out, old.Epoch, who)
}

// putSpec stores the spec workers read; on failure it releases the lease.
func putSpec(ctx context.Context, state *queue.State, spec *job.Spec, lease *queue.Held) error {
	data, err := json.Marshal(spec)
	if err == nil {
		rctx, cancel := context.WithTimeout(ctx, startRetry)
		err = queue.Retry(rctx, func(ctx context.Context) error {
			if err := state.Put(ctx, specKey, data); err != nil && !queue.Transient(err) {
				return queue.Permanent(err)
			} else {
				return err
			}
		})
		cancel()
	}
	if err != nil {
		lease.Release()
		return fmt.Errorf("job %s: storing spec: %w", spec.Job, err)
	}
	return nil
}

// startRetry bounds how long a coordinator that is starting a job retries
// the job state's errors that time may mend: a JetStream cluster whose
// stream has no leader for a moment (a server just killed or restarted)
// answers "no responders".
const startRetry = time.Minute

// getRetried reads key of state, retrying transient errors (see
// queue.Transient) for up to startRetry; ErrNotFound is an answer.
func getRetried(ctx context.Context, state *queue.State, key string) ([]byte, error) {
	rctx, cancel := context.WithTimeout(ctx, startRetry)
	defer cancel()
	var v []byte
	err := queue.Retry(rctx, func(ctx context.Context) error {
		var err error
		v, err = state.Get(ctx, key)
		if err != nil && (errors.Is(err, queue.ErrNotFound) || !queue.Transient(err)) {
			return queue.Permanent(err)
		}
		return err
	})
	return v, err
}
