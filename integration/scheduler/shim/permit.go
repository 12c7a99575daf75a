package shim

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// maxPermitWait is the longest a native plugin's permit may hold a pod
// (SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS, kube-scheduler's own limit); a wait
// without a timeout gets it.
const maxPermitWait = 15 * time.Minute

// permit is Permit for a native plugin with the permit hook: the
// profile's one Permit call (made by its first such plugin), of which
// each plugin returns its own part: its rejection, or Wait with its own
// timeout, so that kube-scheduler's waiting pod waits for each plugin by
// name until the host's decision (applyDecisions) or the timeout.
func (p *Plugin) permit(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) (st *fwk.Status, wait time.Duration) {
	defer p.recoverStatus(ctx, "Permit", &st)
	if !p.hasHook(permitPoint) {
		return nil, 0
	}
	a := podHooksOf(state, pod).permitAnswer().get(func() (*pb.PermitResponse, []string, time.Duration, error) {
		return callAtNode(ctx, p, state, pod, nodeName, permitPoint, p.mgr.client.Permit)
	})
	if st := p.answerStatus(ctx, permitPoint, pod, a.err, a.timeout, a.resp.GetFailed(), a.plugins); st != nil || a.err != nil {
		return st, 0
	}
	for _, w := range a.resp.GetWaits() {
		if w.GetPlugin() != p.name {
			continue
		}
		wait = time.Duration(w.GetTimeoutMs()) * time.Millisecond
		if wait <= 0 || wait > maxPermitWait {
			wait = maxPermitWait
		}
		return fwk.NewStatus(fwk.Wait, "waiting for native plugin "+p.name+" to allow the pod"), wait
	}
	return nil, 0
}

// applyDecisions passes the host's decisions about waiting pods to
// kube-scheduler's waiting pods of their profiles. A pod that no longer
// waits (it timed out, was rejected, or was deleted) is left alone.
func (m *Manager) applyDecisions(ctx context.Context, decisions []*pb.WaitingPodDecision) {
	logger := klog.FromContext(ctx)
	for _, d := range decisions {
		h := m.registry.handle(d.GetSchedulerName())
		if h == nil {
			logger.Info("schedplug-host decided about a waiting pod of a profile this scheduler does not have; ignored", "profile", d.GetSchedulerName(), "plugin", d.GetPlugin(), "podUID", d.GetPodUid())
			continue
		}
		wp := h.GetWaitingPod(types.UID(d.GetPodUid()))
		if wp == nil {
			waitingDecisions.WithLabelValues("gone").Inc()
			logger.V(4).Info("a native plugin decided about a pod that no longer waits", "profile", d.GetSchedulerName(), "plugin", d.GetPlugin(), "podUID", d.GetPodUid(), "allow", d.GetAllow())
			continue
		}
		if d.GetAllow() {
			waitingDecisions.WithLabelValues("allow").Inc()
			wp.Allow(d.GetPlugin())
			continue
		}
		waitingDecisions.WithLabelValues("reject").Inc()
		reason := d.GetReason()
		if reason == "" {
			reason = "rejected by native plugin " + d.GetPlugin()
		}
		wp.Reject(d.GetPlugin(), reason)
	}
}
