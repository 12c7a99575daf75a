package shim

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/cycle"
	"schedplug.dev/integration/scheduler/shim/session"
	"schedplug.dev/integration/scheduler/shim/simannot"
)

// Config configures the shim's connection to schedplug-host and its
// verdict sources.
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
	// TLS, when set, connects with TLS; nil is plaintext.
	TLS *TLSConfig
	// DialOptions are added to the gRPC client's own options (the
	// scheduler_perf suite counts RPCs and bytes with a stats handler).
	DialOptions []grpc.DialOption
	// DisableFastPath makes every call over gRPC even when the host offers
	// its fast-path socket.
	DisableFastPath bool
	// FastPathSpin is how long a cycle polls for a fast-path answer before
	// it sleeps (0: DefaultFastPathSpin).
	FastPathSpin time.Duration
	// OnFastCall, when set, is told of every call made over the fast path.
	OnFastCall func(FastCall)
	// EvaluateAllNodes makes every PreFilter ask the host about every node
	// instead of the window of nodes kube-scheduler's Filter is expected to
	// visit.
	EvaluateAllNodes bool
	// NoVerdictReuse makes every cycle call the host, even for a pod
	// identical apart from name and uid to the ones before it.
	NoVerdictReuse bool
	// NoScoresAhead makes every cycle with native Score plugins ask
	// PreScore for its scores instead of normalizing raw scores the host
	// computed ahead (with PreFilter, or sent at PreFilter time for a
	// profile whose native plugins only score).
	NoScoresAhead bool
	// SpotCheckEvery: one of every SpotCheckEvery cycles that could answer
	// from kept verdicts calls the host and compares (cycle/spotcheck.go);
	// 0 is DefaultSpotCheckEvery, a negative value turns spot checks off.
	SpotCheckEvery int
	// SimulatorAnnotations configures the writer of the profiles that set
	// simulatorAnnotations (docs/simulator-annotations.md).
	SimulatorAnnotations simannot.Options
	// AnnotationClient, when set, writes those annotations instead of a
	// client made from kube-scheduler's kubeconfig (tests).
	AnnotationClient kubernetes.Interface
}

// DefaultSpotCheckEvery is Config.SpotCheckEvery's default.
const DefaultSpotCheckEvery = 100

// Re-exported from the session package for Config's users.
type (
	// TLSConfig names the PEM files of a TLS connection to the host.
	TLSConfig = session.TLSConfig
	// FastCall describes one call made over the fast path.
	FastCall = session.FastCall
)

// Defaults, overridable through the environment (docs/shim.md).
const (
	DefaultTarget       = session.DefaultTarget
	DefaultFastPathSpin = session.DefaultFastPathSpin
	// recoveryDelay is the least time between a failure-policy rejection
	// and re-activating the pod, so a slow host is not hammered.
	recoveryDelay = time.Second
)

// Manager is the one connection to schedplug-host per scheduler process,
// shared by every shim plugin of every profile: the session (package
// session), the cycles and what they keep (package cycle), the registry
// of profiles and policies, and the pods a failure policy refused.
type Manager struct {
	client   *session.Client
	tracker  *cycle.Tracker
	registry *registry
	refused  refusedPods
	// enqueues: PreEnqueue answers for the profiles' later plugins
	// (preenqueue.go).
	enqueues enqueueAnswers
	// annotations writes the simulator's annotations (annotations.go).
	annotations annotations

	startOnce sync.Once
	startErr  error
}

// NewManager creates a manager; it does not connect until Start.
func NewManager(cfg Config) (*Manager, error) {
	m := &Manager{registry: newRegistry(cfg.Profiles), refused: newRefusedPods(),
		annotations: annotations{client: cfg.AnnotationClient, opts: cfg.SimulatorAnnotations}}
	client, err := session.NewClient(session.Config{
		Target: cfg.Target, ConnectTimeout: cfg.ConnectTimeout, ResyncTimeout: cfg.ResyncTimeout, ClientID: cfg.ClientID,
		TLS: cfg.TLS, DialOptions: cfg.DialOptions, DisableFastPath: cfg.DisableFastPath, FastPathSpin: cfg.FastPathSpin, OnFastCall: cfg.OnFastCall,
	}, session.Hooks{
		Request: func(ctx context.Context) *pb.HandshakeRequest {
			return m.registry.handshake(ctx, m.client.Config().ClientID)
		},
		Opened:      func(ctx context.Context, _ *session.Session) { go m.activateRefused(ctx) },
		WaitingPods: func(ctx context.Context, d []*pb.WaitingPodDecision) { m.applyDecisions(ctx, d) },
	})
	if err != nil {
		return nil, err
	}
	registerMetrics()
	m.client = client
	m.tracker = cycle.NewTracker(cycle.NewHost(client), m.registry, cycle.Options{EvaluateAllNodes: cfg.EvaluateAllNodes, NoVerdictReuse: cfg.NoVerdictReuse, NoScoresAhead: cfg.NoScoresAhead, SpotCheckEvery: spotCheckEvery(cfg.SpotCheckEvery)})
	return m, nil
}

// Start connects at scheduler start (session.Client.Start). Only the first
// call does the work; later calls return its result.
func (m *Manager) Start(ctx context.Context) error {
	m.startOnce.Do(func() { m.startErr = m.client.Start(ctx) })
	return m.startErr
}

// Close ends the session and closes the connection, and stops writing
// the simulator's annotations.
func (m *Manager) Close() {
	m.client.Close()
	m.annotations.close()
}

// Connected reports whether a session with the host exists.
func (m *Manager) Connected() bool { return m.client.Current() != nil }

// pluginInfo is what the host reported for a plugin, nil without a session.
func (m *Manager) pluginInfo(name string) *pb.PluginInfo { return m.client.Current().Plugin(name) }

// podData is the current session's data bits (0 without a session).
func (m *Manager) podData() uint64 {
	if s := m.client.Current(); s != nil {
		return s.Data
	}
	return 0
}

// refuse remembers a pod that a failure policy rejected because the host
// did not answer, and re-activates it as soon as the host answers again
// rather than let it wait for an unrelated cluster event.
func (m *Manager) refuse(pod *v1.Pod) {
	m.refused.add(pod)
	m.client.WhenReachable(recoveryDelay, func() { m.activateRefused(context.Background()) })
}

func (m *Manager) activateRefused(ctx context.Context) {
	pods := m.refused.take()
	if act := m.registry.podActivator(); len(pods) > 0 && act != nil {
		act.Activate(klog.FromContext(ctx), pods)
	}
}

// spotCheckEvery is the tracker's spot-check period for Config's value.
func spotCheckEvery(n int) int {
	switch {
	case n == 0:
		return DefaultSpotCheckEvery
	case n < 0:
		return 0
	}
	return n
}
