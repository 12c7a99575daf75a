package e2e

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"schedplug.dev/integration/testbed/testenv"
)

// The shim's counters of Filter calls whose NodeInfo is not the
// snapshot's, as in preemption dry runs: answered by a single-node Filter
// RPC (fallbacks), or from the PreFilter verdict because the plugin
// promised its filter ignores the node's pods (reused).
const (
	fallbackMetric = "schedplug_shim_filter_fallbacks_total"
	reusedMetric   = "schedplug_shim_filter_verdicts_reused_total"
)

// Preemption where the native Filter matters: a high-priority pod that
// needs hardware encryption fits only on enc-1, and only by evicting the
// low-priority pod there. plain-1 is empty and plain-2 holds an evictable
// pod too, but HwEncrypt rejects both, so the only correct outcome is
// evicting the pod on enc-1. The preemption dry run hands the Filter a
// copy of enc-1 without the victim; HwEncrypt promises that its filter
// ignores the node's pods (SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS), so the
// shim answers from the PreFilter verdict: the reused counter goes up and
// no single-node RPC is made.
func TestPreemptionWithNativeFilter(t *testing.T) {
	s := startStack(t, []testenv.NativePlugin{
		{Name: "HwEncrypt", FailurePolicy: "Fail", Timeout: "500ms"},
	})
	ctx := s.ctx()
	ns := s.namespace("preemption")
	small := testenv.NodeResources{CPU: "2", Memory: "4Gi", Pods: 110}
	s.createNodes(ctx,
		testenv.MakeNode("plain-1", small, nil),
		testenv.MakeNode("plain-2", small, nil),
		testenv.MakeNode("enc-1", small, hwNode))
	s.must(testenv.CreatePriorityClasses(ctx, s.client, map[string]int32{"low": 100, "high": 1000}))

	// Fill enc-1 and plain-2 with low-priority pods.
	s.must(testenv.CreatePods(ctx, s.client,
		testenv.MakePod(ns, testenv.PodSpec{Name: "low-enc", Annotations: needsHw, CPU: "1500m", Priority: "low"}),
		testenv.MakePod(ns, testenv.PodSpec{Name: "low-plain", CPU: "1500m", Priority: "low", NodeSelector: hostnameSelector("plain-2")})))
	placed, err := testenv.WaitForBound(ctx, s.client, ns, []string{"low-enc", "low-plain"}, 60*time.Second)
	s.must(err)
	if placed["low-enc"] != "enc-1" {
		t.Fatalf("low-enc went to %s, want enc-1 (the only node with %s=true)", placed["low-enc"], hwLabel)
	}

	fallbacksBefore, reusedBefore := s.counter(fallbackMetric), s.counter(reusedMetric)
	s.must(testenv.CreatePods(ctx, s.client,
		testenv.MakePod(ns, testenv.PodSpec{Name: "high-enc", Annotations: needsHw, CPU: "1500m", Priority: "high"})))

	placed, err = testenv.WaitForBound(ctx, s.client, ns, []string{"high-enc"}, 90*time.Second)
	s.must(err)
	if placed["high-enc"] != "enc-1" {
		t.Errorf("high-enc went to %s, want enc-1", placed["high-enc"])
	}
	s.must(waitGone(ctx, s, ns, "low-enc"))
	if _, err := s.client.CoreV1().Pods(ns).Get(ctx, "low-plain", metav1.GetOptions{}); err != nil {
		t.Errorf("low-plain (on plain-2, which HwEncrypt rejects for high-enc) must not be evicted: %v", err)
	}
	fallbacksAfter, reusedAfter := s.counter(fallbackMetric), s.counter(reusedMetric)
	t.Logf("%s: %v -> %v; %s: %v -> %v", reusedMetric, reusedBefore, reusedAfter, fallbackMetric, fallbacksBefore, fallbacksAfter)
	if !s.exposed(reusedMetric) {
		t.Errorf("kube-scheduler's /metrics at %s has no sample of %s", s.scheduler.URL, reusedMetric)
	} else if reusedAfter <= reusedBefore {
		t.Errorf("%s did not increase during preemption (%v -> %v): the dry run's Filter calls were not answered from the PreFilter verdicts", reusedMetric, reusedBefore, reusedAfter)
	}
	if fallbacksAfter != fallbacksBefore {
		t.Errorf("%s moved during preemption (%v -> %v): HwEncrypt promised its filter ignores the node's pods, so its dry-run calls need no RPC", fallbackMetric, fallbacksBefore, fallbacksAfter)
	}
}

// counter reads one of the shim's counters from kube-scheduler's /metrics
// (0 if it has no sample yet).
func (s *stack) counter(name string) float64 {
	s.t.Helper()
	text, err := s.scheduler.Metrics()
	s.must(err)
	v, _ := testenv.MetricSum(text, name)
	return v
}

// exposed reports whether /metrics has a sample of the counter.
func (s *stack) exposed(name string) bool {
	s.t.Helper()
	text, err := s.scheduler.Metrics()
	s.must(err)
	_, found := testenv.MetricSum(text, name)
	return found
}

func waitGone(ctx context.Context, s *stack, ns, pod string) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := s.client.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}
