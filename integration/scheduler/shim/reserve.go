package shim

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"schedplug.dev/integration/scheduler/shim/simannot"
)

var _ fwk.ReservePlugin = (*Plugin)(nil)

// Reserve passes the node kube-scheduler chose to the host's record of
// recent cycles (`schedplug explain`) and, for a profile that writes the
// simulator's annotations, hands the cycle's record to their writer; it
// never fails the pod. Enabled through multiPoint, as the other extension
// points.
func (p *Plugin) Reserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) (st *fwk.Status) {
	defer p.recoverStatus(ctx, "Reserve", &st)
	c := readCycle(state)
	if c == nil {
		return nil
	}
	c.Reserved(nodeName)
	if rec := c.Record(); rec != nil {
		var scores simannot.Scores
		if s, ok := c.ScoresMade(); ok && s.Err == nil {
			scores = s
		}
		p.mgr.annotations.reserved(rec, nodeName, scores)
	}
	return nil
}

// Unreserve undoes nothing of the shim's; it tells the host's record that
// the reservation was undone (a later Reserve plugin, Permit, PreBind or
// the binding failed), beside the chosen node it keeps.
func (p *Plugin) Unreserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) {
	var st *fwk.Status // Unreserve has no status: a panic is logged only
	defer p.recoverStatus(ctx, "Unreserve", &st)
	if c := readCycle(state); c != nil {
		c.Unreserved(nodeName)
	}
}
