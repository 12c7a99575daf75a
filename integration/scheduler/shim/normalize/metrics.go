package normalize

import (
	"time"

	"k8s.io/component-base/metrics"
)

// Duration is the time Into takes for one plugin in one cycle: the
// normalizations the shim makes itself (scores ahead), which
// schedplug-host's schedplug_plugin_hook_duration_seconds cannot see (it
// times only the normalizations the host makes). The shim registers it
// on kube-scheduler's /metrics (shim/metrics.go).
var Duration = metrics.NewHistogramVec(&metrics.HistogramOpts{
	Subsystem: "schedplug_shim",
	Name:      "normalize_duration_seconds",
	Help:      "Time the shim took to normalize one native plugin's scores in one scheduling cycle (scores computed ahead by schedplug-host and normalized in the shim; schedplug-host times the normalizations it makes itself).",
	// Written out: computed bounds print as le="9.999999999999999e-06".
	Buckets:        []float64{1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2},
	StabilityLevel: metrics.ALPHA,
}, []string{"plugin"})

func observe(plugin string, start time.Time) {
	Duration.WithLabelValues(plugin).Observe(time.Since(start).Seconds())
}
