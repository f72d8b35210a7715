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
)

// Embedded is an in-process NATS server with JetStream.
type Embedded struct {
	srv *server.Server
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
	return &Embedded{srv: srv}, nil
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
