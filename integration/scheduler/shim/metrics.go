package shim

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Counters on kube-scheduler's /metrics (the legacy registry is the one the
// scheduler serves). The e2e preemption test reads filterFallbacks.
var (
	filterFallbacks = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "filter_fallbacks_total",
		Help:           "Filter calls that could not use the PreFilter verdicts (the NodeInfo was not the snapshot's, e.g. in preemption dry runs) and were answered by a single-node Filter call for every native plugin of the profile, or by such a call's answer kept in the cycle.",
		StabilityLevel: metrics.ALPHA,
	})
	filterVerdictsReused = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "filter_verdicts_reused_total",
		Help:           "Filter calls on a copy of a snapshot node whose pods alone changed (preemption dry runs, nominated pods) answered from the node's PreFilter verdict without a call to the host, because the plugin promised its filter ignores the node's pods (SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS).",
		StabilityLevel: metrics.ALPHA,
	})
	filterWindows = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "filter_windows_total",
		Help:           "PreFilter calls that asked schedplug-host about the window of nodes kube-scheduler's Filter was expected to visit instead of every node.",
		StabilityLevel: metrics.ALPHA,
	})
	filterWindowMisses = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "filter_window_misses_total",
		Help:           "Cycles whose Filter went beyond PreFilter's window (an unschedulable pod visits every node), answered by one FilterNodes call for the other nodes.",
		StabilityLevel: metrics.ALPHA,
	})
	verdictReuseCycles = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "verdict_reuse_cycles_total",
		Help:           "Cycles whose PreFilter made no call because the pod has the signature of the pods before it (identical apart from name, uid and the labels and annotations no native plugin reads) and every native plugin of the profile promised what reusing their verdicts needs.",
		StabilityLevel: metrics.ALPHA,
	})
	verdictReuseMisses = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "verdict_reuse_misses_total",
		Help:           "Reusing cycles whose Filter reached a node with no kept verdict (its node object changed, or it was never evaluated for this pod signature) and so made the cycle's PreFilter call after all.",
		StabilityLevel: metrics.ALPHA,
	})
	resyncs = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "resyncs_total",
		Help:           "Full node-table resynchronisations after the host lost the session or the table version.",
		StabilityLevel: metrics.ALPHA,
	})
	rpcs = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "rpcs_total",
		Help:           "Calls to schedplug-host by method and gRPC status code.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"method", "code"})
	fastPathCalls = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "fast_path_calls_total",
		Help:           "PreFilter and PreScore calls made over schedplug-host's fast-path socket instead of gRPC, by method (also counted in rpcs_total).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"method"})
	fastPathFallbacks = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "fast_path_fallbacks_total",
		Help:           "PreFilter and PreScore calls made over gRPC although the host offered the fast path, because its socket could not be reached (the scheduler log says why, once per session).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"method"})
	lazyCalls = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "lazy_calls_total",
		Help:           "PreFilter or PreScore calls the shim made lazily from Filter or NormalizeScore because the profile enables no native plugin at preFilter or preScore (enable the plugins under multiPoint to avoid it).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"method"})
	deltasRecovered = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "deltas_recovered_total",
		Help:           "Node-table deltas whose answer was lost but which the host reported as applied, so the shim continued from them instead of resending the full table.",
		StabilityLevel: metrics.ALPHA,
	})
	panicsRecovered = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "panics_recovered_total",
		Help:           "Panics inside the shim turned into an Error status for one scheduling cycle instead of crashing kube-scheduler (each is a bug; the scheduler log has the stack).",
		StabilityLevel: metrics.ALPHA,
	})
	policyApplied = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "failure_policy_applied_total",
		Help:           "Times a plugin's failurePolicy decided the verdict because the host could not answer for it (unreachable, too slow, or the plugin did not finish within its deadline on the host).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"plugin", "policy"})
)

var registerOnce sync.Once

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(fastPathCalls, fastPathFallbacks, filterFallbacks, filterVerdictsReused, filterWindows, filterWindowMisses, verdictReuseCycles, verdictReuseMisses, resyncs, rpcs, policyApplied, lazyCalls, deltasRecovered, panicsRecovered)
	})
}
