package shim

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/session"
	"schedplug.dev/integration/scheduler/shim/wire"
)

// The ABI v1.6 hooks (Reserve, Unreserve, Permit, PreBind, PreEnqueue):
// one host call per extension point and pod for a profile, which runs the
// hook of every native plugin of the profile that has it, in profile
// order. The first of those plugins kube-scheduler calls makes the call;
// the others read its answer (kept in the pod's CycleState, or for
// PreEnqueue, which has none, in Manager.enqueues) and each returns its
// own part of it, so kube-scheduler sees every plugin's status by name.

// hookPoint is one extension point of the ABI v1.6 hooks.
type hookPoint uint8

const (
	reservePoint hookPoint = iota
	unreservePoint
	permitPoint
	preBindPoint
	preEnqueuePoint
	hookPoints
)

var hookPointNames = [hookPoints]string{"Reserve", "Unreserve", "Permit", "PreBind", "PreEnqueue"}

func (k hookPoint) String() string { return hookPointNames[k] }

// implementedBy says whether the host reports the hook for the plugin
// (has_reserve stands for reserve or unreserve: kube-scheduler's Reserve
// and Unreserve go together).
func (k hookPoint) implementedBy(info *pb.PluginInfo) bool {
	switch k {
	case reservePoint, unreservePoint:
		return info.GetHasReserve()
	case permitPoint:
		return info.GetHasPermit()
	case preBindPoint:
		return info.GetHasPreBind()
	case preEnqueuePoint:
		return info.GetHasPreEnqueue()
	}
	return false
}

// hookSet is which hooks a native plugin had when its factory ran (known:
// the host answered the start-up Handshake). The host refuses a reload
// that changes them, so they hold for the scheduler's life.
type hookSet struct {
	known bool
	has   [hookPoints]bool
}

func hooksOf(info *pb.PluginInfo) hookSet {
	var h hookSet
	if info == nil {
		return h
	}
	h.known = true
	for k := range hookPoints {
		h.has[k] = k.implementedBy(info)
	}
	return h
}

// registers says whether the factory registers the extension point k:
// when the plugin has the hook, or when the host did not say at start.
func (h hookSet) registers(k hookPoint) bool { return !h.known || h.has[k] }

// hasHook says whether the native plugin has hook k: as the session
// reports it, else as it was at start; true when neither says (the call
// then meets the host's absence and the failure policy).
func (p *Plugin) hasHook(k hookPoint) bool {
	if info := p.mgr.pluginInfo(p.name); info != nil {
		return k.implementedBy(info)
	}
	return p.hooks.registers(k)
}

// hookPlugins are the profile's native plugins that have hook k, in
// profile order, as session s reports them (nil without a session).
func (m *Manager) hookPlugins(s *session.Session, profile string, k hookPoint) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, n := range m.registry.Plugins(profile) {
		if k.implementedBy(s.Plugin(n)) {
			out = append(out, n)
		}
	}
	return out
}

// hookTimeout bounds a hook call: the host runs the plugins one after the
// other, each within its own timeout.
func (m *Manager) hookTimeout(profile string, plugins []string) time.Duration {
	var d time.Duration
	for _, n := range plugins {
		d += m.registry.PluginTimeout(profile, n)
	}
	if d == 0 {
		d = DefaultTimeout
	}
	return d
}

// hookAnswer is the outcome of one hook call, made once (get) and read by
// every native plugin of the profile with the hook.
type hookAnswer[R any] struct {
	once sync.Once
	resp R
	// plugins: those whose hook the call ran; timeout: its deadline.
	plugins []string
	timeout time.Duration
	err     error
}

func (a *hookAnswer[R]) get(call func() (R, []string, time.Duration, error)) *hookAnswer[R] {
	a.once.Do(func() { a.resp, a.plugins, a.timeout, a.err = call() })
	return a
}

// hookCall makes one hook call on the current session for the profile's
// plugins with hook k; a host that lost the session gets a new Handshake
// and the call once more. With no plugin to run it makes no call.
func hookCall[R any](ctx context.Context, m *Manager, profile string, k hookPoint, call func(ctx context.Context, s *session.Session, plugins []string) (R, error)) (resp R, plugins []string, timeout time.Duration, err error) {
	s := m.client.Current()
	if s == nil {
		return resp, nil, DefaultTimeout, session.ErrNoSession
	}
	if plugins = m.hookPlugins(s, profile, k); len(plugins) == 0 {
		return resp, nil, 0, nil
	}
	timeout = m.hookTimeout(profile, plugins)
	attempt := func(s *session.Session) (R, error) {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return call(cctx, s, plugins)
	}
	resp, err = attempt(s)
	if status.Code(err) != codes.FailedPrecondition {
		return resp, plugins, timeout, err
	}
	if s, err = m.client.Renew(ctx, s); err != nil {
		return resp, plugins, timeout, err
	}
	resp, err = attempt(s)
	return resp, plugins, timeout, err
}

// callAtNode makes the call of hook k for the pod on node (Reserve,
// Unreserve, Permit, PreBind) through send, one of session.Client's.
func callAtNode[R any](ctx context.Context, p *Plugin, state fwk.CycleState, pod *v1.Pod, node string, k hookPoint,
	send func(context.Context, *session.Session, *pb.PodAtNodeRequest) (R, error)) (R, []string, time.Duration, error) {
	req := &pb.PodAtNodeRequest{SchedulerName: p.profile, Pod: p.hookPod(state, pod), NodeName: node}
	return hookCall(ctx, p.mgr, p.profile, k, func(ctx context.Context, s *session.Session, plugins []string) (R, error) {
		req.SessionId, req.Plugins = s.ID, plugins
		return send(ctx, s, req)
	})
}

