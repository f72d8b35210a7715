package queue

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/neardup/neardup/internal/redact"
	"github.com/neardup/neardup/internal/transient"
)

// Names of the shared work-queue stream and its consumer.
const (
	StreamName    = "NEARDUP_TASKS"
	ConsumerName  = "neardup-workers"
	subjectPrefix = "neardup.tasks"
)

// Config sets the delivery rules of the work queue.
type Config struct {
	// AckWait is how long a task may go without a heartbeat before it is
	// delivered to another worker.
	AckWait time.Duration
	// MaxDeliver is how many times a task is delivered before it fails.
	MaxDeliver int
	// TransientRetry is how long a delivery retries a task that fails
	// with a transient storage error (a full disk or quota, an I/O error,
	// a timeout), with back-off, before it counts as a failed delivery:
	// long enough to outlast a brief spell.
	TransientRetry time.Duration
	// Replicas is how many servers of a JetStream cluster keep the task
	// stream and every job's state bucket: 1 on a single server, 3 on a
	// cluster of three or more. 0 counts as 1.
	Replicas int
}

// RegisterFlags registers the delivery rules' flags. The coordinator and
// every worker must use the same values: each of them sets the shared
// consumer's rules when it opens the queue.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.DurationVar(&c.AckWait, "ack-wait", c.AckWait, "redeliver a task whose worker sent no heartbeat for this long (coordinator and workers: the same)")
	fs.IntVar(&c.MaxDeliver, "max-deliver", c.MaxDeliver, "deliveries of a task before it fails (coordinator and workers: the same)")
	fs.DurationVar(&c.TransientRetry, "transient-retry", c.TransientRetry, "how long a task failing with a transient storage error (full disk, I/O error, timeout) is retried with back-off before the delivery counts as failed")
	fs.IntVar(&c.Replicas, "replicas", c.Replicas, fmt.Sprintf("servers of a JetStream cluster that keep the task stream and the job state, 1 to %d (1 on a single server, 3 on a cluster of three; coordinator and workers: the same)", maxReplicas))
}

// DefaultConfig is the delivery rule used unless told otherwise.
func DefaultConfig() Config {
	return Config{AckWait: 30 * time.Second, MaxDeliver: 4, TransientRetry: 3 * time.Minute, Replicas: 1}
}

// maxReplicas is the most copies of a stream JetStream keeps.
const maxReplicas = 5

// Check reports a usage error in the rules: a replica count JetStream
// does not allow, a wait or a count that is not positive.
func (c Config) Check() error {
	switch {
	case c.Replicas < 1 || c.Replicas > maxReplicas:
		return fmt.Errorf("--replicas %d: must be 1 to %d", c.Replicas, maxReplicas)
	case c.AckWait <= 0:
		return fmt.Errorf("--ack-wait %v: must be positive", c.AckWait)
	case c.MaxDeliver < 1:
		return fmt.Errorf("--max-deliver %d: must be at least 1", c.MaxDeliver)
	case c.TransientRetry < 0:
		return fmt.Errorf("--transient-retry %v: must not be negative", c.TransientRetry)
	}
	return nil
}

// replicas is the replica count to create streams with.
func (c Config) replicas() int { return max(c.Replicas, 1) }

// errCodeReplicasNotSupported is the JetStream error of a stream with more
// than one replica on a server that is not part of a cluster.
const errCodeReplicasNotSupported jetstream.ErrorCode = 10074

// createErr explains the error of creating or updating a stream (what
// names it) with cfg. An error that no retry mends, a server that is not
// part of a cluster while replicas are asked for, is marked Permanent.
func createErr(what string, cfg Config, err error) error {
	var api *jetstream.APIError
	if errors.As(err, &api) && api.ErrorCode == errCodeReplicasNotSupported {
		return Permanent(fmt.Errorf("%s: --replicas %d needs a JetStream cluster of at least %d servers, and this server is not part of one (use --replicas 1): %w",
			what, cfg.replicas(), cfg.replicas(), err))
	}
	return fmt.Errorf("%s: %w", what, err)
}

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

