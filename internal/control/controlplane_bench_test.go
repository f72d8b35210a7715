package control

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/stages"
	"github.com/neardup/neardup/internal/stagetest"
	"github.com/neardup/neardup/internal/storage"
)

// BenchmarkControlPlaneNATS drives the job of the stages package's
// BenchmarkControlPlane (many chunks and partitions, made-up task results
// of the real tasks' shape) through the coordinator's own Execute on an
// embedded NATS server: the coordinator publishes every task on the
// stream, workers (queue.Serve, 4 slots) take them, make up their
// results, store them as workers do (storeResult, a file past 256 KiB)
// and put them in the job's bucket, which the coordinator follows. It
// reports, per stage, the task messages published and their bytes, the
// bucket's messages and bytes added (as the server stores them, KV_
// stream), and the stream's bytes at the end (a work queue: acknowledged
// tasks are removed). RSS is not reported here: the server shares the
// process (BenchmarkControlPlane measures the coordinator alone).
//
//	go test -run '^$' -bench 'BenchmarkControlPlaneNATS/2300x4096' -benchtime 1x -timeout 60m ./internal/control/
func BenchmarkControlPlaneNATS(b *testing.B) { stagetest.RunSizes(b, benchControlPlaneNATS) }

func benchControlPlaneNATS(b *testing.B, chunks, parts int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := b.TempDir()
	st, err := storage.NewDir(filepath.Join(dir, "out"))
	if err != nil {
		b.Fatal(err)
	}
	fab := &stagetest.Fabricator{FS: st, Chunks: chunks, Parts: parts}
	spec, plan, err := fab.Job(st.Root())
	if err != nil {
		b.Fatal(err)
	}
	srv, err := queue.StartEmbedded(filepath.Join(dir, "nats"), "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Shutdown) // after the queues close (cleanups run last first)
	// A connection's queue and the job's state on it, closed at the end.
	open := func(name string) (*queue.Queue, *queue.State) {
		q, err := srv.Open(ctx, name, queue.DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(q.Close)
		state, err := q.State(ctx, spec.Job)
		if err != nil {
			b.Fatal(err)
		}
		return q, state
	}
	q, state := open("coordinator")
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}

	// The workers: each task's made-up result stored as a worker stores
	// a real one.
	wq, wstate := open("workers")
	counts := map[string]int{} // tasks of each stage (or cluster step), for the fabricator's n
	var countsMu sync.Mutex
	work := func(ctx context.Context, d queue.Delivery) error {
		var t Task
		if err := json.Unmarshal(d.Data, &t); err != nil {
			return queue.Permanent(err)
		}
		countsMu.Lock()
		n := counts[t.Stage]
		countsMu.Unlock()
		r, err := fab.Result(ctx, t.Stage, t.Index, n)
		if err != nil {
			return queue.Permanent(err)
		}
		data, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if data, err = storeResult(ctx, st, t, data, sideResultBytes); err != nil {
			return err
		}
		return wstate.Put(ctx, doneKey(t.Epoch, t.Stage, t.Index), data)
	}
	wctx, stopWorkers := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() {
		defer close(served)
		wq.Serve(wctx, 4, work, func(context.Context, queue.Delivery, error) error { return nil }, slog.New(slog.DiscardHandler))
	}()
	defer func() { stopWorkers(); <-served }()

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pub := &countingQueue{taskQueue: q}
	c := &coordinator{log: log, st: st, q: pub, state: state, reset: state, spec: spec, plan: plan, fs: st,
		prog: newProgress(nil, false, nil), life: "l1"}
	j := &stage.Job{Spec: spec, Plan: plan, Out: st, FS: st, Manifest: stage.NewManifest(spec, plan, time.Now(), nil), Log: log}
	meter := &natsMeter{js: js, pub: pub, kv: "KV_neardup-" + spec.Job}
	ex := &meteredExecutor{coordinator: c, meter: meter, counts: counts, mu: &countsMu}
	t0 := time.Now()
	if err := stage.Drive(ctx, j, stages.Of(spec), ex); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(time.Since(t0).Seconds(), "s")
	var msgs, msgBytes, kvMsgs, kvBytes int64
	for _, name := range meter.order {
		s := meter.stages[name]
		msgs, msgBytes, kvMsgs, kvBytes = msgs+s.msgs, msgBytes+s.msgBytes, kvMsgs+s.kvMsgs, kvBytes+s.kvBytes
		b.Logf("%s: %d task messages, %.2f MiB published; bucket +%d messages, +%.2f MiB stored; stream %d bytes held at its end",
			name, s.msgs, float64(s.msgBytes)/(1<<20), s.kvMsgs, float64(s.kvBytes)/(1<<20), s.streamBytes)
	}
	b.ReportMetric(float64(msgs), "task-messages")
	b.ReportMetric(float64(msgBytes)/(1<<20), "published-MiB")
	b.ReportMetric(float64(kvBytes)/(1<<20), "bucket-MiB")
	if j.Clusters == nil || j.Manifest.Counts.Candidates == 0 {
		b.Fatalf("the job did not get through its stages: %+v", j.Manifest.Counts)
	}
	if kvMsgs < msgs {
		b.Fatalf("the bucket gained %d messages for %d tasks", kvMsgs, msgs)
	}
}

// countingQueue counts the task messages the coordinator publishes.
type countingQueue struct {
	taskQueue
	mu          sync.Mutex
	msgs, bytes int64
}

func (q *countingQueue) Publish(ctx context.Context, job, run, id string, data []byte) error {
	q.mu.Lock()
	q.msgs++
	q.bytes += int64(len(data))
	q.mu.Unlock()
	return q.taskQueue.Publish(ctx, job, run, id, data)
}

// meteredExecutor runs each stage through the coordinator and notes what
// it put on NATS.
type meteredExecutor struct {
	*coordinator
	meter  *natsMeter
	counts map[string]int
	mu     *sync.Mutex
}

func (e *meteredExecutor) Execute(ctx context.Context, s stage.Stage, indices []int) (*stage.Outcome, error) {
	e.mu.Lock()
	e.counts[s.Name] = len(indices)
	e.mu.Unlock()
	name, _, _ := strings.Cut(s.Name, "-")
	before, err := e.meter.read(ctx)
	if err != nil {
		return nil, err
	}
	out, err := e.coordinator.Execute(ctx, s, indices)
	if err != nil {
		return nil, err
	}
	after, err := e.meter.read(ctx)
	if err != nil {
		return nil, err
	}
	e.meter.add(name, before, after)
	return out, nil
}

// natsMeter reads what the server holds and what was published.
type natsMeter struct {
	js     jetstream.JetStream
	pub    *countingQueue
	kv     string
	order  []string
	stages map[string]*natsUse
}

// natsUse is what a stage put on NATS.
type natsUse struct {
	msgs, msgBytes, kvMsgs, kvBytes int64
	streamBytes                     uint64
}

// natsReading is the counters at one moment.
type natsReading struct {
	msgs, msgBytes, kvMsgs, kvBytes int64
	streamBytes                     uint64
}

func (m *natsMeter) read(ctx context.Context) (natsReading, error) {
	var r natsReading
	m.pub.mu.Lock()
	r.msgs, r.msgBytes = m.pub.msgs, m.pub.bytes
	m.pub.mu.Unlock()
	kv, err := m.js.Stream(ctx, m.kv)
	if err != nil {
		return r, err
	}
	ki, err := kv.Info(ctx)
	if err != nil {
		return r, err
	}
	// The bucket keeps every key: its last sequence counts the puts,
	// its bytes what it stores.
	r.kvMsgs, r.kvBytes = int64(ki.State.LastSeq), int64(ki.State.Bytes)
	tasks, err := m.js.Stream(ctx, queue.StreamName)
	if err != nil {
		return r, err
	}
	ti, err := tasks.Info(ctx)
	if err != nil {
		return r, err
	}
	r.streamBytes = ti.State.Bytes
	return r, nil
}

func (m *natsMeter) add(name string, before, after natsReading) {
	if m.stages == nil {
		m.stages = map[string]*natsUse{}
	}
	u, ok := m.stages[name]
	if !ok {
		u = &natsUse{}
		m.stages[name] = u
		m.order = append(m.order, name)
	}
	u.msgs += after.msgs - before.msgs
	u.msgBytes += after.msgBytes - before.msgBytes
	u.kvMsgs += after.kvMsgs - before.kvMsgs
	u.kvBytes += after.kvBytes - before.kvBytes
	u.streamBytes = after.streamBytes
}
