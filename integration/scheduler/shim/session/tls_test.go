package session

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/klog/v2"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/testbed/testenv"
)

// testPKI writes a throw-away CA, a server certificate for 127.0.0.1 and a
// client certificate (PEM) into dir. Generated per test, never committed.
func testPKI(t *testing.T, dir string) {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(name, kind string, der []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	caKey := newKey()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "schedplug-test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	write("ca.crt", "CERTIFICATE", caDER)
	for i, who := range []string{"server", "client"} {
		key := newKey()
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(int64(i + 2)), Subject: pkix.Name{CommonName: "schedplug-test-" + who},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature,
		}
		if who == "server" {
			tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		} else {
			tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		write(who+".crt", "CERTIFICATE", der)
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		write(who+".key", "EC PRIVATE KEY", keyDER)
	}
}

// TestMutualTLSToRealHost starts schedplug-host on TCP with mutual TLS and
// connects the shim with the matching SCHEDPLUG_TLS_* settings; without a
// client certificate the host lets it in no further than the TLS
// handshake.
func TestMutualTLSToRealHost(t *testing.T) {
	bin, err := testenv.HostBinary()
	if err != nil {
		t.Fatal(err)
	}
	plugins, err := testenv.PluginDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	testPKI(t, dir)
	config := filepath.Join(dir, "scheduler-config.yaml")
	if err := os.WriteFile(config, []byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: tls-scheduler
    plugins:
      filter:
        enabled:
          - name: HwEncrypt
`), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	host := testenv.NewProcess("schedplug-host", filepath.Join(dir, "host.log"), bin, []string{
		"--config", config, "--plugins", plugins, "--listen", addr,
		"--tls-cert", filepath.Join(dir, "server.crt"), "--tls-key", filepath.Join(dir, "server.key"),
		"--tls-client-ca", filepath.Join(dir, "ca.crt"),
	}, nil)
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	defer host.Stop(10 * time.Second)
	for {
		if !host.Running() {
			t.Fatalf("schedplug-host exited: %v\n%s", host.ExitError(), host.LogTail(30))
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	request := func(context.Context) *pb.HandshakeRequest {
		return &pb.HandshakeRequest{ProtocolVersion: pb.ProtocolVersion_PROTOCOL_VERSION_1, ClientId: t.Name(),
			Profiles: []*pb.ProfilePlugins{{SchedulerName: "tls-scheduler", Plugins: []string{"HwEncrypt"}}}}
	}
	connect := func(tlsConfig *TLSConfig) bool {
		c, err := NewClient(Config{Target: addr, TLS: tlsConfig, ConnectTimeout: 2 * time.Second}, Hooks{Request: request})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return c.Current() != nil
	}
	t.Setenv(EnvTLSCA, filepath.Join(dir, "ca.crt"))
	t.Setenv(EnvTLSCert, filepath.Join(dir, "client.crt"))
	t.Setenv(EnvTLSKey, filepath.Join(dir, "client.key"))
	tlsConfig, err := TLSFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if !connect(tlsConfig) {
		t.Errorf("the shim with the client certificate did not connect; host log:\n%s", host.LogTail(20))
	}
	if connect(&TLSConfig{CAFile: filepath.Join(dir, "ca.crt")}) {
		t.Error("the shim without a client certificate connected to a host run with --tls-client-ca")
	}
	if connect(nil) {
		t.Error("a plaintext shim connected to a TLS host")
	}
}

func TestTLSFromEnvExplainsMistakes(t *testing.T) {
	t.Setenv(EnvTLSCert, "/x.crt")
	if _, err := TLSFromEnv(); err == nil {
		t.Error("a client certificate without a CA was accepted")
	}
	t.Setenv(EnvTLSCA, "/ca.crt")
	_, err := TLSFromEnv()
	if err == nil || !strings.Contains(err.Error(), EnvTLSKey) {
		t.Errorf("a certificate without its key: %v", err)
	}
	t.Setenv(EnvTLSKey, "/x.key")
	c, err := TLSFromEnv()
	if err != nil || c == nil || c.CAFile != "/ca.crt" {
		t.Errorf("full settings: %+v %v", c, err)
	}
}

// A shim that dials a host on TCP without TLS says so once, at start, with
// what turns TLS on; over a unix socket or TLS it says nothing of it.
func TestPlaintextTCPIsWarnedOnceAtStart(t *testing.T) {
	dir := t.TempDir()
	testPKI(t, dir)
	request := func(context.Context) *pb.HandshakeRequest {
		return &pb.HandshakeRequest{ProtocolVersion: pb.ProtocolVersion_PROTOCOL_VERSION_1, ClientId: t.Name()}
	}
	for _, c := range []struct {
		target string
		tls    *TLSConfig
		warn   bool
	}{
		{"127.0.0.1:1", nil, true},
		{"dns:///localhost:1", nil, true},
		{"unix://" + filepath.Join(dir, "host.sock"), nil, false},
		{"127.0.0.1:1", &TLSConfig{CAFile: filepath.Join(dir, "ca.crt")}, false},
	} {
		var mu sync.Mutex
		var lines []string
		logger := funcr.New(func(prefix, args string) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, args)
		}, funcr.Options{})
		client, err := NewClient(Config{Target: c.target, TLS: c.tls, ConnectTimeout: 100 * time.Millisecond}, Hooks{Request: request})
		if err != nil {
			t.Fatal(err)
		}
		if err := client.Start(klog.NewContext(context.Background(), logger)); err != nil {
			t.Fatal(err)
		}
		client.Close()
		mu.Lock()
		var warnings []string
		for _, l := range lines {
			if strings.Contains(l, "plaintext") {
				warnings = append(warnings, l)
			}
		}
		mu.Unlock()
		switch {
		case c.warn && len(warnings) != 1:
			t.Errorf("target %s without TLS: %d plaintext warnings, want 1; the log:\n%s", c.target, len(warnings), strings.Join(lines, "\n"))
		case c.warn && !strings.Contains(warnings[0], EnvTLSCA) || c.warn && !strings.Contains(warnings[0], "docs/security.md"):
			t.Errorf("the warning does not say how to turn TLS on (%s, docs/security.md): %s", EnvTLSCA, warnings[0])
		case !c.warn && len(warnings) != 0:
			t.Errorf("target %s (TLS %v) warned of plaintext: %v", c.target, c.tls != nil, warnings)
		}
	}
}
