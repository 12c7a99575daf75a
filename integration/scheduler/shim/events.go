package shim

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"schedplug.dev/integration/scheduler/shim/abi"
	"schedplug.dev/integration/scheduler/shim/simannot"
)

var nodeActions = []struct {
	bit    uint64
	action fwk.ActionType
}{
	{abi.EventNodeAdd, fwk.Add},
	{abi.EventNodeDelete, fwk.Delete},
	{abi.EventNodeUpdateLabel, fwk.UpdateNodeLabel},
	{abi.EventNodeUpdateTaint, fwk.UpdateNodeTaint},
	{abi.EventNodeUpdateAllocatable, fwk.UpdateNodeAllocatable},
	{abi.EventNodeUpdateAnnotation, fwk.UpdateNodeAnnotation},
	{abi.EventNodeUpdateCondition, fwk.UpdateNodeCondition},
}

var podActions = []struct {
	bit    uint64
	action fwk.ActionType
}{
	{abi.EventPodAdd, fwk.Add},
	{abi.EventPodDelete, fwk.Delete},
	{abi.EventPodUpdateLabel, fwk.UpdatePodLabel},
}

// eventsFor maps a plugin's declared SCHEDPLUG_EVENT_* bits to the cluster
// events that may make a pod it rejected schedulable. 0 (or bits this shim
// does not know, from a newer SDK) means every node and pod event. No
// QueueingHintFn: the pod is always requeued on a matching event, which is
// what the plugin asked for.
//
// The pod being scheduled is always re-evaluated when it is updated itself
// (TargetPod): native plugins read its labels, tolerations, requests and
// annotations. kube-scheduler reports a change of its annotations alone as
// the general Pod/Update, as it reports the status it writes itself after
// each failed attempt, so that registration has a hint that tells the two
// apart (docs/shim.md, TestPendingPodOwnUpdatesThatRequeue).
func eventsFor(bits uint64) []fwk.ClusterEventWithHint {
	if bits == 0 || bits&^abi.EventAll != 0 {
		bits = abi.EventAll
	}
	var node, pod fwk.ActionType
	for _, a := range nodeActions {
		if bits&a.bit != 0 {
			node |= a.action
		}
	}
	for _, a := range podActions {
		if bits&a.bit != 0 {
			pod |= a.action
		}
	}
	var out []fwk.ClusterEventWithHint
	if node != 0 {
		out = append(out, fwk.ClusterEventWithHint{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: node}})
	}
	if pod != 0 {
		out = append(out, fwk.ClusterEventWithHint{Event: fwk.ClusterEvent{Resource: assignedPod, ActionType: pod}})
	}
	out = append(out,
		fwk.ClusterEventWithHint{Event: fwk.ClusterEvent{Resource: targetPod, ActionType: fwk.UpdatePodLabel | fwk.UpdatePodToleration | fwk.UpdatePodScaleDown}},
		fwk.ClusterEventWithHint{Event: fwk.ClusterEvent{Resource: targetPod, ActionType: fwk.Update}, QueueingHintFn: annotationsChanged})
	return out
}

// annotationsChanged requeues a pending pod whose own update changed its
// annotations, but not for the simulator's result annotations the shim
// writes onto it after a cycle (simannot), nor for an update of its
// status alone.
func annotationsChanged(_ klog.Logger, _ *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	oldPod, okOld := oldObj.(*v1.Pod)
	newPod, okNew := newObj.(*v1.Pod)
	if !okOld || !okNew {
		return fwk.Queue, nil // not what kube-scheduler sends: requeue, as with no hint
	}
	changed := func(a, b map[string]string) bool {
		for k, v := range a {
			if w, ok := b[k]; (!ok || w != v) && !strings.HasPrefix(k, simannot.KeyPrefix) {
				return true
			}
		}
		return false
	}
	if changed(oldPod.Annotations, newPod.Annotations) || changed(newPod.Annotations, oldPod.Annotations) {
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}
