// Package session is the shim's connection to schedplug-host: dialing
// (unix socket or TCP with TLS), the Handshake, reconnecting, the session
// the Handshake opens and the watch that tells at once when it ends, and
// the calls a scheduling cycle makes, over gRPC or the host's fast-path
// socket.
package session

import (
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
)

// Config configures the connection to schedplug-host.
type Config struct {
	// Target is the gRPC address, e.g. unix:///run/schedplug/host.sock.
	Target string
	// ConnectTimeout is how long scheduler start waits for a host that is
	// not up yet before it carries on with the failure policies.
	ConnectTimeout time.Duration
	// ResyncTimeout bounds a Handshake and a full node-table upload.
	ResyncTimeout time.Duration
	// ClientID names this scheduler in the host's logs.
	ClientID string
	// TLS, when set, connects with TLS (tls.go); nil is plaintext.
	TLS *TLSConfig
	// DialOptions are added to the gRPC client's own options.
	DialOptions []grpc.DialOption
	// DisableFastPath makes every call over gRPC even when the host offers
	// its fast-path socket (fastpath.go).
	DisableFastPath bool
	// FastPathSpin is how long a cycle polls for a fast-path answer before
	// it sleeps (0: DefaultFastPathSpin).
	FastPathSpin time.Duration
	// OnFastCall, when set, is told of every call made over the fast path.
	OnFastCall func(FastCall)
}

// Defaults of Config.
const (
	DefaultTarget         = "unix:///run/schedplug/host.sock"
	DefaultConnectTimeout = 30 * time.Second
	DefaultResyncTimeout  = 5 * time.Second
	reconnectMinBackoff   = 200 * time.Millisecond
	reconnectMaxBackoff   = 5 * time.Second
)

func (c Config) withDefaults() Config {
	if c.Target == "" {
		c.Target = DefaultTarget
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.ResyncTimeout <= 0 {
		c.ResyncTimeout = DefaultResyncTimeout
	}
	if c.ClientID == "" {
		host, _ := os.Hostname()
		c.ClientID = fmt.Sprintf("kube-scheduler %s pid %d", host, os.Getpid())
	}
	return c
}
