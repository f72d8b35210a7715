package queue

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string // its certificate, PEM
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), name+".pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, file: file}
}

// serverCert issues a certificate for 127.0.0.1.
func (ca *testCA) serverCert(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "nats"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// runServer runs a NATS server with opts until the test ends.
func runServer(t *testing.T, opts *server.Options) *server.Server {
	t.Helper()
	opts.NoSigs, opts.NoLog = true, true
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	return srv
}

// TestConnectTLS runs a NATS server with a certificate from a private CA:
// a client given that CA with --nats-tls-ca connects; a client that trusts
// only the system's CAs, or another CA, fails at once (not after the
// connect timeout) with the TLS error.
func TestConnectTLS(t *testing.T) {
	ca := newTestCA(t, "neardup-test-ca")
	opts := &server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true, NoLog: true,
		JetStream: true, StoreDir: t.TempDir(),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{ca.serverCert(t)}, MinVersion: tls.VersionTLS12},
		TLS:       true, TLSTimeout: 2,
	}
	addr := runServer(t, opts).Addr().String()

	tests := []struct {
		name    string
		ca      string
		wantErr string // "" to connect
	}{
		{name: "the server's CA", ca: ca.file},
		{name: "system CAs only", wantErr: "certificate signed by unknown authority"},
		{name: "another CA", ca: newTestCA(t, "other-ca").file, wantErr: "certificate signed by unknown authority"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			cc := ConnConfig{URL: "tls://" + addr, TLSCA: tt.ca, ConnectTimeout: 20 * time.Second}
			q, err := Connect(context.Background(), cc, "test", DefaultConfig(), nil)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("connecting with the server's CA: %v", err)
				}
				defer q.Close()
				if _, err := q.State(context.Background(), "tls"); err != nil {
					t.Fatalf("using the queue over TLS: %v", err)
				}
				return
			}
			if err == nil {
				q.Close()
				t.Fatal("connected to a server whose certificate the client cannot verify")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not say %q", err, tt.wantErr)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("failed after %v; a TLS error is final and should fail at once", d)
			}
		})
	}
}

// clientCert issues a client certificate valid from notBefore to notAfter
// and writes it and its key to PEM files.
func (ca *testCA) clientCert(t *testing.T, notBefore, notAfter time.Time) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "worker"},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "client.pem"), filepath.Join(dir, "client-key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestConnectClientCert runs a NATS server on 127.0.0.1 that verifies
// client certificates: a client with a valid certificate connects; one
// with an expired certificate, or none, fails at once (not after
// --connect-timeout) with the TLS error; a certificate whose key is not
// its own is a usage error of Check, before any connection.
func TestConnectClientCert(t *testing.T) {
	ca := newTestCA(t, "neardup-test-ca")
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	opts := &server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true, NoLog: true,
		JetStream: true, StoreDir: t.TempDir(),
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{ca.serverCert(t)}, MinVersion: tls.VersionTLS12,
			ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool,
		},
		TLS: true, TLSVerify: true, TLSTimeout: 2,
	}
	addr := runServer(t, opts).Addr().String()

	now := time.Now()
	validCert, validKey := ca.clientCert(t, now.Add(-time.Hour), now.Add(time.Hour))
	expiredCert, expiredKey := ca.clientCert(t, now.Add(-2*time.Hour), now.Add(-time.Hour))
	tests := []struct {
		name       string
		cert, key  string
		wantCheck  string // a usage error of Check
		wantErr    string // "" to connect
		wantErrAlt string // or this
	}{
		{name: "valid", cert: validCert, key: validKey},
		{name: "expired", cert: expiredCert, key: expiredKey, wantErr: "expired certificate", wantErrAlt: "bad certificate"},
		{name: "none", wantErr: "certificate required", wantErrAlt: "bad certificate"},
		{name: "key of another certificate", cert: validCert, key: expiredKey, wantCheck: "does not match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			cc := ConnConfig{URL: "tls://" + addr, TLSCA: ca.file, TLSCert: tt.cert, TLSKey: tt.key, ConnectTimeout: 20 * time.Second}
			err := cc.Check()
			if tt.wantCheck != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantCheck) || !strings.Contains(err.Error(), "--nats-tls-key") {
					t.Fatalf("Check() = %v, want a usage error naming --nats-tls-key and saying %q", err, tt.wantCheck)
				}
				return
			}
			if err != nil {
				t.Fatalf("Check() = %v", err)
			}
			q, err := Connect(context.Background(), cc, "test", DefaultConfig(), nil)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("connecting with a valid client certificate: %v", err)
				}
				q.Close()
				return
			}
			if err == nil {
				q.Close()
				t.Fatal("connected without a valid client certificate")
			}
			if !strings.Contains(err.Error(), tt.wantErr) && !strings.Contains(err.Error(), tt.wantErrAlt) {
				t.Errorf("error %q does not say %q", err, tt.wantErr)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("failed after %v; a TLS error is final and should fail at once", d)
			}
		})
	}
}
