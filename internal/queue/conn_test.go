package queue

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/neardup/neardup/internal/nettest"
	"github.com/neardup/neardup/internal/redact"
	"github.com/neardup/neardup/internal/redact/redacttest"
)

// TestConnCheck checks the usage errors found before connecting.
func TestConnCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "present")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	tests := []struct {
		name    string
		c       ConnConfig
		wantErr string
	}{
		{"nothing", ConnConfig{}, ""},
		{"files present", ConnConfig{Creds: file, TLSCA: file}, ""},
		{"cert and key not PEM", ConnConfig{TLSCert: file, TLSKey: file}, "--nats-tls-cert"},
		{"missing CA", ConnConfig{TLSCA: missing}, "--nats-tls-ca"},
		{"missing creds", ConnConfig{Creds: missing}, "--nats-creds"},
		{"missing seed", ConnConfig{NKey: missing}, "--nats-nkey"},
		{"cert without key", ConnConfig{TLSCert: file}, "go together"},
		{"creds and nkey", ConnConfig{Creds: file, NKey: file}, "one of them"},
		{"negative timeout", ConnConfig{ConnectTimeout: -time.Second}, "negative"},
		{"a bad escape", ConnConfig{URL: "nats://u:p%zz@h:4222"}, `--nats nats://xxxxx@h:4222: its user or password holds a "%" not followed by two hex digits`},
		{"a / in the password", ConnConfig{URL: "nats://u:p/q@h:4222"}, `--nats nats://xxxxx@h:4222: its user or password holds "/", "?" or "#"`},
		{"a comma in the password", ConnConfig{URL: "nats://u:p,q@h:4222"}, "server 1 of 2: its port is not a number (a comma separates servers: write a comma in a password as %2C)"},
		{"no host", ConnConfig{URL: "nats://u:p@"}, "--nats nats://u:xxxxx@: no host"},
		{"a list", ConnConfig{URL: "nats://h1:4222, nats://u:p@h2:4222,h3"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Check()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Check() = %v, want an error saying %q", err, tt.wantErr)
			}
		})
	}
}

// TestConnFlagsFromEnv checks that NATS_URL and NATS_CREDS give the
// defaults and that flags override them.
func TestConnFlagsFromEnv(t *testing.T) {
	env := map[string]string{EnvURL: "nats://env:4222", EnvCreds: "/env.creds"}
	for _, tt := range []struct {
		args            []string
		wantURL, wantCr string
	}{
		{nil, "nats://env:4222", "/env.creds"},
		{[]string{"--nats", "nats://flag:4222", "--nats-creds", "/flag.creds"}, "nats://flag:4222", "/flag.creds"},
	} {
		c := DefaultConnConfig()
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		c.RegisterFlags(fs, "url", func(k string) string { return env[k] })
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		if c.URL != tt.wantURL || c.Creds != tt.wantCr || c.ConnectTimeout != 30*time.Second {
			t.Errorf("%v: got %+v", tt.args, c)
		}
	}
}

// TestConnectRefused checks that a port with nothing listening fails
// within the connect timeout, saying so.
func TestConnectRefused(t *testing.T) {
	addr := nettest.RefusedAddr(t)
	start := time.Now()
	_, err := Connect(context.Background(), ConnConfig{URL: "nats://u:hunter2@" + addr, ConnectTimeout: 1500 * time.Millisecond}, "test", DefaultConfig(), nil)
	if err == nil {
		t.Fatal("connected to nothing")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	if !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "connect-timeout") {
		t.Errorf("error does not say why: %v", err)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error shows the password: %v", err)
	}
}

// TestConnectHostilePasswords connects to a port nothing listens on, and
// to a list of two such ports, with URLs whose password holds each of
// redacttest.Hostile: the error never shows the password, and a URL that
// cannot be parsed fails at once, not after ConnectTimeout.
func TestConnectHostilePasswords(t *testing.T) {
	addr := nettest.RefusedAddr(t)
	for _, h := range redacttest.Hostile() {
		for _, url := range []string{"nats://" + h.Text + "@" + addr, "nats://127.0.0.1:1," + h.Text + "@" + addr} {
			t.Run(url, func(t *testing.T) {
				timeout, within := 300*time.Millisecond, 10*time.Second
				if h.Malformed {
					timeout, within = time.Minute, 2*time.Second
				}
				start := time.Now()
				_, err := Connect(context.Background(), ConnConfig{URL: url, ConnectTimeout: timeout}, "test", DefaultConfig(), nil)
				took := time.Since(start)
				if err == nil {
					t.Fatal("connected to nothing")
				}
				if s := redacttest.Shown(err.Error()); s != "" {
					t.Errorf("the error shows %q of the password: %v", s, err)
				}
				if took > within {
					t.Errorf("took %v, want at most %v (ConnectTimeout %v)", took.Round(time.Millisecond), within, timeout)
				}
				if h.Malformed && !strings.Contains(err.Error(), "--nats") {
					t.Errorf("the error does not name --nats: %v", err)
				}
			})
		}
	}
}

