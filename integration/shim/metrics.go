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
		Help:           "Filter calls that could not use the PreFilter verdicts (the NodeInfo was not the snapshot's, e.g. in preemption dry runs) and asked the host about one node.",
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
	policyApplied = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "failure_policy_applied_total",
		Help:           "Times a plugin's failurePolicy decided the verdict because the host could not answer.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"plugin", "policy"})
)

var registerOnce sync.Once

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(filterFallbacks, resyncs, rpcs, policyApplied)
	})
}
