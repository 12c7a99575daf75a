package cycle

import (
	"context"

	fwk "k8s.io/kube-scheduler/framework"

	"schedplug.dev/integration/scheduler/shim/abi"
)

// The node's own verdict for a copy whose pods alone changed, the fourth
// verdict source: a preemption dry run removes victims from a copy of a
// snapshot node, the nominated-pods pass adds pods to one; kube-scheduler
// copies the snapshot's NodeInfo and keeps its Node object. When the plugin
// promised that its filter ignores the node's pods (plugin.h's
// SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS), the verdict the node got in the
// cycle's call is its verdict on the copy. Counted in
// schedplug_shim_filter_verdicts_reused_total.

// fromPodsChanged answers Filter on such a copy; ok=false for any other
// NodeInfo, a plugin without the promise, or a node an earlier plugin
// rejected (the host never ran this one there, and on the copy the earlier
// one may pass). A snapshot node outside the call's window gets its
// verdict from the cycle's FilterNodes call, made here if the cycle's
// Filter has not made it (a preemptor's Filter never reaches this plugin
// on full nodes; its dry runs do, on copies).
func (c *Cycle) fromPodsChanged(ctx context.Context, r *callResult, idx int, plugin string, slot uint32, ni fwk.NodeInfo) (Answer, bool) {
	if info := r.sess.Plugin(plugin); info == nil || info.GetHints()&abi.HintFilterIgnoresNodePods == 0 || c.snapshot == nil {
		return Answer{}, false
	}
	snap := c.snapshot(ni.Node().Name)
	if snap == nil || snap.Node() != ni.Node() {
		return Answer{}, false
	}
	v, ok, outside := r.lookup(idx, slot, snap, c.podGroupCycle, true)
	if outside {
		if err, _ := c.evaluateMore(ctx, r, slot); err == nil {
			v, ok, _ = r.lookup(idx, slot, snap, c.podGroupCycle, true)
		}
	}
	if ok {
		filterVerdictsReused.Inc()
	}
	return v.answer(), ok
}
