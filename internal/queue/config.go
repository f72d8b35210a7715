package queue

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
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
