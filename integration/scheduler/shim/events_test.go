package shim

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"schedplug.dev/integration/scheduler/shim/abi"
)

// TestPendingPodOwnUpdatesThatRequeue holds docs/shim.md ("EnqueueExtensions")
// to what kube-scheduler's queue does with an update of a pod that a native
// plugin rejected: the queue turns the update into events
// (framework.PodSchedulingPropertiesChange) and requeues the pod only when
// one matches what the rejecting plugin registered (framework.MatchClusterEvents).
// A label, toleration or lowered request requeues it; an annotation alone
// does not (it is the general Pod/Update, which the shim does not register),
// whatever events the plugin declared.
func TestPendingPodOwnUpdatesThatRequeue(t *testing.T) {
	requeues := func(registered []fwk.ClusterEventWithHint, oldPod, newPod *v1.Pod) bool {
		for _, ev := range framework.PodSchedulingPropertiesChange(newPod, oldPod, true) {
			for _, r := range registered {
				if framework.MatchClusterEvents(r.Event, ev) {
					return true
				}
			}
		}
		return false
	}
	base := testPod("p", map[string]string{"app": "a"})
	base.ResourceVersion = "1"
	labeled := base.DeepCopy()
	labeled.ResourceVersion = "2"
	labeled.Labels["zone"] = "z1"
	annotated := base.DeepCopy()
	annotated.ResourceVersion = "2"
	annotated.Annotations = map[string]string{"example.com/tier": "gold"}
	tolerating := base.DeepCopy()
	tolerating.ResourceVersion = "2"
	tolerating.Spec.Tolerations = append(tolerating.Spec.Tolerations, v1.Toleration{Key: "spot", Operator: v1.TolerationOpExists})

	for _, bits := range []uint64{0, abi.EventNodeAdd, abi.EventAll} {
		evs := eventsFor(bits)
		if !requeues(evs, base, labeled) {
			t.Errorf("events %#x: a label added to the pending pod does not requeue it", bits)
		}
		if !requeues(evs, base, tolerating) {
			t.Errorf("events %#x: a toleration added to the pending pod does not requeue it", bits)
		}
		if requeues(evs, base, annotated) {
			t.Errorf("events %#x: an annotation alone requeues the pending pod; docs/shim.md says it does not", bits)
		}
	}
}
