package e2e

import (
	"context"
	"regexp"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"

	"schedplug.dev/integration/testbed/testenv"
)

// nominatedRE finds the nominated node PodDataProbe reports ("-": none).
var nominatedRE = regexp.MustCompile(`nominated=(\S+)`)

// checkNominatedNodeAfterPreemption runs a real preemption on the stack of
// TestPodAndNodeDataOnARealCluster (PodDataProbe in the profile, the
// PriorityClass probe-high, NodeUnschedulable off) and checks that a native
// plugin then sees the pod's status.nominatedNodeName. node-p has room for
// one of two pods: the victim (priority 0) is bound there; the preemptor
// (probe-high, pinned to node-p) does not fit, so kube-scheduler's
// DefaultPreemption evicts the victim and nominates node-p. PodDataProbe
// passes a pod labelled probe-after-nomination while its nominated node is
// empty (so the preemption's dry run finds the node) and rejects it once it
// is set, with a reason naming it, which the FailedScheduling event
// carries back.
func checkNominatedNodeAfterPreemption(t *testing.T, s *stack, ns string) {
	t.Helper()
	start := time.Now()
	ctx := s.ctx()
	small := testenv.NodeResources{CPU: "1", Memory: "4Gi", Pods: 110}
	s.createNodes(ctx, testenv.MakeNode("node-p", small, nil))
	victim := testenv.MakePod(ns, testenv.PodSpec{Name: "victim", CPU: "800m"})
	victim.Spec.NodeName = "node-p"
	s.must(testenv.CreatePods(ctx, s.client, victim))
	waitForPodsOn(t, ctx, s, ns, "node-p", 1)

	preemptor := testenv.MakePod(ns, testenv.PodSpec{Name: "preemptor", CPU: "500m", Priority: "probe-high", NodeSelector: hostnameSelector("node-p")})
	preemptor.Labels = map[string]string{"probe-after-nomination": "yes"}
	s.must(testenv.CreatePods(ctx, s.client, preemptor))

	// The probe's reason, from any FailedScheduling event of the preemptor
	// (its first ones come before the nomination and have none).
	var seen, nominated string
	sel := fields.Set{"involvedObject.kind": "Pod", "involvedObject.name": "preemptor", "reason": "FailedScheduling"}.AsSelector().String()
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		events, err := s.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			return false, nil
		}
		for _, e := range events.Items {
			if m := nominatedRE.FindStringSubmatch(e.Message); m != nil && m[1] != "-" {
				seen, nominated = e.Message, m[1]
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		p, _ := s.client.CoreV1().Pods(ns).Get(ctx, "preemptor", metav1.GetOptions{})
		state := "not found"
		if p != nil {
			state = "node " + p.Spec.NodeName + ", nominated node " + p.Status.NominatedNodeName
		}
		last, _ := testenv.FailedSchedulingMessage(ctx, s.client, ns, "preemptor")
		t.Fatalf("no FailedScheduling event of pod %s/preemptor shows PodDataProbe seeing a nominated node (pod: %s; last event: %q): %v", ns, state, last, err)
	}
	t.Logf("FailedScheduling message for %s/preemptor: %q", ns, seen)
	if nominated != "node-p" {
		t.Errorf("PodDataProbe saw nominated node %q for the preemptor, want node-p (the node whose pod was preempted)", nominated)
	}
	// The nomination came from a real preemption: the victim was evicted.
	s.must(waitGone(ctx, s, ns, "victim"))
	if p, err := s.client.CoreV1().Pods(ns).Get(ctx, "preemptor", metav1.GetOptions{}); err == nil {
		t.Logf("preemptor now: node %q, nominated node %q, phase %s", p.Spec.NodeName, p.Status.NominatedNodeName, p.Status.Phase)
	}
	t.Logf("the preemption check took %v on the running cluster", time.Since(start).Round(10*time.Millisecond))
}
