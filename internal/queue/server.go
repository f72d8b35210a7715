// Package queue carries neardup's tasks and job state on NATS JetStream: a
// work-queue stream with one durable pull consumer shared by every worker,
// and one key-value bucket per job.
package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Embedded is an in-process NATS server with JetStream.
type Embedded struct {
	srv      *server.Server
	storeDir string
	js       server.JetStreamConfig // as started: what Recover starts it with again
}

// StartEmbedded starts an in-process NATS server whose JetStream store is
// storeDir. With listen empty it opens no network port; otherwise it listens
// on listen (host:port, port 0 for any free port).
func StartEmbedded(storeDir, listen string) (*Embedded, error) {
	opts := &server.Options{
		JetStream:  true,
		StoreDir:   storeDir,
		DontListen: listen == "",
		NoSigs:     true,
		NoLog:      true,
		ServerName: "neardup-embedded",
	}
	if listen != "" {
		host, port, err := splitHostPort(listen)
		if err != nil {
			return nil, err
		}
		opts.Host, opts.Port = host, port
		if port == 0 {
			opts.Port = server.RANDOM_PORT
		}
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("queue: embedded NATS server: %w", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("queue: embedded NATS server in %s not ready after 30s", storeDir)
	}
	e := &Embedded{srv: srv, storeDir: storeDir}
	if c := srv.JetStreamConfig(); c != nil {
		e.js = *c
	}
	return e, nil
}

// StoreDir is the server's store directory.
func (e *Embedded) StoreDir() string { return e.storeDir }

// Recover enables JetStream again after the server turned it off, as it
// does when its store runs out of space (a full disk, even for a moment),
// after which every stream and bucket answers "insufficient resources"
// (503, 10023) for good. JetStream reloads its streams and buckets from
// the same store. Recover reports whether JetStream was off; an error
// says it could not be turned on again (the disk still full, say).
func (e *Embedded) Recover() (bool, error) {
	if e.srv.JetStreamEnabled() {
		return false, nil
	}
	// The server turns JetStream off in the background: wait for it to
	// be done before starting it again.
	for deadline := time.Now().Add(10 * time.Second); e.srv.JetStreamConfig() != nil; {
		if time.Now().After(deadline) {
			return true, fmt.Errorf("queue: JetStream on %s is still shutting down", e.storeDir)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cfg := e.js
	cfg.StoreDir = e.storeDir // EnableJetStream adds its "jetstream" folder again
	if err := e.srv.EnableJetStream(&cfg); err != nil {
		return true, fmt.Errorf("queue: enabling JetStream again on %s: %w", e.storeDir, err)
	}
	return true, nil
}

// Open opens the queue on a new in-process connection to the embedded
// server.
func (e *Embedded) Open(ctx context.Context, name string, cfg Config) (*Queue, error) {
	nc, err := nats.Connect("", nats.InProcessServer(e.srv), nats.Name(name))
	if err != nil {
		return nil, fmt.Errorf("queue: connect to embedded server: %w", err)
	}
	q, err := open(ctx, nc, cfg)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return q, nil
}

// URL is the server's client URL (meaningful only when it listens).
func (e *Embedded) URL() string { return e.srv.ClientURL() }

// Shutdown stops the server and waits for it.
func (e *Embedded) Shutdown() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}

// DropConsumer deletes the workers' consumer, for a server about to be
// shut down at the end of a finished job: a server shutting down with
// pull requests waiting on a consumer (workers' fetches) tells their
// clients and then sleeps 50 ms for the news to leave (nats-server's
// JetStream shutdown), which the job would otherwise wait out. Opening
// the queue creates the consumer again. Best effort, within half a
// second of ctx: if it fails, the shutdown only takes those 50 ms.
func (e *Embedded) DropConsumer(ctx context.Context) {
	nc, err := nats.Connect("", nats.InProcessServer(e.srv), nats.Name("neardup-shutdown"))
	if err != nil {
		return
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	_ = js.DeleteConsumer(ctx, StreamName, ConsumerName)
}

func splitHostPort(hp string) (string, int, error) {
	var host string
	var port int
	for i := len(hp) - 1; i >= 0; i-- {
		if hp[i] == ':' {
			host = hp[:i]
			if _, err := fmt.Sscanf(hp[i+1:], "%d", &port); err != nil {
				return "", 0, fmt.Errorf("queue: bad listen address %q: %w", hp, err)
			}
			return host, port, nil
		}
	}
	return "", 0, fmt.Errorf("queue: bad listen address %q: want host:port", hp)
}
