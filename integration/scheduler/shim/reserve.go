package shim

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/simannot"
)

var _ fwk.ReservePlugin = (*Plugin)(nil)

// Reserve runs the reserve hook of the profile's native plugins that have
// one (one host call for them all, made by the first; hooks.go), and
// passes the node kube-scheduler chose to the host's recent
// cycles (`schedplug explain`) and, for a profile that writes the
// simulator's annotations, hands the cycle's answers to their writer.
// Enabled through multiPoint, as the other extension points.
func (p *Plugin) Reserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) (st *fwk.Status) {
	defer p.recoverStatus(ctx, "Reserve", &st)
	if c := readCycle(state); c != nil {
		c.Reserved(nodeName)
		if answers := c.Answers(); answers != nil {
			var scores simannot.Scores
			if s, ok := c.ScoresMade(); ok && s.Err == nil {
				scores = s
			}
			p.mgr.annotations.reserved(answers, nodeName, scores)
		}
	}
	if !p.hasHook(reservePoint) {
		return nil
	}
	a := podHooksOf(state, pod).reserveAnswer().get(func() (*pb.ReserveResponse, []string, time.Duration, error) {
		return callAtNode(ctx, p, state, pod, nodeName, reservePoint, p.mgr.client.Reserve)
	})
	return p.answerStatus(ctx, reservePoint, pod, a.err, a.timeout, a.resp.GetFailed(), a.plugins)
}

// Unreserve runs the unreserve hook of the profile's native plugins that
// have reserve or unreserve: once per reservation, from the first
// Unreserve kube-scheduler makes (it calls every Reserve plugin's); and
// tells the host's recent cycles that the reservation was undone (a later
// Reserve plugin, Permit, PreBind or the binding failed), beside the
// chosen node it keeps.
func (p *Plugin) Unreserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) {
	var st *fwk.Status // Unreserve has no status: a panic is logged only
	defer p.recoverStatus(ctx, "Unreserve", &st)
	if c := readCycle(state); c != nil {
		c.Unreserved(nodeName)
	}
	if !p.hasHook(unreservePoint) || !podHooksOf(state, pod).takeUnreserve() {
		return
	}
	// What reserve took must be released even when kube-scheduler gave up
	// on the pod's binding.
	_, plugins, _, err := callAtNode(context.WithoutCancel(ctx), p, state, pod, nodeName, unreservePoint, p.mgr.client.Unreserve)
	if err != nil {
		klog.FromContext(ctx).Error(err, "schedplug-host did not run the native plugins' unreserve; what their reserve took for the pod stays held until they release it (a restarted host starts without it)",
			"plugins", plugins, "profile", p.profile, "pod", klog.KObj(pod), "node", nodeName)
	}
}
