package shim

import (
	fwk "k8s.io/kube-scheduler/framework"

	"schedplug.dev/integration/scheduler/shim/abi"
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
// (TargetPod): native plugins read its labels, tolerations and requests.
// An update of its annotations alone is kube-scheduler's general Pod/Update,
// which matches none of these and does not requeue it (docs/shim.md,
// TestPendingPodOwnUpdatesThatRequeue).
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
		out = append(out, fwk.ClusterEventWithHint{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: pod}})
	}
	out = append(out, fwk.ClusterEventWithHint{Event: fwk.ClusterEvent{Resource: fwk.TargetPod, ActionType: fwk.UpdatePodLabel | fwk.UpdatePodToleration | fwk.UpdatePodScaleDown}})
	return out
}
