package shim

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/session"
	"schedplug.dev/integration/scheduler/shim/wire"
)

// preEnqueue is PreEnqueue for a native plugin with the pre_enqueue hook:
// the profile's one PreEnqueue call for the pod, made by its first such
// plugin; the one it names keeps the pod out. A host that cannot answer
// gets the failure policy: Ignore admits the pod; Fail keeps it out until
// the host answers again, when the pod is re-activated (Manager.refuse).
func (p *Plugin) preEnqueue(ctx context.Context, pod *v1.Pod) (st *fwk.Status) {
	defer p.recoverStatus(ctx, "PreEnqueue", &st)
	if !p.hasHook(preEnqueuePoint) {
		return nil
	}
	plugins := p.mgr.hookPlugins(p.mgr.client.Current(), p.profile, preEnqueuePoint)
	first := len(plugins) == 0 || plugins[0] == p.name
	last := len(plugins) == 0 || plugins[len(plugins)-1] == p.name
	entry, a := p.mgr.enqueues.answer(p.profile, pod, first)
	a.get(func() (*pb.PreEnqueueResponse, []string, time.Duration, error) {
		req := &pb.PreEnqueueRequest{SchedulerName: p.profile, Pod: wire.Pod(pod, p.mgr.podData())}
		return hookCall(ctx, p.mgr, p.profile, preEnqueuePoint, func(ctx context.Context, s *session.Session, plugins []string) (*pb.PreEnqueueResponse, error) {
			req.SessionId, req.Plugins = s.ID, plugins
			return p.mgr.client.PreEnqueue(ctx, s, req)
		})
	})
	defer func() {
		// kube-scheduler stops at the first plugin that keeps the pod out.
		if st != nil || last {
			p.mgr.enqueues.done(p.profile, pod, entry)
		}
	}()
	if a.err != nil {
		p.notePolicyApplied(ctx, pod, a.err)
		if p.policy.FailurePolicy == FailurePolicyIgnore {
			return nil
		}
		p.mgr.refuse(pod)
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "PreEnqueue: "+p.failureReason(a.err, a.timeout))
	}
	g := a.resp.GetGated()
	if g == nil || !p.owns(g, a.plugins) {
		return nil
	}
	if pb.Code(g.GetCode()) == pb.Code_CODE_ERROR {
		klog.FromContext(ctx).Info("native plugin failed in pre_enqueue; the pod stays out of the queue until one of the plugin's events", "plugin", g.GetPlugin(), "pod", klog.KObj(pod), "reason", g.GetReason())
		return fwk.AsStatus(fmt.Errorf("native plugin %s failed in PreEnqueue: %s", g.GetPlugin(), g.GetReason()))
	}
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, g.GetReason())
}

// enqueueAnswersCap bounds the PreEnqueue answers kept for the profile's
// later plugins (an answer whose later plugins kube-scheduler does not
// run is dropped with the others once this many wait).
const enqueueAnswersCap = 10000

// enqueueAnswers hold each pod's PreEnqueue answer from its profile's
// first plugin with the hook until the last one read it. PreEnqueue has no
// CycleState: the pod object, the same for every plugin of one pass,
// tells a pass from the next.
type enqueueAnswers struct {
	mu sync.Mutex
	m  map[enqueueKey]*enqueueEntry
}

type enqueueKey struct {
	profile string
	uid     string
}

type enqueueEntry struct {
	pod *v1.Pod
	a   *hookAnswer[*pb.PreEnqueueResponse]
}

// answer is the pass's answer: a new one for the profile's first plugin
// with the hook, or when no plugin of this pass asked yet.
func (e *enqueueAnswers) answer(profile string, pod *v1.Pod, first bool) (*enqueueEntry, *hookAnswer[*pb.PreEnqueueResponse]) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = map[enqueueKey]*enqueueEntry{}
	}
	k := enqueueKey{profile, string(pod.UID)}
	if cur := e.m[k]; cur != nil && !first && cur.pod == pod {
		return cur, cur.a
	}
	if len(e.m) >= enqueueAnswersCap {
		clear(e.m)
	}
	cur := &enqueueEntry{pod: pod, a: &hookAnswer[*pb.PreEnqueueResponse]{}}
	e.m[k] = cur
	return cur, cur.a
}

// done forgets the pass's answer once no plugin of the pass will read it.
func (e *enqueueAnswers) done(profile string, pod *v1.Pod, entry *enqueueEntry) {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := enqueueKey{profile, string(pod.UID)}
	if e.m[k] == entry {
		delete(e.m, k)
	}
}