// hookPod is the pod as the hooks get it: the cycle's, as PreFilter sent
// it, when there is one, else converted now.
func (p *Plugin) hookPod(state fwk.CycleState, pod *v1.Pod) *pb.Pod {
	if c := readCycle(state); c != nil && c.Pod().GetUid() == string(pod.UID) {
		return c.Pod()
	}
	return wire.Pod(pod, p.mgr.podData())
}

// hooksKey is the CycleState key of the pod's hook answers.
const hooksKey fwk.StateKey = "schedplug.dev/hooks"

// podHooks are the answers of the hook calls made for one pod in one
// CycleState, shared by the profile's shim plugins (clones share them).
type podHooks struct {
	uid     string
	mu      sync.Mutex
	reserve *hookAnswer[*pb.ReserveResponse]
	permit  *hookAnswer[*pb.PermitResponse]
	preBind *hookAnswer[preBindOutcome]
	// unreserved: this reservation's Unreserve call was made (or is being
	// made); kube-scheduler calls Unreserve on every Reserve plugin.
	unreserved bool
}

func (h *podHooks) Clone() fwk.StateData { return h }

// podHooksMu makes the first plugin's podHooks the one every plugin of
// the state reads.
var podHooksMu sync.Mutex

func podHooksOf(state fwk.CycleState, pod *v1.Pod) *podHooks {
	podHooksMu.Lock()
	defer podHooksMu.Unlock()
	if d, err := state.Read(hooksKey); err == nil {
		if h, ok := d.(*podHooks); ok && h.uid == string(pod.UID) {
			return h
		}
	}
	h := &podHooks{uid: string(pod.UID)}
	state.Write(hooksKey, h)
	return h
}

// reserveAnswer is the answer of this reservation's Reserve call; after
// an Unreserve, a Reserve of the same state is a new reservation (a pod
// group's member placed again), with calls of its own.
func (h *podHooks) reserveAnswer() *hookAnswer[*pb.ReserveResponse] {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.reserve == nil || h.unreserved {
		h.reserve, h.permit, h.preBind, h.unreserved = &hookAnswer[*pb.ReserveResponse]{}, nil, nil, false
	}
	return h.reserve
}

func (h *podHooks) permitAnswer() *hookAnswer[*pb.PermitResponse] {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.permit == nil {
		h.permit = &hookAnswer[*pb.PermitResponse]{}
	}
	return h.permit
}

func (h *podHooks) preBindAnswer() *hookAnswer[preBindOutcome] {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.preBind == nil {
		h.preBind = &hookAnswer[preBindOutcome]{}
	}
	return h.preBind
}

// takeUnreserve says whether this Unreserve is the reservation's first,
// the one that makes the call.
func (h *podHooks) takeUnreserve() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.unreserved {
		return false
	}
	h.unreserved = true
	return true
}

// owns says whether the plugin reports the host's non-success `hs`: the
// plugin it names, or the calling plugin when the name is none of the
// call's (the plugins before it passed).
func (p *Plugin) owns(hs *pb.HookStatus, plugins []string) bool {
	return hs.GetPlugin() == p.name || !slices.Contains(plugins, hs.GetPlugin())
}

// hookStatus is a plugin's non-success answer from a hook as kube-
// scheduler's status.
func hookStatus(k hookPoint, hs *pb.HookStatus) *fwk.Status {
	switch pb.Code(hs.GetCode()) {
	case pb.Code_CODE_UNSCHEDULABLE:
		return fwk.NewStatus(fwk.Unschedulable, hs.GetReason())
	case pb.Code_CODE_UNSCHEDULABLE_AND_UNRESOLVABLE:
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, hs.GetReason())
	case pb.Code_CODE_ERROR:
		return fwk.AsStatus(fmt.Errorf("native plugin %s failed in %s: %s", hs.GetPlugin(), k, hs.GetReason()))
	}
	return fwk.AsStatus(fmt.Errorf("native plugin %s: schedplug-host answered code %d in %s, which that hook cannot return (%s)", hs.GetPlugin(), hs.GetCode(), k, hs.GetReason()))
}

// hookFailed applies the plugin's failure policy to a hook call the host
// did not answer: Ignore passes; Fail is an Error naming the plugin and
// the cause.
func (p *Plugin) hookFailed(ctx context.Context, k hookPoint, pod *v1.Pod, err error, timeout time.Duration) *fwk.Status {
	if callerGaveUp(ctx) {
		return fwk.AsStatus(fmt.Errorf("plugin %s: %s cancelled by kube-scheduler: %w", p.name, k, callerEnd(ctx)))
	}
	p.notePolicyApplied(ctx, pod, err)
	if p.policy.FailurePolicy == FailurePolicyIgnore {
		return nil
	}
	return fwk.AsStatus(fmt.Errorf("%s: %s", k, p.failureReason(err, timeout)))
}

// answerStatus is the plugin's part of a Reserve, Permit or PreBind
// answer that did not succeed (nil: it did, or another plugin's failed).
func (p *Plugin) answerStatus(ctx context.Context, k hookPoint, pod *v1.Pod, err error, timeout time.Duration, failed *pb.HookStatus, plugins []string) *fwk.Status {
	if err != nil {
		return p.hookFailed(ctx, k, pod, err, timeout)
	}
	if failed != nil && p.owns(failed, plugins) {
		return hookStatus(k, failed)
	}
	return nil
}
