package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/neardup/neardup/internal/redact"
)

// Names of the shared work-queue stream and its consumer.
const (
	StreamName    = "NEARDUP_TASKS"
	ConsumerName  = "neardup-workers"
	subjectPrefix = "neardup.tasks"
)

// sameReplicas checks that stream (which what describes), if it exists,
// has the replicas cfg asks for. A client does not scale a stream that
// others share: one worker started with another --replicas would change
// it for every job. The error says how to do it on purpose.
func (q *Queue) sameReplicas(ctx context.Context, stream, what string) error {
	str, err := q.js.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	have, want := max(str.CachedInfo().Config.Replicas, 1), q.cfg.replicas()
	if have == want {
		return nil
	}
	return Permanent(fmt.Errorf("%s has %d replica(s), but --replicas is %d: give every coordinator and worker --replicas %d, or change it on the server first (nats stream edit %s --replicas %d)",
		what, have, want, have, stream, want))
}

// permanent marks an error that no retry can mend.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent wraps err so that the task fails at once instead of being
// delivered again.
func Permanent(err error) error { return permanent{err} }

// Queue is the work queue and the job states on one connection to NATS.
type Queue struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	str  jetstream.Stream
	cons jetstream.Consumer
	cfg  Config
}

// Connect connects to the NATS server that c names and opens the queue on
// it. The first connection, and opening the queue, must succeed within
// c.ConnectTimeout; after that the client reconnects whenever the server
// goes away, so that a restarted server does not end a job. log hears of
// waiting, lost and restored connections.
func Connect(ctx context.Context, c ConnConfig, name string, cfg Config, log *slog.Logger) (*Queue, error) {
	if c.ConnectTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.ConnectTimeout)
		defer cancel()
	}
	nc, err := dial(ctx, c, name, log)
	if err != nil {
		return nil, err
	}
	q, err := open(ctx, nc, cfg)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("queue: on %s: %w", redact.URL(c.URL), err)
	}
	return q, nil
}

// Pending is how many tasks the queue holds, of every job: waiting to be
// delivered, or delivered and not yet acknowledged.
func (q *Queue) Pending(ctx context.Context) (int, error) {
	info, err := q.cons.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("queue: consumer %s: %w", ConsumerName, err)
	}
	return int(info.NumPending) + info.NumAckPending, nil
}

// Deliveries is how many deliveries of tasks (of every job) the queue's
// consumer has made to workers since it was created, and how many tasks
// workers hold now: delivered and not yet acknowledged.
func (q *Queue) Deliveries(ctx context.Context) (delivered uint64, held int, err error) {
	info, err := q.cons.Info(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("queue: consumer %s: %w", ConsumerName, err)
	}
	return info.Delivered.Consumer, info.NumAckPending, nil
}

// Close closes the queue's connection.
func (q *Queue) Close() { q.nc.Close() }

// open creates (or binds to) the work-queue stream and its shared durable
// consumer on nc, which the queue then owns. It retries while a JetStream
// cluster has no leader yet.
func open(ctx context.Context, nc *nats.Conn, cfg Config) (*Queue, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	q := &Queue{nc: nc, js: js, cfg: cfg}
	what := "stream " + StreamName
	err = Retry(ctx, func(ctx context.Context) error {
		if err := q.sameReplicas(ctx, StreamName, what); err != nil {
			return err
		}
		str, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:      StreamName,
			Subjects:  []string{subjectPrefix + ".>"},
			Retention: jetstream.WorkQueuePolicy,
			Storage:   jetstream.FileStorage,
			Replicas:  cfg.replicas(),
		})
		if err != nil {
			return createErr(what, cfg, err)
		}
		cons, err := str.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
			Durable:       ConsumerName,
			AckPolicy:     jetstream.AckExplicitPolicy,
			AckWait:       cfg.AckWait,
			MaxDeliver:    cfg.MaxDeliver,
			MaxAckPending: -1,
		})
		if err != nil {
			return fmt.Errorf("consumer %s: %w", ConsumerName, err)
		}
		q.str, q.cons = str, cons
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	return q, nil
}

// Retry calls fn with short deadlines until it succeeds or ctx ends: the
// way to reach a server that may be restarting or electing a leader. An
// error that fn marks with Permanent ends it at once; Retry returns the
// error Permanent wrapped.
func Retry(ctx context.Context, fn func(context.Context) error) error {
	var last error
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := fn(actx)
		cancel()
		if err == nil {
			return nil
		}
		if p, ok := errors.AsType[permanent](err); ok {
			return p.err
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), last)
		case <-time.After(min(time.Duration(attempt+1)*200*time.Millisecond, 2*time.Second)):
		}
	}
}

// subject is where the tasks of one run of a job are published. A run
// is one life of a job's state (its epoch): a coordinator purges only its
// own run's tasks, never those of another coordinator that took the job
// over while it was cut off.
func subject(job, run string) string { return subjectPrefix + "." + job + "." + run }

// Publish puts one task of a job's run on the queue. id names the task
// for the server's duplicate window, so that a re-publish soon after is
// dropped.
func (q *Queue) Publish(ctx context.Context, job, run, id string, data []byte) error {
	return Retry(ctx, func(ctx context.Context) error {
		_, err := q.js.Publish(ctx, subject(job, run), data, jetstream.WithMsgID(job+"."+run+"."+id))
		return err
	})
}

// Purge removes every queued task of a job's run.
func (q *Queue) Purge(ctx context.Context, job, run string) error {
	return Retry(ctx, func(ctx context.Context) error {
		return q.str.Purge(ctx, jetstream.WithPurgeSubject(subject(job, run)))
	})
}