// Delivery is one delivery of a task to a worker.
type Delivery struct {
	Data []byte
	// Attempt counts deliveries of this task, from 1.
	Attempt int
	// Final is true on the last delivery MaxDeliver allows.
	Final bool
}

// Handler runs one task. A nil error acknowledges it.
type Handler func(ctx context.Context, d Delivery) error

// FailureRecorder is told about a task that failed on its final delivery,
// before the task is removed from the queue. When it cannot record the
// failure it returns an error, and the task is not removed: it expires,
// and the server's max-deliveries advisory reports it instead (or, before
// its final delivery, it is delivered again).
type FailureRecorder func(ctx context.Context, d Delivery, err error) error

// Serve runs up to slots tasks at once until ctx ends. Each slot fetches one
// task only when it is free (no prefetch that could expire), sends
// heartbeats while the task runs, and acknowledges, hands back or fails it.
// When ctx ends, running tasks see their context cancelled and are handed
// back to the queue at once.
func (q *Queue) Serve(ctx context.Context, slots int, h Handler, fail FailureRecorder, log *slog.Logger) error {
	var wg sync.WaitGroup
	for i := 0; i < slots; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q.slot(ctx, h, fail, log)
		}()
	}
	wg.Wait()
	return nil
}

func (q *Queue) slot(ctx context.Context, h Handler, fail FailureRecorder, log *slog.Logger) {
	for ctx.Err() == nil {
		// One task per free slot, no prefetch; the pull ends at once when
		// ctx does, so a stopping worker does not linger.
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		batch, err := q.cons.Fetch(1, jetstream.FetchContext(fctx))
		if err != nil {
			cancel()
			if ctx.Err() == nil {
				log.Debug("fetch failed", "err", err)
				sleep(ctx, 500*time.Millisecond)
			}
			continue
		}
		msgs := batch.Messages()
	batch:
		for {
			select {
			case <-ctx.Done():
				// Stopping: a message that arrives now is not taken; it
				// returns to the queue after AckWait.
				break batch
			case msg, ok := <-msgs:
				if !ok {
					break batch
				}
				q.deliver(ctx, msg, h, fail, log)
			}
		}
		cancel()
		if err := batch.Error(); err != nil && ctx.Err() == nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
			log.Debug("fetch batch", "err", err)
			sleep(ctx, 500*time.Millisecond)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func (q *Queue) deliver(ctx context.Context, msg jetstream.Msg, h Handler, fail FailureRecorder, log *slog.Logger) {
	d := Delivery{Data: msg.Data(), Attempt: 1}
	if md, err := msg.Metadata(); err == nil {
		d.Attempt = int(md.NumDelivered)
	}
	d.Final = q.cfg.MaxDeliver > 0 && d.Attempt >= q.cfg.MaxDeliver

	tctx, cancel := context.WithCancel(ctx)
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		t := time.NewTicker(max(q.cfg.AckWait/3, 100*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-tctx.Done():
				return
			case <-t.C:
				if err := msg.InProgress(); err != nil {
					log.Debug("heartbeat failed", "err", err)
				}
			}
		}
	}()
	err := safeCall(tctx, h, d)
	// A transient storage error is retried in this delivery, heartbeats
	// going on, with back-off, for up to TransientRetry.
	for try, first := 0, time.Now(); err != nil && ctx.Err() == nil && Transient(err) && time.Since(first) < q.cfg.TransientRetry; try++ {
		delay := min(time.Second<<min(try, 5), 30*time.Second, q.cfg.TransientRetry-time.Since(first))
		log.Warn("transient failure; retrying the task", "attempt", d.Attempt, "err", err, "retry_in", delay.Round(time.Millisecond))
		sleep(ctx, delay)
		if ctx.Err() == nil {
			err = safeCall(tctx, h, d)
		}
	}
	cancel()
	<-hbDone

	switch {
	case err == nil:
		if aerr := msg.Ack(); aerr != nil {
			log.Warn("ack failed; the task may run again (its output is idempotent)", "err", aerr)
		}
	case ctx.Err() != nil:
		// Stopping: hand the task back so another worker takes it now.
		if nerr := msg.Nak(); nerr != nil {
			log.Warn("hand back failed; the task returns after AckWait", "err", nerr)
		}
	case d.Final || errors.As(err, new(permanent)):
		var ferr error
		if fail != nil {
			// Recording the failure outlives a stop, but not by more than
			// AckWait: with the server gone it cannot succeed anyway.
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(q.cfg.AckWait, time.Second))
			ferr = fail(fctx, d, err)
			cancel()
		}
		switch {
		case ferr == nil:
			if terr := msg.Term(); terr != nil {
				log.Warn("terminate failed", "err", terr)
			}
		case d.Final:
			// Not recorded: left to expire, so that the max-deliveries
			// advisory records it.
			log.Warn("could not record the task's failure; it is left to expire", "err", ferr)
		default:
			if nerr := msg.NakWithDelay(time.Duration(d.Attempt) * time.Second); nerr != nil {
				log.Warn("nak failed", "err", nerr)
			}
		}
	default:
		delay := time.Duration(d.Attempt) * time.Second
		log.Warn("task failed; it will be retried", "attempt", d.Attempt, "err", err, "retry_in", delay)
		if nerr := msg.NakWithDelay(delay); nerr != nil {
			log.Warn("nak failed", "err", nerr)
		}
	}
}

