package shim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// Profile is one scheduler profile and the native plugin names it enables,
// in the order the profile runs them.
type Profile struct {
	SchedulerName string
	Plugins       []string
	// Configs are what kube-scheduler read for each of Plugins (weights,
	// args, policies); the Handshake sends them for the host's config-skew
	// check. Empty: not sent, the host does not compare this profile.
	Configs []PluginConfig
}

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
	// Profiles are the scheduler's profiles with their native plugins.
	Profiles []Profile
	// TLS, when set, connects with TLS (see tls.go); nil is plaintext.
	TLS *TLSConfig
	// DialOptions are added to the gRPC client's own options (the
	// scheduler_perf suite in integration/testbed/perf counts RPCs and bytes with a
	// stats handler).
	DialOptions []grpc.DialOption
	// DisableFastPath makes every call over gRPC even when the host offers
	// its fast-path socket (fastpath.go).
	DisableFastPath bool
	// FastPathSpin is how long a cycle polls for a fast-path answer before
	// it sleeps (0: DefaultFastPathSpin).
	FastPathSpin time.Duration
	// OnFastCall, when set, is told of every call made over the fast path
	// (the scheduler_perf suite counts them beside its gRPC stats handler).
	OnFastCall func(FastCall)
	// EvaluateAllNodes makes every PreFilter ask the host about every node
	// instead of the window of nodes kube-scheduler's Filter is expected to
	// visit (window.go).
	EvaluateAllNodes bool
	// NoVerdictReuse makes every cycle call the host, even for a pod
	// identical apart from name and uid to the ones before it (reuse.go).
	NoVerdictReuse bool
}

// Defaults, overridable through the environment (see docs/shim.md).
const (
	DefaultTarget         = "unix:///run/schedplug/host.sock"
	DefaultConnectTimeout = 30 * time.Second
	DefaultResyncTimeout  = 5 * time.Second
	reconnectMinBackoff   = 200 * time.Millisecond
	reconnectMaxBackoff   = 5 * time.Second
	// recoveryDelay is the least time between a failure-policy rejection
	// and re-activating the pod, so a slow host is not hammered.
	recoveryDelay = time.Second
	// rejectedPodsCap bounds the pods remembered for re-activation once the
	// host is back.
	rejectedPodsCap = 10000
)

// Manager is the one connection to schedplug-host per scheduler process,
// shared by every shim plugin of every profile. It owns the session and the
// node table.
type Manager struct {
	cfg    Config
	conn   *grpc.ClientConn
	client pb.HostClient

	// mu serializes Handshakes and node-table changes (PreFilter, PreScore).
	// Scheduling cycles run one at a time, so it is not contended there.
	mu       sync.Mutex
	table    *nodeTable
	needFull bool
	// visits: the slots the last cycle's Filter asked about, lastCycle
	// that cycle, windows how recent windows fared (window.go).
	visits    visitSet
	lastCycle *filterState
	windows   windowLog
	// reuse: per profile, the verdicts kept for the replicas of one pod
	// signature; lastSig the signature of the profile's last call
	// (reuse.go).
	reuse   map[string]*reusedVerdicts
	lastSig map[string]string
	// pending is the last delta sent whose fate is unknown (the call
	// failed without saying which table version the host has). If the host
	// later reports that version, the delta was applied and is committed
	// instead of resending the whole table. Guarded by mu.
	pending *plannedDelta

	// lazyMu makes the lazy PreFilter / PreScore calls (a profile that
	// enables a native plugin at filter or score but not at preFilter or
	// preScore) happen once per cycle while the framework's parallel
	// workers wait for it.
	lazyMu sync.Mutex

	sess atomic.Pointer[session]

	regMu     sync.RWMutex
	profiles  []Profile
	policies  map[string]map[string]Policy // profile -> plugin -> policy
	activator fwk.PodActivator

	startOnce sync.Once
	startErr  error

	reconnecting atomic.Bool
	watching     atomic.Bool
	closed       chan struct{}
	closeOnce    sync.Once

	rejectedMu sync.Mutex
	rejected   map[string]*v1.Pod
}

