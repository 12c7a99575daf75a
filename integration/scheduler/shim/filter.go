package shim

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/cycle"
)

// Filter is the profile's cycle's answer for this plugin on the node
// (cycle.Cycle.Filter asks the verdict sources in order), as a status, or
// the plugin's failure policy when the host gave none.
func (p *Plugin) Filter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (st *fwk.Status) {
	defer p.recoverStatus(ctx, "Filter", &st)
	node := ni.Node()
	if node == nil {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node not found")
	}
	c := p.cycleOf(state, pod, nil)
	a := c.Filter(ctx, p.name, ni)
	switch {
	case a.Err != nil:
		st = p.noAnswerFilter(ctx, c, pod, a)
	case a.Unfinished != "":
		st = p.unfinishedFilter(ctx, pod, a.Unfinished)
	default:
		st = filterStatus(a.Code, a.Reason, p.name, node.Name)
	}
	// The simulator's annotations show the answers on the snapshot's
	// nodes, not on preemption's what-if copies, nor the answers the
	// framework discards (it cancelled the call).
	if answers := c.Answers(); answers != nil && !callerGaveUp(ctx) && p.snapshotNode(node.Name) == ni {
		answers.Filter(p.name, node.Name, st)
	}
	return st
}

// noAnswerFilter is Filter when the host did not answer: no verdict at all
// when kube-scheduler gave up on the call, else the failure policy (noted
// once per cycle for the cycle's own call, which PreFilter may have noted
// already).
func (p *Plugin) noAnswerFilter(ctx context.Context, c *cycle.Cycle, pod *v1.Pod, a cycle.Answer) *fwk.Status {
	if callerGaveUp(ctx) {
		return p.cancelledFilter(ctx)
	}
	if !a.CycleCall || c.NoteFailure() {
		p.notePolicyApplied(ctx, pod, a.Err)
		if p.policy.FailurePolicy == FailurePolicyFail {
			p.mgr.refuse(pod)
		}
	}
	if p.policy.FailurePolicy == FailurePolicyIgnore {
		return nil
	}
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, p.failureReason(a.Err, a.Timeout))
}

// filterStatus is the host's verdict as kube-scheduler's status.
func filterStatus(code pb.Code, reason, plugin, node string) *fwk.Status {
	switch code {
	case pb.Code_CODE_SUCCESS:
		return nil
	case pb.Code_CODE_UNSCHEDULABLE:
		return fwk.NewStatus(fwk.Unschedulable, reason)
	case pb.Code_CODE_UNSCHEDULABLE_AND_UNRESOLVABLE:
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, reason)
	case pb.Code_CODE_ERROR:
		return fwk.AsStatus(fmt.Errorf("native plugin %s: %s", plugin, reason))
	case pb.Code_CODE_SKIP:
		// Upstream's RunFilterPlugins turns any Filter status that is not
		// Success or a rejection, Skip included, into an error that aborts
		// the cycle; a Skip must not let the node pass.
		msg := fmt.Sprintf("native plugin %s returned Skip from filter on node %q; Skip is only valid from applies() (PreFilter), so it is an error here: return SUCCESS or UNSCHEDULABLE from filter", plugin, node)
		if reason != "" {
			msg += " (" + reason + ")"
		}
		return fwk.AsStatus(errors.New(msg))
	}
	return fwk.AsStatus(fmt.Errorf("native plugin %s: schedplug-host answered unknown code %d (%s)", plugin, code, reason))
}
