package shim

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

var _ fwk.ReservePlugin = (*Plugin)(nil)

// Reserve passes the node kube-scheduler chose to the host's record of
// recent cycles (`schedplug explain`); it never fails the pod. Enabled
// through multiPoint, as the other extension points.
func (p *Plugin) Reserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) (st *fwk.Status) {
	defer p.recoverStatus(ctx, "Reserve", &st)
	if c := readCycle(state); c != nil {
		c.Reserved(nodeName)
	}
	return nil
}

// Unreserve has nothing to undo: the record keeps the chosen node even
// when a later plugin or the binding fails, as the cycle chose it.
func (p *Plugin) Unreserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) {
}
