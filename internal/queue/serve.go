package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/neardup/neardup/internal/transient"
)

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
