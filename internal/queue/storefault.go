package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/neardup/neardup/internal/redact"
)

// ErrStoreFailed is wrapped by the error of a NATS server that answers
// but does not store the job's state: its JetStream store cannot write
// (a full disk, say), or a stream of it stopped storing after a write
// error.
var ErrStoreFailed = errors.New("the NATS server's store failed")

// StoreFault tells why writes to the job's state fail, when the server is
// to blame: werr is the error of the last write, and failed says what
// could not be written ("for 1m0s", "when taking the coordinator lease").
// It returns nil when the server does not answer (the connection is
// down, or JetStream's API does not reply): a server away is waited for.
// When it answers, StoreFault returns an error wrapping ErrStoreFailed
// that names the server and the state's stream, with JetStream's own
// error, and what to do. That error is werr when the server answered the
// write with one (its limits reached: "insufficient resources"). A NATS
// server does not answer a write that its store failed (the client only
// sees it time out): JetStream's error is then the one it gives for
// rewriting the stream's configuration, which writes to its store (a full
// disk answers "no space left on device"), or for its account. When that
// rewrite succeeds, the error says so: the server stores nothing more on
// that stream after a write error, until it restarts.
func (s *State) StoreFault(ctx context.Context, failed string, werr error) error {
	if s.nc == nil || s.nc.Status() != nats.CONNECTED {
		return nil
	}
	url := redact.URL(s.nc.ConnectedUrl())
	if url == "" {
		url = "in this process"
	}
	where := fmt.Sprintf("server %s (%s) answers, but the job's state (stream KV_%s) could not be written %s",
		url, s.nc.ConnectedServerName(), s.cfg.Bucket, failed)
	if werr != nil && !answered(werr) {
		where += fmt.Sprintf(" (%v)", werr)
	}
	const resume = "then run the same command again to resume"
	if answered(werr) {
		return fmt.Errorf("%w: %s; JetStream's error: %v. Give the server's JetStream store room "+
			"(free space on its disk, or raise its limits: max_file_store, the account's), %s", ErrStoreFailed, where, werr, resume)
	}
	if _, err := s.js.AccountInfo(ctx); err != nil {
		if !answered(err) {
			return nil
		}
		return fmt.Errorf("%w: %s; JetStream's error for the account: %v. Mend the server, %s", ErrStoreFailed, where, err, resume)
	}
	if _, err := s.js.UpdateKeyValue(ctx, s.cfg); err != nil {
		what := "JetStream's error"
		if !answered(err) {
			what = "JetStream did not answer a rewrite of the stream's configuration"
		}
		return fmt.Errorf("%w: %s; %s: %v. Free space in the server's JetStream store "+
			"(and restart the server if it logged a \"critical write error\": such a stream stores nothing more until then), %s",
			ErrStoreFailed, where, what, err, resume)
	}
	return fmt.Errorf("%w: %s; JetStream rewrote the stream's configuration without error, so its store has room, "+
		"but a stream whose store failed a write (a full disk, if only for a moment) stores nothing more until the server restarts "+
		"(its log says \"critical write error\"): restart the server, %s", ErrStoreFailed, where, resume)
}

// answered tells whether err, from a JetStream request, is the server's
// answer (an API error, JetStream off) rather than no answer (a timeout,
// no responders, the connection closed).
func answered(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) || errors.Is(err, jetstream.ErrJetStreamNotEnabled) ||
		errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount)
}
