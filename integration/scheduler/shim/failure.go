package shim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// What a plugin answers when schedplug-host gave no verdict: its
// failurePolicy (args.go), in words that name the plugin and the cause.

// callerGaveUp says whether kube-scheduler no longer wants the answer: its
// context is cancelled, or its deadline has passed. The second matters
// because the host's cancellation of an expired stream can reach the
// client before the client's own timer marks the context done, and such a
// call must not count as a host failure.
func callerGaveUp(ctx context.Context) bool { return callerEnd(ctx) != nil }

// callerEnd is ctx.Err(), or context.DeadlineExceeded once the deadline
// has passed although the context's timer has not fired yet.
func callerEnd(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if deadline, ok := ctx.Deadline(); ok && !time.Now().Before(deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// cancelledFilter answers a Filter whose context kube-scheduler cancelled
// (it found enough feasible nodes, or a preemption dry run has enough
// candidates): the framework discards the answer, so this is no host
// failure: no failure policy, no outage log, no pod remembered. The node
// is not reported feasible, since nothing was evaluated.
func (p *Plugin) cancelledFilter(ctx context.Context) *fwk.Status {
	klog.FromContext(ctx).V(5).Info("schedplug Filter call cancelled by kube-scheduler", "plugin", p.name)
	return fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("plugin %s: kube-scheduler cancelled the call to schedplug-host", p.name))
}

// unfinishedFilter applies the failure policy to a plugin the host did not
// finish in time (the host answered; this plugin was too slow, or did not
// get to run). The host is fine, so the pod is not remembered for
// re-activation.
func (p *Plugin) unfinishedFilter(ctx context.Context, pod *v1.Pod, why string) *fwk.Status {
	policyApplied.WithLabelValues(p.name, string(p.policy.FailurePolicy)).Inc()
	klog.FromContext(ctx).V(2).Info("native plugin did not finish on schedplug-host; applying failurePolicy",
		"plugin", p.name, "profile", p.profile, "pod", klog.KObj(pod), "policy", p.policy.FailurePolicy, "why", why)
	if p.policy.FailurePolicy == FailurePolicyIgnore {
		return nil
	}
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, p.unfinishedReason(why))
}

func (p *Plugin) unfinishedReason(why string) string {
	return fmt.Sprintf("%s; plugin %s has failurePolicy Fail", why, p.name)
}

func (p *Plugin) notePolicyApplied(ctx context.Context, pod *v1.Pod, err error) {
	policyApplied.WithLabelValues(p.name, string(p.policy.FailurePolicy)).Inc()
	klog.FromContext(ctx).V(2).Info("schedplug-host did not answer; applying failurePolicy",
		"plugin", p.name, "profile", p.profile, "pod", klog.KObj(pod), "policy", p.policy.FailurePolicy, "err", err)
}

// failureReason says why the host gave no verdict, naming the plugin and
// the real cause. It is stable per kind of failure within a cycle so that
// the FailedScheduling event aggregates nodes: "0/5 nodes are available:
// 5 <reason>". `timeout` is the deadline of the call that failed.
func (p *Plugin) failureReason(err error, timeout time.Duration) string {
	code := status.Code(err)
	msg := status.Convert(err).Message()
	// gRPC's own deadline error says "context deadline exceeded", or, when
	// the server's cancellation of the expired stream arrives before the
	// client's timer fires, "stream terminated by RST_STREAM"; a
	// DeadlineExceeded with another message is the host's answer (e.g. the
	// session is busy) and is reported as such below.
	clientDeadline := errors.Is(err, context.DeadlineExceeded) ||
		(code == codes.DeadlineExceeded && (msg == "" ||
			strings.Contains(msg, "context deadline exceeded") ||
			strings.Contains(msg, "stream terminated by RST_STREAM")))
	switch {
	case clientDeadline:
		return fmt.Sprintf("schedplug-host did not answer within %v; plugin %s has failurePolicy Fail", timeout, p.name)
	case code == codes.Unavailable:
		return fmt.Sprintf("schedplug-host could not be reached (%s); plugin %s has failurePolicy Fail", code, p.name)
	case errors.Is(err, context.Canceled) || code == codes.Canceled:
		return fmt.Sprintf("the call to schedplug-host was cancelled (%s); plugin %s has failurePolicy Fail", code, p.name)
	}
	return fmt.Sprintf("schedplug-host returned error %s: %s; plugin %s has failurePolicy Fail", code, msg, p.name)
}
