package shim

import (
	"context"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/component-base/metrics/legacyregistry"
	"schedplug.dev/integration/scheduler/shim/cycle"
)

// metricValue is the value of the counter `name` on kube-scheduler's
// metrics registry, summed over the series whose labels include `labels`
// (name, value pairs); 0 when it has no such series yet.
func metricValue(t testing.TB, name string, labels ...string) float64 {
	t.Helper()
	sum := 0.0
	for _, m := range series(t, name, labels) {
		sum += m.GetCounter().GetValue()
	}
	return sum
}

// callErr is the error of the cycle's call, which has been made.
func callErr(c *cycle.Cycle) error {
	_, err := c.Called(context.Background())
	return err
}

// histogramCount is the number of observations of the histogram `name`,
// summed like metricValue.
func histogramCount(t testing.TB, name string, labels ...string) uint64 {
	t.Helper()
	var sum uint64
	for _, m := range series(t, name, labels) {
		sum += m.GetHistogram().GetSampleCount()
	}
	return sum
}

// series are the series of `name` on kube-scheduler's metrics registry
// whose labels include `labels` (name, value pairs).
func series(t testing.TB, name string, labels []string) []*dto.Metric {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []*dto.Metric
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, l := range m.GetLabel() {
					if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue metrics
				}
			}
			out = append(out, m)
		}
	}
	return out
}
