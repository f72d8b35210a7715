package control

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// workerActivity shows whether workers take tasks: what the queue's
// consumer delivered and what workers hold.
type workerActivity interface {
	// Deliveries is how many deliveries of tasks the queue made to
	// workers so far, and how many tasks workers hold now.
	Deliveries(ctx context.Context) (delivered uint64, held int, err error)
}

// DefaultNoWorkerWarning is how long a stage waits with no worker taking
// its tasks before the coordinator warns, unless told otherwise
// (Config.NoWorkerWarning).
const DefaultNoWorkerWarning = 30 * time.Second

// idleWatch warns while a stage's tasks wait and no worker takes any: no
// task finished, none delivered, none held, for after (then again every
// after for as long as it lasts).
type idleWatch struct {
	after time.Duration  // 0: never warn
	src   workerActivity // nil: only finished tasks show workers
	nats  string         // the URL workers connect to, for the warning; "" for in-process workers only
	log   *slog.Logger
}

// watch watches the stage named stage until ctx ends; finished counts its
// finished tasks, waiting tells how many it still waits for.
func (w idleWatch) watch(ctx context.Context, stage string, finished *atomic.Int64, waiting func() int) {
	if w.after <= 0 {
		return
	}
	tick := min(max(w.after/5, 10*time.Millisecond), 5*time.Second)
	t := time.NewTicker(tick)
	defer t.Stop()
	last := time.Now() // of the last sign of a worker
	warnAt := last.Add(w.after)
	var seenDone int64
	var seenDelivered uint64
	first := true
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		active := false
		if n := finished.Load(); n != seenDone {
			seenDone, active = n, true
		}
		if w.src != nil {
			delivered, held, err := w.src.Deliveries(ctx)
			switch {
			case err != nil:
				w.log.Debug("reading the queue's deliveries", "err", err)
			case held > 0 || (!first && delivered != seenDelivered):
				active = true
			}
			if err == nil {
				seenDelivered, first = delivered, false
			}
		}
		if active {
			last, warnAt = now, now.Add(w.after)
		}
		if idle := now.Sub(last); !now.Before(warnAt) {
			unit := time.Second
			if idle < time.Second {
				unit = time.Millisecond
			}
			attrs := []any{"idle", idle.Round(unit).String(), "stage", metricStage(stage), "tasks_waiting", waiting()}
			if w.nats != "" {
				attrs = append(attrs, "nats", w.nats, "hint", "start workers with: worker --nats "+w.nats)
			}
			w.log.Warn("no worker has taken a task", attrs...)
			warnAt = now.Add(w.after) // again after another w.after
		}
	}
}
