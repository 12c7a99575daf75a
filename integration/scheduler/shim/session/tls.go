package session

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Environment variables for TLS to a schedplug-host listening on TCP with
// --tls-cert/--tls-key (and --tls-client-ca for mutual TLS). See
// docs/security.md.
const (
	// EnvTLSCA is the CA bundle (PEM) that signed the host's certificate.
	// Setting it turns TLS on.
	EnvTLSCA = "SCHEDPLUG_TLS_CA"
	// EnvTLSCert and EnvTLSKey are the shim's client certificate and key
	// (PEM), for a host started with --tls-client-ca.
	EnvTLSCert = "SCHEDPLUG_TLS_CERT"
	EnvTLSKey  = "SCHEDPLUG_TLS_KEY"
	// EnvTLSServerName overrides the name checked in the host's
	// certificate (default: the host part of SCHEDPLUG_HOST).
	EnvTLSServerName = "SCHEDPLUG_TLS_SERVER_NAME"
)

// TLSConfig names the PEM files of a TLS connection to the host.
type TLSConfig struct {
	CAFile     string
	CertFile   string
	KeyFile    string
	ServerName string
}

// TLSFromEnv reads the SCHEDPLUG_TLS_* variables; nil when TLS is off.
func TLSFromEnv() (*TLSConfig, error) {
	c := &TLSConfig{
		CAFile:     os.Getenv(EnvTLSCA),
		CertFile:   os.Getenv(EnvTLSCert),
		KeyFile:    os.Getenv(EnvTLSKey),
		ServerName: os.Getenv(EnvTLSServerName),
	}
	if c.CAFile == "" {
		if c.CertFile != "" || c.KeyFile != "" || c.ServerName != "" {
			return nil, fmt.Errorf("%s, %s or %s is set but %s is not; set %s to the CA that signed the host's --tls-cert", EnvTLSCert, EnvTLSKey, EnvTLSServerName, EnvTLSCA, EnvTLSCA)
		}
		return nil, nil
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, fmt.Errorf("%s and %s go together: set both (the shim's client certificate and key, PEM) or neither", EnvTLSCert, EnvTLSKey)
	}
	return c, nil
}

// transportCredentials builds the gRPC credentials: TLS when c is set,
// plaintext otherwise (a unix socket, or a host run with --insecure-tcp).
func (c *TLSConfig) transportCredentials() (credentials.TransportCredentials, error) {
	if c == nil {
		return insecure.NewCredentials(), nil
	}
	pem, err := os.ReadFile(c.CAFile)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read the host's CA bundle: %w", EnvTLSCA, err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s=%s holds no PEM certificate; give the CA that signed the host's --tls-cert", EnvTLSCA, c.CAFile)
	}
	cfg := &tls.Config{RootCAs: roots, ServerName: c.ServerName, MinVersion: tls.VersionTLS12}
	if c.CertFile != "" {
		pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: cannot load the shim's client certificate: %w", EnvTLSCert, EnvTLSKey, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return credentials.NewTLS(cfg), nil
}