type session struct {
	id      string
	plugins map[string]*pb.PluginInfo
	// data: the SCHEDPLUG_DATA_* bits the host's plugins declared; the
	// shim converts and sends only those extra pod and node fields.
	data uint64
	// fast: the host's fast-path socket for PreFilter and PreScore (nil:
	// gRPC only).
	fast *fastPath
	// fastFailed: the fast path could not be reached once in this session
	// (logged once).
	fastFailed atomic.Bool
}

// podData is the current session's data bits (0 without a session).
func (m *Manager) podData() uint64 {
	if s := m.sess.Load(); s != nil {
		return s.data
	}
	return 0
}

// NewManager creates a manager; it does not connect until Start.
func NewManager(cfg Config) (*Manager, error) {
	if cfg.Target == "" {
		cfg.Target = DefaultTarget
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.ResyncTimeout <= 0 {
		cfg.ResyncTimeout = DefaultResyncTimeout
	}
	if cfg.ClientID == "" {
		host, _ := os.Hostname()
		cfg.ClientID = fmt.Sprintf("kube-scheduler %s pid %d", host, os.Getpid())
	}
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
	m := &Manager{
		cfg:      cfg,
		conn:     conn,
		client:   pb.NewHostClient(conn),
		table:    newNodeTable(),
		policies: map[string]map[string]Policy{},
		closed:   make(chan struct{}),
		rejected: map[string]*v1.Pod{},
		reuse:    map[string]*reusedVerdicts{},
		lastSig:  map[string]string{},
	}
	for _, p := range cfg.Profiles {
		m.profiles = append(m.profiles, Profile{SchedulerName: p.SchedulerName, Plugins: append([]string(nil), p.Plugins...), Configs: append([]PluginConfig(nil), p.Configs...)})
	}
	return m, nil
}

// Close stops background reconnection and closes the connection.
func (m *Manager) Close() {
	m.closeOnce.Do(func() {
		close(m.closed)
		m.dropSession()
		_ = m.conn.Close()
	})
}

// dropSession forgets the session.
func (m *Manager) dropSession() { m.replaceSession(nil) }

// replaceSession makes s the session (nil: none) and closes the previous
// one's fast-path connections.
func (m *Manager) replaceSession(s *session) {
	if old := m.sess.Swap(s); old != nil {
		old.fast.close()
	}
}

// register records a plugin instance: its policy decides call timeouts and
// failure handling, and a plugin no configured profile lists is added to
// the Handshake.
func (m *Manager) register(profile, plugin string, pol Policy, activator fwk.PodActivator) {
	m.regMu.Lock()
	defer m.regMu.Unlock()
	if m.policies[profile] == nil {
		m.policies[profile] = map[string]Policy{}
	}
	m.policies[profile][plugin] = pol
	if m.activator == nil && activator != nil {
		m.activator = activator
	}
	for i := range m.profiles {
		if m.profiles[i].SchedulerName != profile {
			continue
		}
		for _, n := range m.profiles[i].Plugins {
			if n == plugin {
				return
			}
		}
		m.profiles[i].Plugins = append(m.profiles[i].Plugins, plugin)
		// Its settings are unknown here: the profile's are incomplete and
		// no longer sent (the host then skips its config-skew check).
		m.profiles[i].Configs = nil
		return
	}
	m.profiles = append(m.profiles, Profile{SchedulerName: profile, Plugins: []string{plugin}})
}

// callTimeout is the deadline of the one call that serves all of a
// profile's native plugins: the largest of their timeouts.
func (m *Manager) callTimeout(profile string) time.Duration {
	m.regMu.RLock()
	defer m.regMu.RUnlock()
	var d time.Duration
	for _, p := range m.policies[profile] {
		if p.Timeout > d {
			d = p.Timeout
		}
	}
	if d == 0 {
		d = DefaultTimeout
	}
	return d
}

func (m *Manager) policy(profile, plugin string) Policy {
	m.regMu.RLock()
	defer m.regMu.RUnlock()
	if p, ok := m.policies[profile][plugin]; ok {
		return p
	}
	return DefaultPolicy()
}

// pluginInfo is what the host reported for a plugin, nil before the first
// successful Handshake.
func (m *Manager) pluginInfo(name string) *pb.PluginInfo {
	s := m.sess.Load()
	if s == nil {
		return nil
	}
	return s.plugins[name]
}

// Connected reports whether a session with the host exists.
func (m *Manager) Connected() bool { return m.sess.Load() != nil }

// Start connects at scheduler start. It waits up to ConnectTimeout for the
// host, retrying with exponential backoff. A host that rejects the native
// plugin names makes Start fail with the host's message (the same as
// `schedplug check`); a host that does not come up in time is logged and
// retried in the background while every cycle applies the failure policies.
// Only the first call does the work; later calls return its result.
func (m *Manager) Start(ctx context.Context) error {
	m.startOnce.Do(func() { m.startErr = m.connectAtStart(ctx) })
	return m.startErr
}

func (m *Manager) connectAtStart(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	deadline := time.Now().Add(m.cfg.ConnectTimeout)
	backoff := reconnectMinBackoff
	var lastErr error
	for attempt := 1; ; attempt++ {
		m.mu.Lock()
		err := m.handshake(ctx)
		m.mu.Unlock()
		if err == nil {
			return nil
		}
		if fatalHandshake(err) {
			return fmt.Errorf("schedplug-host at %s rejected this scheduler's native plugins:\n%s", m.cfg.Target, status.Convert(err).Message())
		}
		lastErr = err
		if time.Now().Add(backoff).After(deadline) {
			break
		}
		logger.V(2).Info("schedplug-host not reachable yet, retrying", "target", m.cfg.Target, "attempt", attempt, "err", err)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return ctx.Err()
		}
		backoff = min(backoff*2, reconnectMaxBackoff)
	}
	logger.Error(lastErr, "schedplug-host could not be reached at scheduler start; native plugins apply their failurePolicy until it is, and the shim keeps reconnecting",
		"target", m.cfg.Target, "waited", m.cfg.ConnectTimeout)
	m.startReconnect(ctx)
	return nil
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

// handshake opens a new session. The host's node table for it is empty, so
// the next PreFilter sends the full table. Callers hold m.mu.
func (m *Manager) handshake(ctx context.Context) error {
	m.regMu.RLock()
	req := &pb.HandshakeRequest{ProtocolVersion: pb.ProtocolVersion_PROTOCOL_VERSION_1, ClientId: m.cfg.ClientID}
	for _, p := range m.profiles {
		pp := &pb.ProfilePlugins{SchedulerName: p.SchedulerName, Plugins: append([]string(nil), p.Plugins...)}
		for _, c := range p.Configs {
			s, err := c.settings()
			if err != nil {
				// The plugin's factory reports the same error; without
				// every plugin's settings the host cannot compare.
				klog.FromContext(ctx).V(2).Info("schedplug: not sending the profile's plugin settings", "profile", p.SchedulerName, "err", err)
				pp.Settings = nil
				break
			}
			pp.Settings = append(pp.Settings, s)
		}
		req.Profiles = append(req.Profiles, pp)
	}
	m.regMu.RUnlock()

	cctx, cancel := context.WithTimeout(ctx, m.cfg.ResyncTimeout)
	defer cancel()
	resp, err := m.client.Handshake(cctx, req)
	countRPC("Handshake", err)
	if err != nil {
		return err
	}
	if resp.GetProtocolVersion() != pb.ProtocolVersion_PROTOCOL_VERSION_1 {
		return status.Errorf(codes.FailedPrecondition, "schedplug-host speaks protocol version %d, this scheduler speaks %d; deploy matching versions of schedplug-host and kube-scheduler",
			resp.GetProtocolVersion(), pb.ProtocolVersion_PROTOCOL_VERSION_1)
	}
	s := &session{id: resp.GetSessionId(), plugins: map[string]*pb.PluginInfo{}, data: resp.GetData()}
	fast, err := fastPathFor(m.cfg, resp.GetFastPathSocket())
	if err != nil {
		klog.FromContext(ctx).Error(err, "schedplug: PreFilter and PreScore go over gRPC")
	}
	s.fast = fast
	for _, p := range resp.GetPlugins() {
		s.plugins[p.GetName()] = p
	}
	for _, w := range resp.GetWarnings() {
		klog.FromContext(ctx).Info("schedplug-host warning", "warning", w)
	}
	m.table.reset()
	m.needFull = true
	m.pending = nil
	m.replaceSession(s)
	klog.FromContext(ctx).V(2).Info("schedplug-host session opened", "target", m.cfg.Target, "session", s.id, "plugins", len(s.plugins))
	go m.activateRejected(ctx)
	return nil
}

// renewSession handshakes again unless another caller already replaced the
// session `stale`, and returns the session to use. On failure the session
// is dropped and background reconnection starts. Callers hold m.mu.
func (m *Manager) renewSession(ctx context.Context, stale *session) (*session, error) {
	if cur := m.sess.Load(); cur != nil && cur != stale {
		return cur, nil
	}
	resyncs.Inc()
	if err := m.handshake(ctx); err != nil {
		m.dropSession()
		m.startReconnect(ctx)
		return nil, err
	}
	if cur := m.sess.Load(); cur != nil {
		return cur, nil
	}
	return nil, errNoSession
}

// startReconnect handshakes in the background, with capped exponential
// backoff, until a session exists. It never blocks a scheduling cycle.
func (m *Manager) startReconnect(ctx context.Context) {
	if !m.reconnecting.CompareAndSwap(false, true) {
		return
	}
	ctx = context.WithoutCancel(ctx)
	go func() {
		defer m.reconnecting.Store(false)
		logger := klog.FromContext(ctx)
		backoff := reconnectMinBackoff
		for {
			select {
			case <-m.closed:
				return
			case <-time.After(backoff):
			}
			m.mu.Lock()
			var err error
			if m.sess.Load() == nil {
				err = m.handshake(ctx)
			}
			m.mu.Unlock()
			if err == nil {
				return
			}
			if fatalHandshake(err) {
				// The host is up but refuses this scheduler's plugins: say so
				// loudly, the admin has to fix the configuration.
				logger.Error(err, "schedplug-host rejected this scheduler's native plugins; native plugins keep applying their failurePolicy", "target", m.cfg.Target)
			} else {
				logger.V(2).Info("schedplug-host still not reachable", "target", m.cfg.Target, "err", err)
			}
			backoff = min(backoff*2, reconnectMaxBackoff)
		}
	}()
}

// errNoSession is returned while there is no session with the host.
var errNoSession = status.Error(codes.Unavailable, "no session with schedplug-host (not reachable since start or since it restarted)")

// prefilterResult is the outcome of the cycle's PreFilter call.
type prefilterResult struct {
	resp *pb.PreFilterResponse
	// states: the node state the host evaluated for each slot (freeSlot:
	// no node).
	states *slotStates
	// slotOfInfo: the slot of each snapshot NodeInfo sent
	// (plannedDelta.slotOfInfo).
	slotOfInfo map[fwk.NodeInfo]uint32
	// order[i]: the slot of the i-th snapshot node (plannedDelta.order).
	order []uint32
	// window: the slots the request asked the host to evaluate; nil when
	// it asked about every node.
	window slotSet
}

// tableVersionTrailer is the trailing metadata key in which the host
// reports its table version after a PreFilter that reached the session's
// table (answered, failed later, or refused the delta).
const tableVersionTrailer = "schedplug-table-version"

// preFilter sends the pod and the node-table delta and returns every
// native Filter's verdicts. podGroupCycle is the cycle's
// CycleState.IsPodGroupSchedulingCycle (see planDelta).
//
//   - FAILED_PRECONDITION: if the host reports the version of the last
//     delta whose answer was lost, that delta was applied: it is committed
//     and the call repeated with a delta from there (same session, no full
//     upload). Otherwise the shim opens a new session and sends the full
//     table once.
//   - INVALID_ARGUMENT for a delta the host refused (it reports its table
//     version): the tables disagree in a way a delta cannot fix, so the
//     full table is sent once, on the same session.
//
// nominated is the pod's nominated node, if any: kube-scheduler filters it
// first, so it joins the window.
func (m *Manager) preFilter(ctx context.Context, profile string, pod *pb.Pod, nodes []fwk.NodeInfo, podGroupCycle bool, nominated string) (*prefilterResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sess.Load()
	if s == nil {
		return nil, errNoSession
	}
	res, hostVersion, err := m.sendPreFilter(ctx, s, profile, pod, nodes, m.needFull, podGroupCycle, nominated)
	switch status.Code(err) {
	case codes.FailedPrecondition:
		if p := m.pending; hostVersion != nil && p != nil && *hostVersion == p.msg.GetNewVersion() {
			// The delta whose answer was lost did arrive: continue from it.
			m.table.commit(p, *hostVersion)
			m.pending = nil
			m.needFull = false
			deltasRecovered.Inc()
			klog.FromContext(ctx).V(2).Info("schedplug-host had applied the delta of a failed call; continuing from its table version", "profile", profile, "version", *hostVersion)
			res, _, err = m.sendPreFilter(ctx, s, profile, pod, nodes, false, podGroupCycle, nominated)
			if status.Code(err) != codes.FailedPrecondition {
				return res, err
			}
		}
		klog.FromContext(ctx).Info("schedplug-host lost the session or node table; resynchronising", "profile", profile, "err", status.Convert(err).Message())
		ns, rerr := m.renewSession(ctx, s)
		if rerr != nil {
			return nil, rerr
		}
		res, _, err = m.sendPreFilter(ctx, ns, profile, pod, nodes, true, podGroupCycle, nominated)
		return res, err
	case codes.InvalidArgument:
		if hostVersion == nil {
			// Not about the table (e.g. an unknown profile): a resync
			// cannot help.
			return nil, err
		}
		klog.FromContext(ctx).Info("schedplug-host refused the node-table delta; sending the full table", "profile", profile, "err", status.Convert(err).Message())
		resyncs.Inc()
		m.needFull = true
		res, _, err = m.sendPreFilter(ctx, s, profile, pod, nodes, true, podGroupCycle, nominated)
		return res, err
	}
	return res, err
}

// sendPreFilter makes one PreFilter call and returns the table version the
// host reported, if it did. Callers hold m.mu.
func (m *Manager) sendPreFilter(ctx context.Context, s *session, profile string, pod *pb.Pod, nodes []fwk.NodeInfo, full, podGroupCycle bool, nominated string) (*prefilterResult, *uint64, error) {
	plan := m.table.planDelta(nodes, full, podGroupCycle, func(ni fwk.NodeInfo, slot uint32) *pb.Node { return convertNode(ni, slot, s.data) })
	timeout := m.callTimeout(profile)
	if full {
		timeout = max(timeout, m.cfg.ResyncTimeout)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	m.table.noteIssued(plan.msg.GetNewVersion())
	req := &pb.PreFilterRequest{
		SessionId:     s.id,
		SchedulerName: profile,
		Pod:           pod,
		Delta:         plan.msg,
	}
	if last := m.lastCycle; last != nil {
		m.lastCycle = nil
		if late := last.late.Load(); late != nil {
			last = late
		}
		if windowed, missed := last.windowOutcome(); windowed && m.windows.record(missed) {
			klog.FromContext(ctx).V(2).Info("kube-scheduler's Filter went beyond the filter window too often; schedplug-host evaluates every node for a while", "misses", windowMaxMisses, "of", windowLogSize, "pausedCycles", windowPause)
		}
	}
	var window slotSet
	if !m.cfg.EvaluateAllNodes && m.windows.allowed() {
		if start, length, ok := predictWindow(plan.order, m.visits); ok {
			req.Evaluate, window = windowRanges(plan.order, start, length, plan.states.size)
			if nominated != "" {
				if slot, ok := m.table.slotOf(nominated); ok && int(slot) < plan.states.size && !window.has(slot) {
					req.Evaluate = append(req.Evaluate, slot, slot+1)
					window.add(slot)
				}
			}
		}
	}
	var resp *pb.PreFilterResponse
	var hostVersion *uint64
	fresp, fversion, err := m.fastCall(cctx, s, "PreFilter", &pb.FastRequest{Call: &pb.FastRequest_PreFilter{PreFilter: req}})
	if errors.Is(err, errFastNotSent) {
		var trailer metadata.MD
		resp, err = m.client.PreFilter(cctx, req, grpc.Trailer(&trailer))
		hostVersion = trailerVersion(trailer)
	} else {
		resp, hostVersion = fresp.GetPreFilter(), fversion
	}
	countRPC("PreFilter", err)
	if err == nil {
		m.table.commit(plan, resp.GetTableVersion())
		m.needFull = false
		m.pending = nil
		if window != nil && resp.GetWindowed() {
			filterWindows.Inc()
		}
		return &prefilterResult{resp: resp, states: plan.states, slotOfInfo: plan.slotOfInfo, order: plan.order, window: window}, nil, nil
	}
	switch code := status.Code(err); {
	case hostVersion != nil && code != codes.FailedPrecondition && code != codes.InvalidArgument:
		// The host applied the delta (its version says where it is) and
		// failed afterwards, e.g. its chain ran out of time.
		if *hostVersion == plan.msg.GetNewVersion() {
			m.table.commit(plan, *hostVersion)
			m.needFull = false
			m.pending = nil
		}
	case hostVersion == nil && code != codes.FailedPrecondition && code != codes.InvalidArgument:
		// No word from the host (our deadline fired, the connection
		// dropped): it may or may not have applied the delta.
		m.pending = plan
	}
	return nil, hostVersion, err
}

func trailerVersion(md metadata.MD) *uint64 {
	vals := md.Get(tableVersionTrailer)
	if len(vals) == 0 {
		return nil
	}
	v, err := strconv.ParseUint(vals[len(vals)-1], 10, 64)
	if err != nil {
		return nil
	}
	return &v
}

// preScore asks for every native Score plugin's normalized scores on the
// feasible nodes. allNodes is the cycle's snapshot, needed when the host
// lost the table and it must be sent again.
func (m *Manager) preScore(ctx context.Context, profile string, pod *pb.Pod, feasible []string, allNodes []fwk.NodeInfo, podGroupCycle bool, applies appliesInfo) (*pb.PreScoreResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sess.Load()
	if s == nil {
		return nil, errNoSession
	}
	resp, err := m.sendPreScore(ctx, s, profile, pod, feasible, applies)
	if status.Code(err) != codes.FailedPrecondition {
		return resp, err
	}
	klog.FromContext(ctx).Info("schedplug-host lost the session or node table; resynchronising", "profile", profile, "err", status.Convert(err).Message())
	s, err = m.renewSession(ctx, s)
	if err != nil {
		return nil, err
	}
	if _, _, err := m.sendPreFilter(ctx, s, profile, pod, allNodes, true, podGroupCycle, ""); err != nil {
		return nil, err
	}
	return m.sendPreScore(ctx, s, profile, pod, feasible, applies)
}

func (m *Manager) sendPreScore(ctx context.Context, s *session, profile string, pod *pb.Pod, feasible []string, applies appliesInfo) (*pb.PreScoreResponse, error) {
	slots := make([]uint32, len(feasible))
	for i, name := range feasible {
		slot, ok := m.table.slotOf(name)
		if !ok {
			return nil, status.Errorf(codes.Internal, "node %q is not in the node table sent to schedplug-host", name)
		}
		slots[i] = slot
	}
	cctx, cancel := context.WithTimeout(ctx, m.callTimeout(profile))
	defer cancel()
	req := &pb.PreScoreRequest{
		SessionId:     s.id,
		SchedulerName: profile,
		Pod:           pod,
		TableVersion:  m.table.currentVersion(),
		Nodes:         slots,
		AppliesKnown:  applies.known,
		NotApplying:   applies.notApplying,
	}
	fresp, _, err := m.fastCall(cctx, s, "PreScore", &pb.FastRequest{Call: &pb.FastRequest_PreScore{PreScore: req}})
	var resp *pb.PreScoreResponse
	if errors.Is(err, errFastNotSent) {
		resp, err = m.client.PreScore(cctx, req)
	} else {
		resp = fresp.GetPreScore()
	}
	countRPC("PreScore", err)
	return resp, err
}

// noteCycle keeps the cycle's Filter visits, from which the next PreFilter
// predicts its window.
func (m *Manager) noteCycle(fs *filterState) {
	if fs.visits == nil {
		return
	}
	m.mu.Lock()
	m.visits = fs.visits
	m.lastCycle = fs
	m.mu.Unlock()
}

// evaluateRest asks the host about the nodes outside the window of the
// cycle's PreFilter, once per cycle: the first Filter call outside the
// window makes the call, the framework's other workers wait for it, and
// every later one finds the verdicts merged in (or the same error).
func (m *Manager) evaluateRest(ctx context.Context, profile string, fs *filterState) error {
	fs.rest.Lock()
	defer fs.rest.Unlock()
	if fs.restDone.Load() {
		return fs.restErr
	}
	fs.restDone.Store(true)
	vt := fs.verdicts.Load()
	var applies appliesInfo
	applies.known, applies.notApplying = fs.appliesAnswer()
	resp, err := m.filterNodes(ctx, profile, fs.pod, fs.res.resp.GetTableVersion(), vt.window.complementRanges(len(vt.rejection)), applies)
	if err == nil && !resp.GetWindowed() {
		err = status.Error(codes.Internal, "schedplug-host answered FilterNodes without windowed set; the host and the shim are from different schedplug releases")
	}
	if err != nil {
		fs.restErr = err
		return err
	}
	filterWindowMisses.Inc()
	fs.verdicts.Store(vt.withRest(fs, resp))
	return nil
}

// filterNodes runs every native Filter on the given slots (as [first, end)
// pairs) for the cycle's pod, on the table PreFilter answered for.
func (m *Manager) filterNodes(ctx context.Context, profile string, pod *pb.Pod, tableVersion uint64, ranges []uint32, applies appliesInfo) (*pb.PreFilterResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sess.Load()
	if s == nil {
		return nil, errNoSession
	}
	cctx, cancel := context.WithTimeout(ctx, m.callTimeout(profile))
	defer cancel()
	req := &pb.FilterNodesRequest{
		SessionId:     s.id,
		SchedulerName: profile,
		Pod:           pod,
		TableVersion:  tableVersion,
		Evaluate:      ranges,
		AppliesKnown:  applies.known,
		NotApplying:   applies.notApplying,
	}
	fresp, _, err := m.fastCall(cctx, s, "FilterNodes", &pb.FastRequest{Call: &pb.FastRequest_FilterNodes{FilterNodes: req}})
	var resp *pb.PreFilterResponse
	if errors.Is(err, errFastNotSent) {
		resp, err = m.client.FilterNodes(cctx, req)
	} else {
		resp = fresp.GetPreFilter()
	}
	countRPC("FilterNodes", err)
	return resp, err
}

// fastCall makes the call over the session's fast path. An error wrapping
// errFastNotSent means the host did not get it: the session has no fast
// path, or its socket could not be reached (logged once per session,
// counted), and the caller makes the call over gRPC.
func (m *Manager) fastCall(ctx context.Context, s *session, method string, req *pb.FastRequest) (*pb.FastResponse, *uint64, error) {
	if s.fast == nil {
		return nil, nil, errFastNotSent
	}
	resp, version, err := s.fast.call(ctx, method, req)
	if errors.Is(err, errFastNotSent) {
		fastPathFallbacks.WithLabelValues(method).Inc()
		if s.fastFailed.CompareAndSwap(false, true) {
			klog.FromContext(ctx).Info("schedplug-host's fast-path socket could not be reached; calls go over gRPC, which is slower on a busy scheduler", "socket", s.fast.path, "err", err)
		}
		return nil, nil, err
	}
	fastPathCalls.WithLabelValues(method).Inc()
	return resp, version, err
}

// appliesInfo is the cycle's applies() answers, sent back to the host.
type appliesInfo struct {
	known       bool
	notApplying []string
}

// testHookBeforeRetry, when set by a test, runs between a Filter call that
// needs a new session and its retry (where a failed re-handshake of another
// goroutine may drop the session).
var testHookBeforeRetry func()

// filterOne evaluates `plugins`, in order, on one node whose state is sent
// explicitly; the node table is not involved. The call may take the sum of
// their timeouts: the host stops each plugin at its own deadline.
func (m *Manager) filterOne(ctx context.Context, profile string, plugins []string, pod *pb.Pod, ni fwk.NodeInfo, applies appliesInfo) (*pb.FilterResponse, error) {
	s := m.sess.Load()
	if s == nil {
		return nil, errNoSession
	}
	req := &pb.FilterRequest{SchedulerName: profile, Pod: pod, Node: convertNode(ni, 0, s.data), Plugins: plugins,
		AppliesKnown: applies.known, NotApplying: applies.notApplying}
	var timeout time.Duration
	for _, plugin := range plugins {
		timeout += m.policy(profile, plugin).Timeout
	}
	call := func(s *session) (*pb.FilterResponse, error) {
		if s == nil {
			return nil, errNoSession
		}
		req.SessionId = s.id
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		resp, err := m.client.Filter(cctx, req)
		countRPC("Filter", err)
		return resp, err
	}
	resp, err := call(s)
	if status.Code(err) != codes.FailedPrecondition {
		return resp, err
	}
	m.mu.Lock()
	ns, err := m.renewSession(ctx, s)
	m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if testHookBeforeRetry != nil {
		testHookBeforeRetry()
	}
	return call(ns)
}

// rememberRejected keeps a pod that a failure policy rejected, so it can be
// moved back to the active queue as soon as the host answers again rather
// than wait for an unrelated cluster event.
func (m *Manager) rememberRejected(pod *v1.Pod) {
	m.rejectedMu.Lock()
	defer m.rejectedMu.Unlock()
	if len(m.rejected) < rejectedPodsCap {
		m.rejected[pod.Namespace+"/"+pod.Name] = pod
	}
}

// watchRecovery re-activates the remembered pods once the connection to
// the host is up again (their next cycle resyncs if the host restarted).
// While there is no session the reconnect loop does it after its Handshake.
func (m *Manager) watchRecovery() {
	if !m.watching.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer m.watching.Store(false)
		select {
		case <-m.closed:
			return
		case <-time.After(recoveryDelay):
		}
		for {
			select {
			case <-m.closed:
				return
			default:
			}
			if m.sess.Load() == nil {
				return
			}
			st := m.conn.GetState()
			if st == connectivity.Ready {
				m.activateRejected(context.Background())
				return
			}
			if st == connectivity.Idle {
				m.conn.Connect()
			}
			ctx, cancel := context.WithTimeout(context.Background(), reconnectMaxBackoff)
			m.conn.WaitForStateChange(ctx, st)
			cancel()
		}
	}()
}

func (m *Manager) activateRejected(ctx context.Context) {
	m.rejectedMu.Lock()
	pods := m.rejected
	m.rejected = map[string]*v1.Pod{}
	m.rejectedMu.Unlock()
	m.regMu.RLock()
	act := m.activator
	m.regMu.RUnlock()
	if len(pods) == 0 || act == nil {
		return
	}
	act.Activate(klog.FromContext(ctx), pods)
}

func countRPC(method string, err error) {
	rpcs.WithLabelValues(method, status.Code(err).String()).Inc()
}

// unreachable reports whether err means the host did not answer (as opposed
// to answering with an error).
func unreachable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		return true
	}
	return false
}