// TestSampleServerConfig starts a server from docs/nats-server.conf and
// checks that its users can run the queue and that a wrong password fails
// at once with an authorization error.
func TestSampleServerConfig(t *testing.T) {
	t.Setenv("NEARDUP_COORDINATOR_PASSWORD", "coord-pw")
	t.Setenv("NEARDUP_WORKER_PASSWORD", "worker-pw")
	opts, err := server.ProcessConfigFile(filepath.Join("..", "..", "docs", "nats-server.conf"))
	if err != nil {
		t.Fatal(err)
	}
	opts.Host, opts.Port = "127.0.0.1", server.RANDOM_PORT
	opts.StoreDir = t.TempDir()
	srv := runServer(t, opts)
	hostport := strings.TrimPrefix(srv.ClientURL(), "nats://")
	url := func(user, pw string) string { return "nats://" + user + ":" + pw + "@" + hostport }

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	qc := Config{AckWait: 5 * time.Second, MaxDeliver: 2}
	conn := func(user, pw string) ConnConfig {
		return ConnConfig{URL: url(user, pw), ConnectTimeout: 10 * time.Second}
	}

	start := time.Now()
	_, err = Connect(ctx, conn("worker", "wrong"), "test", qc, nil)
	if !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("wrong password: got %v, want an authorization violation", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("wrong password: failed after %v, not at once", d)
	}

	coord, err := Connect(ctx, conn("coordinator", "coord-pw"), "coordinator", qc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer coord.Close()
	state, err := coord.State(ctx, "sample")
	if err != nil {
		t.Fatal(err)
	}
	if err := state.Put(ctx, "spec", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if err := coord.Publish(ctx, "sample", "r1", "t1", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	worker, err := Connect(ctx, conn("worker", "worker-pw"), "worker", qc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer worker.Close()
	wstate, err := worker.State(ctx, "sample")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := wstate.Get(ctx, "spec"); err != nil || string(v) != "{}" {
		t.Fatalf("worker reads spec: %q, %v", v, err)
	}
	got := make(chan string, 1)
	sctx, stop := context.WithCancel(ctx)
	go worker.Serve(sctx, 1, func(ctx context.Context, d Delivery) error {
		if err := wstate.Put(ctx, "done", d.Data); err != nil {
			return err
		}
		got <- string(d.Data)
		return nil
	}, nil, nil)
	select {
	case s := <-got:
		if s != "hello" {
			t.Errorf("worker got %q", s)
		}
	case <-ctx.Done():
		t.Fatal("the worker got no task")
	}
	stop()
	pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
	defer pcancel()
	if err := worker.Publish(pctx, "sample", "r1", "forged", []byte("x")); err == nil {
		t.Error("a worker could publish a task")
	}
}

// TestConnectURLList checks that --nats takes several servers separated
// by commas: the client connects to one that is up whichever it tries
// first, and with none up the error names them all, without passwords.
func TestConnectURLList(t *testing.T) {
	srv, err := StartEmbedded(t.TempDir(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	down1, down2 := "nats://u:hunter2@"+nettest.RefusedAddr(t), "nats://u:hunter2@"+nettest.RefusedAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	q, err := Connect(ctx, ConnConfig{URL: down1 + ", " + srv.URL() + "," + down2, ConnectTimeout: 10 * time.Second}, "test", DefaultConfig(), nil)
	if err != nil {
		t.Fatalf("one server of three up: %v", err)
	}
	if got := q.nc.ConnectedUrl(); got != srv.URL() {
		t.Errorf("connected to %s, want %s", got, srv.URL())
	}
	q.Close()

	_, err = Connect(ctx, ConnConfig{URL: down1 + "," + down2, ConnectTimeout: 1500 * time.Millisecond}, "test", DefaultConfig(), nil)
	if err == nil {
		t.Fatal("connected to nothing")
	}
	for _, want := range []string{redact.URL(down1), redact.URL(down2), "connection refused"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error shows the password: %v", err)
	}
}
