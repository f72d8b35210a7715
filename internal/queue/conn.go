package queue

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/neardup/neardup/internal/redact"
)

// Environment variables that give the defaults of --nats and --nats-creds.
const (
	EnvURL   = "NATS_URL"
	EnvCreds = "NATS_CREDS"
)

// ConnConfig is how a client reaches a NATS server: its URL, how it proves
// who it is (a credentials file or an NKey seed, or a user and password in
// the URL), how it checks the server (a CA file) and how long its first
// connection may take.
type ConnConfig struct {
	// URL is the server's URL, or several separated by commas.
	URL string
	// Creds is a credentials file (user JWT and NKey seed).
	Creds string
	// NKey is an NKey seed file.
	NKey string
	// TLSCA is a CA certificate file the server's certificate must chain to.
	TLSCA string
	// TLSCert and TLSKey are a client certificate and its key, for servers
	// that verify clients.
	TLSCert, TLSKey string
	// ConnectTimeout bounds the first connection; 0 waits forever. Once
	// connected, the client reconnects forever.
	ConnectTimeout time.Duration
}

// DefaultConnConfig is the connection setting used unless told otherwise.
func DefaultConnConfig() ConnConfig { return ConnConfig{ConnectTimeout: 30 * time.Second} }

// RegisterFlags registers the connection flags; urlUsage describes --nats.
// getenv (os.Getenv) gives the defaults of --nats and --nats-creds from
// NATS_URL and NATS_CREDS.
func (c *ConnConfig) RegisterFlags(fs *flag.FlagSet, urlUsage string, getenv func(string) string) {
	if v := getenv(EnvURL); v != "" {
		c.URL = v
	}
	if v := getenv(EnvCreds); v != "" {
		c.Creds = v
	}
	fs.StringVar(&c.URL, "nats", c.URL, urlUsage+" (default from $"+EnvURL+")")
	fs.StringVar(&c.Creds, "nats-creds", c.Creds, "NATS credentials file (user JWT and seed; default from $"+EnvCreds+")")
	fs.StringVar(&c.NKey, "nats-nkey", c.NKey, "NATS NKey seed file")
	fs.StringVar(&c.TLSCA, "nats-tls-ca", c.TLSCA, "CA certificate file that the NATS server's certificate must chain to")
	fs.StringVar(&c.TLSCert, "nats-tls-cert", c.TLSCert, "client certificate file for NATS (with --nats-tls-key)")
	fs.StringVar(&c.TLSKey, "nats-tls-key", c.TLSKey, "client key file for NATS (with --nats-tls-cert)")
	fs.DurationVar(&c.ConnectTimeout, "connect-timeout", c.ConnectTimeout, "give up when the first connection to NATS takes longer (0: wait forever)")
}

// Check reports a usage error in the setting: a file that cannot be read,
// a certificate without its key or with a key that is not its own, a
// negative timeout. It does not connect.
func (c ConnConfig) Check() error {
	if c.URL != "" {
		if _, err := parseServers(c.URL); err != nil {
			return err
		}
	}
	if c.ConnectTimeout < 0 {
		return fmt.Errorf("--connect-timeout %v: must not be negative", c.ConnectTimeout)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("--nats-tls-cert and --nats-tls-key go together")
	}
	if c.Creds != "" && c.NKey != "" {
		return errors.New("--nats-creds and --nats-nkey: give one of them")
	}
	for _, f := range []struct{ flag, path string }{
		{"--nats-creds", c.Creds}, {"--nats-nkey", c.NKey}, {"--nats-tls-ca", c.TLSCA},
		{"--nats-tls-cert", c.TLSCert}, {"--nats-tls-key", c.TLSKey},
	} {
		if f.path == "" {
			continue
		}
		fh, err := os.Open(f.path)
		if err != nil {
			return fmt.Errorf("%s: %w", f.flag, err)
		}
		fh.Close()
	}
	if c.TLSCert != "" {
		if _, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey); err != nil {
			return fmt.Errorf("--nats-tls-cert %s and --nats-tls-key %s: %w", c.TLSCert, c.TLSKey, err)
		}
	}
	return nil
}

// options are the nats.go options of the setting.
func (c ConnConfig) options() ([]nats.Option, error) {
	var opts []nats.Option
	if c.Creds != "" {
		opts = append(opts, nats.UserCredentials(c.Creds))
	}
	if c.NKey != "" {
		o, err := nats.NkeyOptionFromSeed(c.NKey)
		if err != nil {
			return nil, fmt.Errorf("--nats-nkey %s: %w", c.NKey, err)
		}
		opts = append(opts, o)
	}
	if c.TLSCA != "" {
		opts = append(opts, nats.RootCAs(c.TLSCA))
	}
	if c.TLSCert != "" {
		opts = append(opts, nats.ClientCert(c.TLSCert, c.TLSKey))
	}
	return opts, nil
}

// waitLogEvery is how often a client that cannot connect yet says so,
// after saying it at its first failure.
const waitLogEvery = 5 * time.Second

