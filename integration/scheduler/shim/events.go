package shim

import (
	fwk "k8s.io/kube-scheduler/framework"
)

// SCHEDPLUG_EVENT_* bits of sdk/include/schedplug/plugin.h.
const (
	eventNodeAdd               uint64 = 1 << 0
	eventNodeDelete            uint64 = 1 << 1
	eventNodeUpdateLabel       uint64 = 1 << 2
	eventNodeUpdateTaint       uint64 = 1 << 3
	eventNodeUpdateAllocatable uint64 = 1 << 4
	eventNodeUpdateAnnotation  uint64 = 1 << 5
	eventNodeUpdateCondition   uint64 = 1 << 6
	eventPodAdd                uint64 = 1 << 7
	eventPodDelete             uint64 = 1 << 8
	eventPodUpdateLabel        uint64 = 1 << 9
	eventAll                   uint64 = 1<<10 - 1
)

var nodeActions = []struct {
	bit    uint64
	action fwk.ActionType
}{
	{eventNodeAdd, fwk.Add},
	{eventNodeDelete, fwk.Delete},
	{eventNodeUpdateLabel, fwk.UpdateNodeLabel},
	{eventNodeUpdateTaint, fwk.UpdateNodeTaint},
	{eventNodeUpdateAllocatable, fwk.UpdateNodeAllocatable},
	{eventNodeUpdateAnnotation, fwk.UpdateNodeAnnotation},
	{eventNodeUpdateCondition, fwk.UpdateNodeCondition},
}

var podActions = []struct {
	bit    uint64
	action fwk.ActionType
}{
	{eventPodAdd, fwk.Add},
	{eventPodDelete, fwk.Delete},
	{eventPodUpdateLabel, fwk.UpdatePodLabel},
}

// eventsFor maps a plugin's declared SCHEDPLUG_EVENT_* bits to the cluster
// events that may make a pod it rejected schedulable. 0 (or bits this shim
// does not know, from a newer SDK) means every node and pod event. No
// QueueingHintFn: the pod is always requeued on a matching event, which is
// what the plugin asked for.
//
// The pod being scheduled is always re-evaluated when it is updated itself
// (TargetPod): native plugins read its labels, tolerations and requests.
func eventsFor(bits uint64) []fwk.ClusterEventWithHint {
	if bits == 0 || bits&^eventAll != 0 {
		bits = eventAll
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