// natsTransient are the NATS client's errors that time may mend: the
// server is restarting, unreachable for now, or slow.
var natsTransient = [...]error{
	nats.ErrTimeout, nats.ErrNoResponders, nats.ErrNoServers, nats.ErrConnectionClosed,
	nats.ErrConnectionReconnecting, nats.ErrDisconnected, nats.ErrStaleConnection,
	jetstream.ErrNoHeartbeat, jetstream.ErrServerShutdown, jetstream.ErrNoStreamResponse,
}

// Transient reports whether err is one that time may mend: a storage or
// network error (see package transient: a full disk, a timeout, a
// connection refused or reset, an object store's HTTP 5xx or SlowDown), or
// NATS unreachable for now or answering 503 (JetStream unavailable). An
// error marked Permanent never is.
func Transient(err error) bool {
	if err == nil || errors.As(err, new(permanent)) {
		return false
	}
	if transient.Is(err) {
		return true
	}
	for _, e := range natsTransient {
		if errors.Is(err, e) {
			return true
		}
	}
	api, ok := errors.AsType[*jetstream.APIError](err)
	return ok && api.Code == 503
}

// safeCall runs h, turning a panic into an error.
func safeCall(ctx context.Context, h Handler, d Delivery) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("task panicked: %v", r)
		}
	}()
	return h(ctx, d)
}

// Exhausted is a task that the server stopped delivering after MaxDeliver
// deliveries without an acknowledgement (every worker that took it died or
// lost its connection), so no worker recorded its failure.
type Exhausted struct {
	Data       []byte
	Deliveries int
}

// WatchExhausted calls fn for every task that exhausts its deliveries, then
// deletes the task from the stream, until ctx ends.
func (q *Queue) WatchExhausted(ctx context.Context, fn func(Exhausted)) (func(), error) {
	subj := "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + StreamName + "." + ConsumerName
	sub, err := q.nc.Subscribe(subj, func(m *nats.Msg) {
		var adv struct {
			StreamSeq  uint64 `json:"stream_seq"`
			Deliveries int    `json:"deliveries"`
		}
		if json.Unmarshal(m.Data, &adv) != nil || adv.StreamSeq == 0 {
			return
		}
		raw, err := q.str.GetMsg(ctx, adv.StreamSeq)
		if err != nil {
			return
		}
		fn(Exhausted{Data: raw.Data, Deliveries: adv.Deliveries})
		q.str.DeleteMsg(ctx, adv.StreamSeq)
	})
	if err != nil {
		return nil, fmt.Errorf("queue: watch exhausted tasks: %w", err)
	}
	return func() { sub.Unsubscribe() }, nil
}
