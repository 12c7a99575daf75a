package session

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// Client is the one connection to schedplug-host of a scheduler process
// and its current session.
type Client struct {
	cfg   Config
	conn  *grpc.ClientConn
	grpc  pb.HostClient
	hooks Hooks

	cur atomic.Pointer[Session]
	// handshakeMu makes Handshakes (at start, by the reconnect loop, and
	// after a call found its session unknown) happen one at a time.
	handshakeMu  sync.Mutex
	reconnecting atomic.Bool
	watchingUp   atomic.Bool
	closed       chan struct{}
	closeOnce    sync.Once
}

// Hooks connect the client to its owner.
type Hooks struct {
	// Request builds each Handshake's request (the profiles and their
	// native plugins, which grow as plugins register).
	Request func(ctx context.Context) *pb.HandshakeRequest
	// Opened, when set, is told of every new session after it became the
	// current one.
	Opened func(ctx context.Context, s *Session)
	// WaitingPods, when set, is given the decisions the host's plugins made
	// about pods their Permit made wait, as the watch stream brings them.
	WaitingPods func(ctx context.Context, decisions []*pb.WaitingPodDecision)
}

// ErrNoSession is returned while there is no session with the host.
var ErrNoSession = status.Error(codes.Unavailable, "no session with schedplug-host (not reachable since start, or it went away and has not answered since)")

// NewClient prepares the connection; it does not connect until Start.
func NewClient(cfg Config, hooks Hooks) (*Client, error) {
	cfg = cfg.withDefaults()
	creds, err := cfg.TLS.transportCredentials()
	if err != nil {
		return nil, err
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64 << 20)),
		// gRPC's default reconnect backoff grows to 120s; a restarted host
		// should be back in seconds.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 2 * time.Second},
			MinConnectTimeout: 2 * time.Second,
		}),
	}
	conn, err := grpc.NewClient(cfg.Target, append(opts, cfg.DialOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("schedplug host address %q (SCHEDPLUG_HOST) is not a valid gRPC target: %w", cfg.Target, err)
	}
	registerMetrics()
	return &Client{cfg: cfg, conn: conn, grpc: pb.NewHostClient(conn), hooks: hooks, closed: make(chan struct{})}, nil
}

// Config is the client's configuration, defaults filled in.
func (c *Client) Config() Config { return c.cfg }

// Current is the session (nil while there is none).
func (c *Client) Current() *Session { return c.cur.Load() }

// Close ends the session, stops reconnecting and closes the connection.
func (c *Client) Close() {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.replace(nil)
		_ = c.conn.Close()
	})
}

// replace makes s the current session (nil: none) and ends the previous.
func (c *Client) replace(s *Session) {
	if old := c.cur.Swap(s); old != nil {
		old.end()
	}
}

// lose ends s, found gone (the host exited, restarted, went silent or
// dropped it), and reconnects in the background. s stays the current
// session until a new one replaces it, so the calls made meanwhile meet
// the host as it is: unreachable (the failure policy applies) or
// restarted (it does not know s, and the call handshakes again); but no
// answer kept from s counts any more (Session.Trusted).
func (c *Client) lose(ctx context.Context, s *Session, why string) {
	if s.Ended() {
		return
	}
	s.end()
	if c.cur.Load() != s {
		return
	}
	sessionsLost.WithLabelValues(why).Inc()
	klog.FromContext(ctx).Info("schedplug-host session ended; no verdict kept from it is used, and the shim opens a new one as soon as the host answers", "session", s.ID, "why", why)
	c.startReconnect(ctx)
}

// usable says whether s is a session calls can still use.
func usable(s *Session) bool { return s != nil && !s.Ended() }

// Start connects at scheduler start. It waits up to ConnectTimeout for the
// host, retrying with exponential backoff. A host that rejects the native
// plugin names makes Start fail with the host's message (the same as
// `schedplug check`); a host that does not come up in time is logged and
// retried in the background while every cycle applies the failure
// policies.
func (c *Client) Start(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	if c.cfg.TLS == nil && !unixTarget(c.cfg.Target) {
		logger.Info("Warning: the connection to schedplug-host is plaintext TCP: the scheduling calls, nodes and pods cross the network unencrypted, and whoever can reach that address can answer as the host. "+
			"Serve the host with --tls-cert/--tls-key (and --tls-client-ca) and set "+EnvTLSCA+" (and "+EnvTLSCert+"/"+EnvTLSKey+") here, see docs/security.md; or run the host beside the scheduler on a unix socket",
			"target", c.cfg.Target)
	}
	deadline := time.Now().Add(c.cfg.ConnectTimeout)
	wait := reconnectMinBackoff
	var lastErr error
	for attempt := 1; ; attempt++ {
		err := c.handshakeIfNone(ctx)
		if err == nil {
			return nil
		}
		if fatalHandshake(err) {
			return fmt.Errorf("schedplug-host at %s rejected this scheduler's native plugins:\n%s", c.cfg.Target, status.Convert(err).Message())
		}
		lastErr = err
		if time.Now().Add(wait).After(deadline) {
			break
		}
		logger.V(2).Info("schedplug-host not reachable yet, retrying", "target", c.cfg.Target, "attempt", attempt, "err", err)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		wait = min(wait*2, reconnectMaxBackoff)
	}
	logger.Error(lastErr, "schedplug-host could not be reached at scheduler start; native plugins apply their failurePolicy until it is, and the shim keeps reconnecting",
		"target", c.cfg.Target, "waited", c.cfg.ConnectTimeout)
	c.startReconnect(ctx)
	return nil
}

