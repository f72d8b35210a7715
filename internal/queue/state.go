package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrNotFound is returned by State.Get for a missing key; ErrExists by
// State.Create for a key that is already there.
var (
	ErrNotFound = errors.New("key not found")
	ErrExists   = errors.New("key exists")
)

// State is the state of one job: a key-value bucket of JetStream, keys
// matching [-/_=.a-zA-Z0-9]+.
type State struct {
	kv jetstream.KeyValue
	// What StoreFault asks the server: the connection, JetStream, and
	// the bucket's configuration as State set it.
	nc  *nats.Conn
	js  jetstream.JetStream
	cfg jetstream.KeyValueConfig
}

// State opens (creating if needed) the state of job.
func (q *Queue) State(ctx context.Context, job string) (*State, error) {
	bucket := "neardup-" + job
	what := "state bucket " + bucket
	var kv jetstream.KeyValue
	cfg := jetstream.KeyValueConfig{
		Bucket:   bucket,
		Storage:  jetstream.FileStorage,
		Replicas: q.cfg.replicas(),
	}
	err := Retry(ctx, func(ctx context.Context) error {
		// A bucket is the stream KV_<bucket>.
		if err := q.sameReplicas(ctx, "KV_"+bucket, what); err != nil {
			return err
		}
		var err error
		kv, err = q.js.CreateOrUpdateKeyValue(ctx, cfg)
		if err != nil {
			return createErr(what, q.cfg, err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("queue: state of job %s: %w", job, err)
	}
	return &State{kv: kv, nc: q.nc, js: q.js, cfg: cfg}, nil
}

// DeleteState removes the state of job.
func (q *Queue) DeleteState(ctx context.Context, job string) error {
	err := q.js.DeleteKeyValue(ctx, "neardup-"+job)
	if err != nil && !errors.Is(err, jetstream.ErrBucketNotFound) {
		return fmt.Errorf("queue: delete state of job %s: %w", job, err)
	}
	return nil
}

// Get returns the value of key, or an error wrapping ErrNotFound.
func (s *State) Get(ctx context.Context, key string) ([]byte, error) {
	e, err := s.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, fmt.Errorf("queue: %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("queue: get %s: %w", key, err)
	}
	return e.Value(), nil
}

// Put sets key to value.
func (s *State) Put(ctx context.Context, key string, value []byte) error {
	if _, err := s.kv.Put(ctx, key, value); err != nil {
		return fmt.Errorf("queue: put %s: %w", key, err)
	}
	return nil
}

// Create sets key to value unless it exists (an error wrapping ErrExists).
func (s *State) Create(ctx context.Context, key string, value []byte) error {
	_, err := s.kv.Create(ctx, key, value)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("queue: %s: %w", key, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("queue: create %s: %w", key, err)
	}
	return nil
}

// Delete removes key, retrying while the server is unreachable.
func (s *State) Delete(ctx context.Context, key string) error {
	return Retry(ctx, func(ctx context.Context) error { return s.kv.Delete(ctx, key) })
}

// DeletePrefix removes every key under prefix (ending in ".").
// It retries while the server is unreachable or recovering.
func (s *State) DeletePrefix(ctx context.Context, prefix string) error {
	var keys []string
	err := Retry(ctx, func(ctx context.Context) error {
		// Keys, unlike a lister, says when it could not list them all.
		all, err := s.kv.Keys(ctx)
		if errors.Is(err, jetstream.ErrNoKeysFound) {
			all, err = nil, nil
		}
		keys = slices.DeleteFunc(all, func(k string) bool { return !strings.HasPrefix(k, prefix) })
		return err
	})
	if err != nil {
		return fmt.Errorf("queue: list %s: %w", prefix, err)
	}
	for _, k := range keys {
		if err := s.Delete(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// Update is one key's new value, or the mark that the replay of what was
// there when Follow started is over (Replayed, with no key).
type Update struct {
	Key      string
	Value    []byte
	Replayed bool
}

// recheckEvery is how often Follow lists its keys again, in case a watch
// lost updates across a reconnect.
const recheckEvery = 10 * time.Second

// Follow sends the current value of every key under prefix (a key prefix
// ending in "."), then Replayed, then every later put, until ctx ends. It
// restarts the server's watch when it ends (a lost connection), and lists
// the keys every recheckEvery, so that no put is lost; a key may be sent
// more than once. Deletions are not sent.
func (s *State) Follow(ctx context.Context, prefix string) (<-chan Update, error) {
	watch := func() (jetstream.KeyWatcher, error) {
		var w jetstream.KeyWatcher
		err := Retry(ctx, func(rctx context.Context) error {
			var err error
			w, err = s.kv.Watch(context.WithoutCancel(rctx), prefix+">")
			if gone(err) {
				// The job's state is gone (another coordinator took the
				// job and finished it): no retry brings it back.
				return Permanent(err)
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("queue: follow %s: %w", prefix, err)
		}
		return w, nil
	}
	w, err := watch()
	if err != nil {
		return nil, err
	}
	out := make(chan Update)
	go func() {
		defer close(out)
		defer func() { w.Stop() }()
		send := func(u Update) bool {
			select {
			case out <- u:
				return true
			case <-ctx.Done():
				return false
			}
		}
		recheck := time.NewTicker(recheckEvery)
		defer recheck.Stop()
		replayed := false
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					w.Stop()
					again, err := watch()
					if err != nil {
						return // the reader sees the channel closed
					}
					w = again
					continue
				}
				if e == nil {
					if !replayed && !send(Update{Replayed: true}) {
						return
					}
					replayed = true
					continue
				}
				if e.Operation() != jetstream.KeyValuePut {
					continue
				}
				if !send(Update{Key: e.Key(), Value: e.Value()}) {
					return
				}
			case <-recheck.C:
				keys, err := s.kv.ListKeysFiltered(ctx, prefix+">")
				if gone(err) {
					return // the reader sees the channel closed
				}
				if err != nil {
					continue
				}
				for k := range keys.Keys() {
					if e, err := s.kv.Get(ctx, k); err == nil && !send(Update{Key: k, Value: e.Value()}) {
						return
					}
				}
			}
		}
	}()
	return out, nil
}

// gone reports whether err says that the job's state bucket is no more
// (another coordinator took the job over and ended it): following it
// cannot go on.
func gone(err error) bool {
	return errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, nats.ErrStreamNotFound)
}
