package shim

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"schedplug.dev/integration/scheduler/shim/normalize"
)

// The adapter's counters on kube-scheduler's /metrics (the legacy registry
// is the one the scheduler serves); the connection's are in package
// session, the verdict sources' in package cycle, and the time of the
// normalizations the shim makes itself in package normalize (registered
// here).
var (
	lazyCalls = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "lazy_calls_total",
		Help:           "PreFilter or PreScore calls the shim made lazily from Filter or NormalizeScore because the profile enables no native plugin at preFilter or preScore (enable the plugins under multiPoint to avoid it).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"method"})
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
	waitingDecisions = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "waiting_pod_decisions_total",
		Help:           "Decisions of native plugins about pods their Permit made wait, by what the shim did: allow, reject, or gone (the pod no longer waited).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"decision"})
	podPatches = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "prebind_patches_total",
		Help:           "Patches writing the labels and annotations of native plugins' PreBind onto pods, by outcome (ok, error: the binding failed).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"outcome"})
)

var registerOnce sync.Once

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(lazyCalls, panicsRecovered, policyApplied, waitingDecisions, podPatches, normalize.Duration)
	})
}