// unixTarget reports whether a gRPC target is a unix socket (else it is a
// network address).
func unixTarget(target string) bool {
	return strings.HasPrefix(target, "unix:") || strings.HasPrefix(target, "unix-abstract:")
}

// fatalHandshake: the host is up and says this scheduler's configuration
// cannot work (unknown plugin names, wrong protocol version).
func fatalHandshake(err error) bool {
	switch status.Code(err) {
	case codes.InvalidArgument, codes.FailedPrecondition, codes.Unimplemented:
		return true
	}
	return false
}

// Renew handshakes again unless another caller already replaced the
// session `stale`, and returns the session to use. On failure there is no
// session and the client reconnects in the background.
func (c *Client) Renew(ctx context.Context, stale *Session) (*Session, error) {
	c.handshakeMu.Lock()
	defer c.handshakeMu.Unlock()
	if cur := c.cur.Load(); usable(cur) && cur != stale {
		return cur, nil
	}
	resyncs.Inc()
	if err := c.handshakeLocked(ctx); err != nil {
		if fatalHandshake(err) {
			klog.FromContext(ctx).Error(err, "schedplug-host rejected this scheduler's native plugins; native plugins apply their failurePolicy until it accepts them", "target", c.cfg.Target)
		}
		c.replace(nil)
		c.startReconnect(ctx)
		return nil, err
	}
	if cur := c.cur.Load(); cur != nil {
		return cur, nil
	}
	return nil, ErrNoSession // lost again at once
}

// handshakeIfNone handshakes unless a usable session exists.
func (c *Client) handshakeIfNone(ctx context.Context) error {
	c.handshakeMu.Lock()
	defer c.handshakeMu.Unlock()
	if usable(c.cur.Load()) {
		return nil
	}
	return c.handshakeLocked(ctx)
}

// handshakeLocked opens a new session and makes it the current one; the
// host's node table for it is empty. Callers hold handshakeMu.
func (c *Client) handshakeLocked(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, c.cfg.ResyncTimeout)
	defer cancel()
	resp, err := c.grpc.Handshake(cctx, c.hooks.Request(ctx))
	countRPC("Handshake", err)
	if err != nil {
		return err
	}
	if resp.GetProtocolVersion() != pb.ProtocolVersion_PROTOCOL_VERSION_1 {
		return status.Errorf(codes.FailedPrecondition, "schedplug-host speaks protocol version %d, this scheduler speaks %d; deploy matching versions of schedplug-host and kube-scheduler",
			resp.GetProtocolVersion(), pb.ProtocolVersion_PROTOCOL_VERSION_1)
	}
	logger := klog.FromContext(ctx)
	fast, err := fastPathFor(c.cfg, resp.GetFastPathSocket())
	if err != nil {
		logger.Error(err, "schedplug: PreFilter, FilterNodes and PreScore go over gRPC")
	}
	s := newSession(resp, fast)
	for _, w := range resp.GetWarnings() {
		logger.Info("schedplug-host warning", "warning", w)
	}
	c.replace(s)
	go c.watch(context.WithoutCancel(ctx), s)
	logger.V(2).Info("schedplug-host session opened", "target", c.cfg.Target, "session", s.ID, "plugins", len(resp.GetPlugins()))
	if c.hooks.Opened != nil {
		c.hooks.Opened(ctx, s)
	}
	return nil
}

// startReconnect handshakes in the background, with capped exponential
// backoff, until a session exists. It never blocks a scheduling cycle.
func (c *Client) startReconnect(ctx context.Context) {
	if !c.reconnecting.CompareAndSwap(false, true) {
		return
	}
	ctx = context.WithoutCancel(ctx)
	go func() {
		defer c.reconnecting.Store(false)
		logger := klog.FromContext(ctx)
		wait := reconnectMinBackoff
		for {
			select {
			case <-c.closed:
				return
			case <-time.After(wait):
			}
			err := c.handshakeIfNone(ctx)
			if err == nil {
				return
			}
			if fatalHandshake(err) {
				// The host is up but refuses this scheduler's plugins: say so
				// loudly, the admin has to fix the configuration.
				logger.Error(err, "schedplug-host rejected this scheduler's native plugins; native plugins keep applying their failurePolicy", "target", c.cfg.Target)
			} else {
				logger.V(2).Info("schedplug-host still not reachable", "target", c.cfg.Target, "err", err)
			}
			wait = min(wait*2, reconnectMaxBackoff)
		}
	}()
}

// WhenReachable calls fn once the connection to the host is up again,
// after at least `delay` (so a slow host is not hammered); while there is
// no session the reconnect loop's Handshake is what tells (Hooks.Opened).
// Only one wait runs at a time.
func (c *Client) WhenReachable(delay time.Duration, fn func()) {
	if !c.watchingUp.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer c.watchingUp.Store(false)
		select {
		case <-c.closed:
			return
		case <-time.After(delay):
		}
		for c.cur.Load() != nil {
			st := c.conn.GetState()
			if st == connectivity.Ready {
				fn()
				return
			}
			if st == connectivity.Idle {
				c.conn.Connect()
			}
			ctx, cancel := context.WithTimeout(context.Background(), reconnectMaxBackoff)
			c.conn.WaitForStateChange(ctx, st)
			cancel()
			select {
			case <-c.closed:
				return
			default:
			}
		}
	}()
}

// ConnState is the gRPC connection's state (tests wait on it).
func (c *Client) ConnState() connectivity.State { return c.conn.GetState() }

// Connect makes an idle connection connect.
func (c *Client) Connect() { c.conn.Connect() }
