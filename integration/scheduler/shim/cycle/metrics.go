package cycle

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// The verdict sources' counters on kube-scheduler's /metrics, one per
// source and outcome.
var (
	verdictReuseCycles = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "verdict_reuse_cycles_total",
		Help:           "Cycles whose PreFilter made no call because the pod has the signature of the pods before it (identical apart from name, uid and the labels and annotations no native plugin reads), every native plugin of the profile promised what reusing their verdicts needs, and the host that computed them still holds the session with the same plugin builds.",
		StabilityLevel: metrics.ALPHA,
	})
	verdictReuseMisses = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "verdict_reuse_misses_total",
		Help:           "Reusing cycles whose Filter reached a node with no kept verdict (its node object changed, or it was never evaluated for this pod signature) and so made the cycle's PreFilter call after all.",
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
	filterWindowRestNodes = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "filter_window_rest_nodes_total",
		Help:           "Nodes the FilterNodes calls of the cycles that went beyond PreFilter's window asked schedplug-host about.",
		StabilityLevel: metrics.ALPHA,
	})
	filterWindowLateVisits = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "filter_window_late_visits_total",
		Help:           "Filter calls on nodes outside PreFilter's window that kube-scheduler made after its walk had found enough feasible nodes (a worker finishing the node it was on; the framework discards the answer), answered without a call to schedplug-host.",
		StabilityLevel: metrics.ALPHA,
	})
	filterVerdictsReused = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "filter_verdicts_reused_total",
		Help:           "Filter calls on a copy of a snapshot node whose pods alone changed (preemption dry runs, nominated pods) answered from the node's PreFilter verdict without a call to the host, because the plugin promised its filter ignores the node's pods (SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS).",
		StabilityLevel: metrics.ALPHA,
	})
	filterFallbacks = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "filter_fallbacks_total",
		Help:           "Filter calls that could not use the PreFilter verdicts (the NodeInfo was not the snapshot's, e.g. in preemption dry runs) and were answered by a single-node Filter call for every native plugin of the profile, or by such a call's answer kept in the cycle.",
		StabilityLevel: metrics.ALPHA,
	})
	spotChecks = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "spot_checks_total",
		Help:           "Cycles that could have answered from kept verdicts but called schedplug-host to check them (one of every SCHEDPLUG_SPOT_CHECK_EVERY).",
		StabilityLevel: metrics.ALPHA,
	})
	spotCheckMismatches = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "spot_check_mismatches_total",
		Help:           "Spot checks in which a native plugin answered differently than the verdict kept for an identical pod on the same node: it breaks a promise it declared, and its verdicts are no longer kept or signed until its .so changes.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"plugin"})
	scoresAheadOutcomes = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "scores_ahead_total",
		Help:           "Cycles that asked schedplug-host for scores ahead of PreScore, by outcome: used (normalized in the shim, no PreScore call), or why the cycle made its PreScore call after all (no_answer, node_not_scored_ahead, plugin_failed_ahead, plugin_normalizes_itself).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"outcome"})
	deltasRecovered = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "deltas_recovered_total",
		Help:           "Node-table deltas whose answer was lost but which the host reported as applied, so the shim continued from them instead of resending the full table.",
		StabilityLevel: metrics.ALPHA,
	})
)

var registerOnce sync.Once

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(verdictReuseCycles, verdictReuseMisses, filterWindows, filterWindowMisses, filterWindowRestNodes, filterWindowLateVisits, filterVerdictsReused, filterFallbacks, deltasRecovered, scoresAheadOutcomes, spotChecks, spotCheckMismatches)
	})
}
