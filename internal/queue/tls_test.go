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
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
	addr := srv.Addr().String()

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