// dial connects to the NATS server of c. The first connection is retried
// (a server may be starting) until c.ConnectTimeout, except when the server
// refuses the client's credentials or the TLS handshake fails: no retry
// mends those. Once connected, the client reconnects forever, so that a
// restarted server does not end the job.
func dial(ctx context.Context, c ConnConfig, name string, log *slog.Logger) (*nats.Conn, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	server := redact.URL(c.URL)
	// A URL that cannot be parsed never will be: no retry, and an error
	// that does not quote it (nats.go's would, password and all).
	if _, err := parseServers(c.URL); err != nil {
		return nil, fmt.Errorf("queue: connect: %w", err)
	}
	opts, err := c.options()
	if err != nil {
		return nil, fmt.Errorf("queue: connect to %s: %w", server, err)
	}
	attemptTimeout := min(5*time.Second, max(c.ConnectTimeout, time.Second))
	dialer := &recordingDialer{d: net.Dialer{Timeout: attemptTimeout}}
	opts = append(opts,
		nats.Name(name),
		nats.Timeout(attemptTimeout),
		nats.SetCustomDialer(dialer),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(500*time.Millisecond),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("NATS connection lost; reconnecting", "nats", server, "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("NATS connection restored", "nats", redact.URL(nc.ConnectedUrl()))
		}),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			log.Error("NATS error", "nats", server, "err", err)
		}),
	)
	if c.ConnectTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.ConnectTimeout)
		defer cancel()
	}
	started := time.Now()
	var lastLog time.Time // the first failure is said at once
	for attempt := 1; ; attempt++ {
		nc, err := nats.Connect(c.URL, opts...)
		if err == nil {
			return nc, nil
		}
		if errors.Is(err, nats.ErrNoServers) {
			// nats.go hides why: "connection refused" and the like.
			if derr := dialer.lastErr(); derr != nil {
				err = fmt.Errorf("%w: %w", err, derr)
			}
		}
		err = fmt.Errorf("queue: connect to %s: %w", server, err)
		if !retryable(err) {
			return nil, err
		}
		if time.Since(lastLog) >= waitLogEvery {
			log.Info("waiting for the NATS server", "nats", server, "waited", time.Since(started).Round(time.Second), "err", err)
			lastLog = time.Now()
		}
		select {
		case <-ctx.Done():
			if c.ConnectTimeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("%w (gave up after --connect-timeout %v, %d attempts)", err, c.ConnectTimeout, attempt)
			}
			return nil, fmt.Errorf("%w (%w)", err, ctx.Err())
		case <-time.After(min(time.Duration(attempt)*200*time.Millisecond, time.Second)):
		}
	}
}

// recordingDialer dials like net.Dialer and remembers its last error,
// which nats.go reports only as "no servers available".
type recordingDialer struct {
	d   net.Dialer
	mu  sync.Mutex
	err error
}

// Dial dials address and records the error.
func (r *recordingDialer) Dial(network, address string) (net.Conn, error) {
	c, err := r.d.Dial(network, address)
	r.mu.Lock()
	r.err = err
	r.mu.Unlock()
	return c, err
}

func (r *recordingDialer) lastErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// retryable tells whether a failed first connection may succeed later (the
// server is not up yet) or never will (credentials refused, TLS failed on
// either side).
func retryable(err error) bool {
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var alert tls.AlertError
	var recordHeader tls.RecordHeaderError
	var op *net.OpError
	switch {
	case errors.As(err, &op) && op.Op == "remote error":
		// A TLS alert from the server (crypto/tls reports it so): it
		// refused the client's certificate, expired or missing.
		return false
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired),
		errors.Is(err, nats.ErrAuthRevoked), errors.Is(err, nats.ErrAccountAuthExpired),
		errors.Is(err, nats.ErrSecureConnRequired), errors.Is(err, nats.ErrSecureConnWanted),
		errors.Is(err, nats.ErrClientCertOrRootCAsRequired),
		errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &invalid),
		errors.As(err, &verify), errors.As(err, &alert), errors.As(err, &recordHeader):
		return false
	}
	return true
}

// parseServers parses a list of NATS server URLs, separated by commas,
// as nats.go reads it: each URL trimmed, nats:// when it names no scheme.
// Its error names --nats, the list redacted and what is wrong, and quotes
// no part of a password: a password must be percent-encoded, and one that
// is not (a "/", "#", "?", "%", "," or space in it) is never printed.
func parseServers(list string) ([]*url.URL, error) {
	parts := strings.Split(list, ",")
	var urls []*url.URL
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		// A piece of a URL cut at a comma in its password: the first
		// has no "@", the second no scheme.
		piece := len(parts) > 1 && (!strings.Contains(p, "@") || !strings.Contains(p, "://"))
		if !strings.Contains(p, "://") {
			p = "nats://" + p
		}
		which := fmt.Sprintf("--nats %s", redact.URL(list))
		if len(parts) > 1 {
			which += fmt.Sprintf(": server %d of %d", i+1, len(parts))
		}
		u, err := url.Parse(p)
		switch {
		case err != nil:
			why := redact.Problem(p, err)
			if piece {
				why += ` (a comma separates servers: write a comma in a password as %2C)`
			}
			return nil, fmt.Errorf("%s: %s", which, why)
		case u.Host == "":
			return nil, fmt.Errorf("%s: no host", which)
		}
		urls = append(urls, u)
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("--nats %q: no server URL", list)
	}
	return urls, nil
}
