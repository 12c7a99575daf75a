package shim

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"schedplug.dev/integration/scheduler/shim/abi"
	"schedplug.dev/integration/scheduler/shim/simannot"
)

// TestPendingPodOwnUpdatesThatRequeue holds docs/shim.md ("EnqueueExtensions")
// to what kube-scheduler's queue does with an update of a pod that a native
// plugin rejected: the queue turns the update into events
// (framework.PodSchedulingPropertiesChange) and requeues the pod when one
// matches what the rejecting plugin registered (framework.MatchClusterEvents)
// and that registration's hint, if any, says Queue. A label, toleration,
// lowered request or annotation requeues it, whatever events the plugin
// declared; the status kube-scheduler writes after a failed attempt and the
// simulator annotations the shim writes do not.
func TestPendingPodOwnUpdatesThatRequeue(t *testing.T) {
	requeues := func(registered []fwk.ClusterEventWithHint, oldPod, newPod *v1.Pod) bool {
		for _, ev := range pendingPodUpdateEvents(newPod, oldPod) {
			for _, r := range registered {
				if !framework.MatchClusterEvents(r.Event, ev) {
					continue
				}
				if r.QueueingHintFn == nil {
					return true
				}
				hint, err := r.QueueingHintFn(klog.Background(), newPod, oldPod, newPod)
				if err != nil || hint == fwk.Queue {
					return true
				}
			}
		}
		return false
	}
	base := testPod("p", map[string]string{"app": "a"})
	base.ResourceVersion = "1"
	base.Annotations = map[string]string{"example.com/owner": "team-a"}
	update := func(change func(p *v1.Pod)) *v1.Pod {
		p := base.DeepCopy()
		p.ResourceVersion = "2"
		change(p)
		return p
	}
	for _, c := range []struct {
		what    string
		newPod  *v1.Pod
		requeue bool
	}{
		{"a label added", update(func(p *v1.Pod) { p.Labels["zone"] = "z1" }), true},
		{"a toleration added", update(func(p *v1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: "spot", Operator: v1.TolerationOpExists})
		}), true},
		{"an annotation added", update(func(p *v1.Pod) { p.Annotations["example.com/tier"] = "gold" }), true},
		{"an annotation changed", update(func(p *v1.Pod) { p.Annotations["example.com/owner"] = "team-b" }), true},
		{"an annotation removed", update(func(p *v1.Pod) { delete(p.Annotations, "example.com/owner") }), true},
		{"its status alone (kube-scheduler's PodScheduled condition)", update(func(p *v1.Pod) {
			p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: "Unschedulable"})
		}), false},
		{"the simulator's result annotations alone", update(func(p *v1.Pod) { p.Annotations[simannot.FilterResultKey] = "{}" }), false},
	} {
		for _, bits := range []uint64{0, abi.EventNodeAdd, abi.EventAll} {
			if got := requeues(eventsFor(bits), base, c.newPod); got != c.requeue {
				t.Errorf("events %#x, %s: requeued %v, want %v", bits, c.what, got, c.requeue)
			}
		}
	}
}
