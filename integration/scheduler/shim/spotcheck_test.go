package shim

import (
	"context"
	"fmt"
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"schedplug.dev/integration/scheduler/shim/abi"
	"schedplug.dev/integration/scheduler/shim/cycle"
)

// filterAll runs one replica's cycle: PreFilter, then both plugins'
// Filter on every node, and returns the nodes HwEncrypt rejected.
func (w *windowEnv) filterAll(t *testing.T, name string) map[string]bool {
	t.Helper()
	state := framework.NewCycleState()
	pod := testPod(name, nil)
	w.runPreFilter(t, []string{"HwEncrypt", "NetworkLatency"}, state, pod, w.nodes)
	rejected := map[string]bool{}
	for _, ni := range w.nodes {
		if st := w.plugins["HwEncrypt"].Filter(context.Background(), state, pod, ni); !st.IsSuccess() {
			rejected[ni.Node().Name] = true
		}
	}
	return rejected
}

func TestSpotCheckCatchesABrokenPromise(t *testing.T) {
	w := newReuseEnv(t, 40, abi.HintFilterIgnoresNodePods|abi.HintFilterIgnoresPodIdentity, true)
	w.mgr.tracker.SetOptions(cycle.Options{EvaluateAllNodes: true, SpotCheckEvery: 2})
	checks := metricValue(t, "schedplug_shim_spot_checks_total")
	caught := metricValue(t, "schedplug_shim_spot_check_mismatches_total", "plugin", "HwEncrypt")

	// Two replicas call and keep their verdicts; the third answers from
	// them; the fourth is a spot check that calls and agrees.
	for i := 0; i < 4; i++ {
		w.filterAll(t, fmt.Sprintf("replica-%d", i))
	}
	if got := w.host.count("PreFilter"); got != 3 {
		t.Fatalf("PreFilter calls = %d after four replicas with a spot check every second reusing cycle, want 3", got)
	}
	if got := metricValue(t, "schedplug_shim_spot_checks_total") - checks; got != 1 {
		t.Fatalf("spot_checks_total went up by %v, want 1", got)
	}
	w.filterAll(t, "replica-4") // reuses (the agreeing check kept its verdicts)
	if got := w.host.count("PreFilter"); got != 3 {
		t.Fatalf("PreFilter calls = %d after an agreeing spot check, want still 3", got)
	}

	// The plugin breaks its promise: node n0003 is rejected now, its node
	// object unchanged. The next spot check calls and sees it; the cycle
	// after it compares, distrusts HwEncrypt and calls.
	w.host.mu.Lock()
	w.host.brokenPromise = map[string]string{"n0003": "HwEncrypt"}
	w.host.mu.Unlock()
	if got := w.filterAll(t, "replica-5"); !got["n0003"] {
		t.Fatalf("the spot check's own cycle: HwEncrypt rejected %v, want the host's answer (n0003 rejected)", got)
	}
	calls := w.host.count("PreFilter")
	w.filterAll(t, "replica-6")
	if got := metricValue(t, "schedplug_shim_spot_check_mismatches_total", "plugin", "HwEncrypt") - caught; got != 1 {
		t.Fatalf("spot_check_mismatches_total{plugin=HwEncrypt} went up by %v, want 1", got)
	}
	// From now on every replica calls: HwEncrypt's verdicts are not kept.
	for i := 7; i < 12; i++ {
		w.filterAll(t, fmt.Sprintf("replica-%d", i))
	}
	if got := w.host.count("PreFilter") - calls; got != 6 {
		t.Fatalf("PreFilter calls = %d for six replicas after the broken promise was caught, want 6", got)
	}
	// Nor are HwEncrypt's pods signed for kube-scheduler's batching; the
	// other plugin still signs.
	pod := testPod("replica-x", nil)
	if _, st := w.plugins["HwEncrypt"].SignPod(context.Background(), pod); st.Code() != fwk.Unschedulable || st.Message() != cycle.SignRefusedCaught {
		t.Fatalf("HwEncrypt's SignPod after the broken promise: %v, want Unschedulable %q", st, cycle.SignRefusedCaught)
	}
	if frags, st := w.plugins["NetworkLatency"].SignPod(context.Background(), pod); !st.IsSuccess() || len(frags) != 1 {
		t.Fatalf("NetworkLatency's SignPod: %v %v, want one fragment", frags, st)
	}

	// A new build of the plugin is trusted again.
	w.host.mu.Lock()
	w.host.brokenPromise = nil
	w.host.mu.Unlock()
	w.mgr.client.Current().Plugin("HwEncrypt").Sha256 = "a-new-build"
	calls = w.host.count("PreFilter")
	for i := 12; i < 16; i++ {
		w.filterAll(t, fmt.Sprintf("replica-%d", i))
	}
	if got := w.host.count("PreFilter") - calls; got >= 4 {
		t.Fatalf("PreFilter calls = %d for four replicas of a new build, want fewer (verdicts kept again)", got)
	}
}
