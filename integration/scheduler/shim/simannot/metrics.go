package simannot

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// The writer's figures on kube-scheduler's /metrics.
var (
	results = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "schedplug_shim",
		Name:           "simulator_annotations_total",
		Help:           "Results of scheduling cycles for kube-scheduler-simulator's annotations, by what became of them: written (one patch), replaced (a newer cycle of the same pod came before the patch), dropped (the queue was full: SCHEDPLUG_SIMULATOR_ANNOTATIONS_QUEUE), gone (the pod was deleted or replaced), failed (the API server refused the patch; logged at -v=2).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
	queued = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      "schedplug_shim",
		Name:           "simulator_annotations_queued",
		Help:           "Pods whose simulator annotations wait for their patch.",
		StabilityLevel: metrics.ALPHA,
	})
	patchSeconds = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem:      "schedplug_shim",
		Name:           "simulator_annotations_patch_seconds",
		Help:           "Time of one patch writing a pod's simulator annotations, from the request to the API server's answer.",
		Buckets:        metrics.ExponentialBuckets(0.0005, 2, 14),
		StabilityLevel: metrics.ALPHA,
	})
	patchBytes = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem:      "schedplug_shim",
		Name:           "simulator_annotations_patch_bytes",
		Help:           "Size of one patch writing a pod's simulator annotations.",
		Buckets:        metrics.ExponentialBuckets(256, 2, 12),
		StabilityLevel: metrics.ALPHA,
	})
)

var registerOnce sync.Once

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(results, queued, patchSeconds, patchBytes)
	})
}
