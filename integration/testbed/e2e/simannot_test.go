package e2e

import (
	"context"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"schedplug.dev/integration/testbed/testenv"
)

// The simulator annotations (docs/simulator-annotations.md) are checked on
// TestExplainAsksTheRunningHost's cluster, whose profile opts in: the
// host's own copy of the same cycle (`schedplug explain`) is what the
// native plugins decided, and the annotations must say the same.

// simulatorResult waits until the pod carries the simulator annotations
// and decodes them into the simulator's types.
func simulatorResult(t *testing.T, s *stack, ns, name string) *testenv.SimulatorResult {
	t.Helper()
	return simulatorResultOnce(t, s, ns, name, func(*testenv.SimulatorResult) bool { return true })
}

// simulatorResultOnce is the pod's simulator annotations once they satisfy
// done, or the last ones read when they do not within 30s. A Pending pod's
// annotations are rewritten after each of its cycles, so an earlier cycle's
// (one that ran before the scheduler had seen every node) may be there
// first.
func simulatorResultOnce(t *testing.T, s *stack, ns, name string, done func(*testenv.SimulatorResult) bool) *testenv.SimulatorResult {
	t.Helper()
	var last *testenv.SimulatorResult
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		pod, err := s.client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		s.must(err)
		if _, ok := pod.Annotations[testenv.SimulatorSelectedNodeKey]; ok {
			r, err := testenv.ReadSimulatorResult(pod.Annotations)
			if err != nil {
				t.Fatalf("pod %s/%s: %v", ns, name, err)
			}
			if done(r) {
				return r
			}
			last = r
		}
		if time.Now().After(deadline) {
			if last != nil {
				return last
			}
			t.Fatalf("pod %s/%s got no simulator annotations within 30s: %v", ns, name, pod.Annotations)
		}
	}
}

// checkSimulatorAnnotations compares a scheduled pod's annotations with
// the host's copy of its cycle: the node kube-scheduler bound it to, each
// native Filter's verdict per node ("passed" or the reason), each native
// Score's raw score and its normalized score times its weight.
func checkSimulatorAnnotations(t *testing.T, s *stack, ns, name, nodeName string, c testenv.ExplainCycle) {
	t.Helper()
	r := simulatorResult(t, s, ns, name)
	if r.SelectedNode != nodeName || r.SelectedNode != c.ChosenNode {
		t.Errorf("%s: selected-node %q; the pod is on %q, the host kept %q", name, r.SelectedNode, nodeName, c.ChosenNode)
	}
	filters, scores, scored := 0, 0, 0
	for _, n := range c.Explain {
		if len(n.Scores) > 0 {
			scored++
		}
		for _, f := range n.Filters {
			want := f.Reason
			if f.Verdict == "Success" {
				want = "passed"
			}
			if got, ok := r.Filter[n.Node][f.Plugin]; !ok || got != want {
				t.Errorf("%s: filter-result[%s][%s] = %q (present %v); the host kept %s %q", name, n.Node, f.Plugin, got, ok, f.Verdict, f.Reason)
			}
			filters++
		}
		for _, sc := range n.Scores {
			if sc.Skipped {
				continue
			}
			if got := r.Score[n.Node][sc.Plugin]; got != strconv.FormatInt(sc.Raw, 10) {
				t.Errorf("%s: score-result[%s][%s] = %q; the plugin's score was %d", name, n.Node, sc.Plugin, got, sc.Raw)
			}
			if got := r.FinalScore[n.Node][sc.Plugin]; got != strconv.FormatInt(sc.Normalized*sc.Weight, 10) {
				t.Errorf("%s: finalscore-result[%s][%s] = %q; normalized %d x weight %d", name, n.Node, sc.Plugin, got, sc.Normalized, sc.Weight)
			}
			scores++
		}
	}
	if filters == 0 || scores == 0 || len(r.Filter) != len(c.Explain) || len(r.FinalScore) != scored {
		t.Errorf("%s: %d filter and %d score entries compared; filter-result has %d nodes, finalscore-result %d (the host listed %d nodes, %d scored): want every listed node, and some of each", name, filters, scores, len(r.Filter), len(r.FinalScore), len(c.Explain), scored)
	}
	t.Logf("%s: simulator annotations agree with the host's recent cycles: selected-node %s, %d filter and %d score entries", name, r.SelectedNode, filters, scores)
}

// logSimulatorAnnotationCost prints the writer's figures from the
// scheduler's /metrics: patches per pod (one per scheduling cycle), and
// time and size per patch.
func logSimulatorAnnotationCost(t *testing.T, s *stack, pods int) {
	t.Helper()
	m, err := s.scheduler.Metrics()
	s.must(err)
	all, _ := testenv.MetricSum(m, "schedplug_shim_simulator_annotations_total")
	written := metricWith(m, "schedplug_shim_simulator_annotations_total", "result", "written")
	seconds, _ := testenv.MetricSum(m, "schedplug_shim_simulator_annotations_patch_seconds_sum")
	bytes, _ := testenv.MetricSum(m, "schedplug_shim_simulator_annotations_patch_bytes_sum")
	patches, _ := testenv.MetricSum(m, "schedplug_shim_simulator_annotations_patch_seconds_count")
	if written == 0 || patches == 0 {
		t.Fatalf("the scheduler wrote no simulator annotations (results %v)", all)
	}
	t.Logf("simulator annotations: %v results, %v written in %v patches for %d pods; %.2f ms and %.0f bytes per patch",
		all, written, patches, pods, 1000*seconds/patches, bytes/patches)
}
