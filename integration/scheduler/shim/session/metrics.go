package session

import (
	"sync"

	"google.golang.org/grpc/status"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// The connection's counters on kube-scheduler's /metrics (the legacy
// registry is the one the scheduler serves).
var (
	rpcs = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "rpcs_total",
		Help:           "Calls to schedplug-host by method and gRPC status code.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"method", "code"})
	fastPathCalls = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "fast_path_calls_total",
		Help:           "PreFilter, FilterNodes, PreScore and NoteCycles calls made over schedplug-host's fast-path socket instead of gRPC, by method (also counted in rpcs_total).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"method"})
	fastPathFallbacks = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "fast_path_fallbacks_total",
		Help:           "PreFilter, FilterNodes, PreScore and NoteCycles calls made over gRPC although the host offered the fast path, because its socket could not be reached (the scheduler log says why, once per session).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"method"})
	resyncs = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "resyncs_total",
		Help:           "Full node-table resynchronisations after the host lost the session or the table version.",
		StabilityLevel: metrics.ALPHA,
	})
	sessionsLost = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "sessions_lost_total",
		Help:           "Sessions with schedplug-host that ended while in use (the host exited, restarted, went silent or dropped the session), by reason; no verdict kept from such a session is used again.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"why"})
	buildChanges = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "host_build_changes_total",
		Help:           "Answers or watch events of schedplug-host that carried another plugin build or configuration than the session's; verdicts kept from the old build are not used again.",
		StabilityLevel: metrics.ALPHA,
	})
)

var registerOnce sync.Once

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(rpcs, fastPathCalls, fastPathFallbacks, resyncs, sessionsLost, buildChanges)
	})
}

func countRPC(method string, err error) {
	rpcs.WithLabelValues(method, status.Code(err).String()).Inc()
}

// CountResync counts a full node-table upload that was not a new session's
// first (the host refused a delta).
func CountResync() { resyncs.Inc() }
