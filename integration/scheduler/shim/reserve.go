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

// Unreserve has nothing to undo: the record keeps the chosen node even
// when a later plugin or the binding fails, as the cycle chose it.
func (p *Plugin) Unreserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) {
}
