package shim

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

var _ fwk.PostFilterPlugin = (*Plugin)(nil)

// PostFilter tells the host's recent cycles (`schedplug
// explain`) that kube-scheduler found no node for the pod, with what its
// filters said, in the words its FailedScheduling event begins with. It
// is informational, as the framework asks of such a plugin: it always
// answers Unschedulable without a reason, so kube-scheduler's message,
// its preemption (DefaultPreemption, which runs before it) and the pod's
// nominated node are what they would be without it. Enabled through
// multiPoint, as the other extension points.
func (p *Plugin) PostFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, statuses fwk.NodeToStatusReader) (_ *fwk.PostFilterResult, st *fwk.Status) {
	defer p.recoverStatus(ctx, "PostFilter", &st)
	if c := readCycle(state); c != nil {
		c.Unschedulable(p.filtersSaid(pod, statuses))
	}
	return nil, fwk.NewStatus(fwk.Unschedulable)
}

// filtersSaid is kube-scheduler's own account of the nodes its filters
// rejected ("0/5 nodes are available: 2 node(s) didn't ..., 3
// Insufficient cpu."), made as it makes it from the same statuses, less
// what PostFilter plugins add; "" when the statuses are not the
// framework's own type.
func (p *Plugin) filtersSaid(pod *v1.Pod, statuses fwk.NodeToStatusReader) string {
	m, ok := statuses.(*framework.NodeToStatus)
	if !ok || m == nil {
		return ""
	}
	fit := &framework.FitError{Pod: pod, NumAllNodes: len(p.snapshotNodes()), Diagnosis: framework.Diagnosis{NodeToStatus: m}}
	return fit.Error()
}
