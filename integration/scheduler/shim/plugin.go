package shim

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// Plugin is the framework plugin standing for one native plugin in one
// profile. It implements every extension point a native plugin can have;
// when the host says the plugin has no Filter (or no Score), or that the
// pod is not its business, PreFilter (or PreScore) returns Skip and the
// framework skips the lookups.
//
// A profile may enable a native plugin at filter or score without
// preFilter or preScore (multiPoint enables all four; explicit per-point
// lists do not). Filter then makes the cycle's PreFilter call itself, and
// NormalizeScore the PreScore call, once per cycle (counted in
// schedplug_shim_lazy_calls_total); `schedplug check` warns about such
// profiles.
type Plugin struct {
	name    string
	profile string
	policy  Policy
	mgr     *Manager
	handle  fwk.Handle
}

var (
	_ fwk.PreFilterPlugin   = (*Plugin)(nil)
	_ fwk.FilterPlugin      = (*Plugin)(nil)
	_ fwk.PreScorePlugin    = (*Plugin)(nil)
	_ fwk.ScorePlugin       = (*Plugin)(nil)
	_ fwk.ScoreExtensions   = (*Plugin)(nil)
	_ fwk.EnqueueExtensions = (*Plugin)(nil)
)

// NewPlugin creates the shim plugin `name` for the profile of `h` on
// manager m. Most callers want Factory.
func NewPlugin(m *Manager, name string, pol Policy, h fwk.Handle) *Plugin {
	profile := ""
	var act fwk.PodActivator
	if h != nil {
		profile = h.ProfileName()
		act = h
	}
	m.register(profile, name, pol, act)
	return &Plugin{name: name, profile: profile, policy: pol, mgr: m, handle: h}
}

func (p *Plugin) Name() string { return p.name }

// recoverStatus turns a panic in the shim into an Error status for this
// cycle: kube-scheduler runs Filter and Score in its own goroutines, where
// a panic would take the whole scheduler down.
func (p *Plugin) recoverStatus(ctx context.Context, where string, st **fwk.Status) {
	r := recover()
	if r == nil {
		return
	}
	panicsRecovered.Inc()
	klog.FromContext(ctx).Error(fmt.Errorf("%v", r), "schedplug shim panicked; the scheduling cycle fails instead of the scheduler", "plugin", p.name, "profile", p.profile, "in", where, "stack", string(debug.Stack()))
	*st = fwk.AsStatus(fmt.Errorf("schedplug shim: internal error in %s of plugin %s: %v (a bug; please report it with the scheduler log)", where, p.name, r))
}

// PreFilter sends the pod and the node-table delta once per cycle (the
// profile's first native plugin does it) and keeps the verdicts.
func (p *Plugin) PreFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (_ *fwk.PreFilterResult, st *fwk.Status) {
	defer p.recoverStatus(ctx, "PreFilter", &st)
	fs := p.cycleFilterState(ctx, state, pod, nodes)
	if fs.err != nil {
		if callerGaveUp(ctx) {
			// kube-scheduler gave up on the cycle; not the host's fault.
			return nil, fwk.AsStatus(fmt.Errorf("plugin %s: PreFilter cancelled by kube-scheduler: %w", p.name, callerEnd(ctx)))
		}
		p.notePolicyApplied(ctx, pod, fs.err)
		if p.policy.FailurePolicy == FailurePolicyIgnore {
			// Skip this plugin's Filter for the whole cycle.
			return nil, fwk.NewStatus(fwk.Skip)
		}
		// Fail: Filter rejects every node it is asked about, so the event
		// counts them beside the other plugins' reasons
		// ("0/5 nodes are available: 2 Insufficient cpu, 3 schedplug-host ...").
		p.mgr.rememberRejected(pod)
		p.mgr.watchRecovery()
		return nil, nil
	}
	i, ok := fs.indexOf(p.name)
	if !ok {
		// No native Filter for this plugin in this profile.
		return nil, fwk.NewStatus(fwk.Skip)
	}
	if fs.skipped(i) {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	return nil, nil
}

func readFilterState(state fwk.CycleState) *filterState {
	if d, err := state.Read(filterStateKey); err == nil {
		if fs, ok := d.(*filterState); ok {
			return fs
		}
	}
	return nil
}

func readScoreState(state fwk.CycleState) *scoreState {
	if d, err := state.Read(scoreStateKey); err == nil {
		if ss, ok := d.(*scoreState); ok {
			return ss
		}
	}
	return nil
}

func (p *Plugin) cycleFilterState(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *filterState {
	if fs := readFilterState(state); fs != nil {
		return fs
	}
	wire := convertPod(pod, p.mgr.podData())
	podGroupCycle := state.IsPodGroupSchedulingCycle()
	nominated := pod.Status.NominatedNodeName
	var fs *filterState
	reused, sig := p.mgr.startCycle(p.profile, wire, nodes, podGroupCycle)
	if reused != nil {
		verdictReuseCycles.Inc()
		fs = reusedFilterState(wire, nodes, reused)
	} else {
		res, err := p.mgr.preFilter(ctx, p.profile, wire, nodes, podGroupCycle, nominated)
		fs = newFilterState(wire, nodes, res, err)
	}
	fs.podGroupCycle = podGroupCycle
	fs.profile, fs.nominated, fs.sig = p.profile, nominated, sig
	p.mgr.noteCycle(fs)
	state.Write(filterStateKey, fs)
	return fs
}

// snapshotNodes is the cycle's snapshot, for calls the shim makes lazily
// (nil when the handle has none, as in unit tests).
func (p *Plugin) snapshotNodes() []fwk.NodeInfo {
	if p.handle == nil {
		return nil
	}
	sl := p.handle.SnapshotSharedLister()
	if sl == nil {
		return nil
	}
	l, err := sl.NodeInfos().List()
	if err != nil {
		return nil
	}
	return l
}

// lazyFilterState makes the cycle's PreFilter call from Filter or Score
// when no native plugin of the profile ran PreFilter in this cycle. The
// framework calls Filter from parallel workers: the first makes the call,
// the others wait for it. `fallback` is used when the snapshot is not
// available; nil means no call is possible (the result is nil).
func (p *Plugin) lazyFilterState(ctx context.Context, state fwk.CycleState, pod *v1.Pod, fallback []fwk.NodeInfo) *filterState {
	p.mgr.lazyMu.Lock()
	defer p.mgr.lazyMu.Unlock()
	return p.lazyFilterStateLocked(ctx, state, pod, fallback)
}

func (p *Plugin) lazyFilterStateLocked(ctx context.Context, state fwk.CycleState, pod *v1.Pod, fallback []fwk.NodeInfo) *filterState {
	if fs := readFilterState(state); fs != nil {
		return fs
	}
	nodes := p.snapshotNodes()
	if nodes == nil {
		nodes = fallback
	}
	if nodes == nil {
		return nil
	}
	lazyCalls.WithLabelValues("PreFilter").Inc()
	fs := p.cycleFilterState(ctx, state, pod, nodes)
	if fs.err != nil && !callerGaveUp(ctx) {
		p.notePolicyApplied(ctx, pod, fs.err)
		p.mgr.rememberRejected(pod)
		p.mgr.watchRecovery()
	}
	return fs
}

// PreFilterExtensions returns nil: AddPod/RemovePod exist so plugins can
// patch precomputed state for preemption's what-if NodeInfos. The shim
// never trusts a verdict for a NodeInfo whose state differs from the one
// the host evaluated (removing or adding a pod bumps the generation and
// changes the pod count), and asks the host about that exact NodeInfo
// instead, so there is nothing to patch.
func (p *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter looks the node up in the PreFilter verdicts, or asks the host
// about this NodeInfo when it is not the one the host evaluated.
func (p *Plugin) Filter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (st *fwk.Status) {
	defer p.recoverStatus(ctx, "Filter", &st)
	node := ni.Node()
	if node == nil {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node not found")
	}
	fs := readFilterState(state)
	if fs == nil {
		// No native plugin of this profile is enabled at preFilter.
		fs = p.lazyFilterState(ctx, state, pod, nil)
	}
	if fs != nil && fs.reused != nil && fs.late.Load() == nil {
		if v, ok := p.reusedFilter(fs, ni); ok {
			return filterStatus(v.code, v.reason, p.name, node.Name)
		}
	}
	fs = p.called(ctx, fs, pod)
	if fs != nil && fs.err != nil {
		if callerGaveUp(ctx) {
			return p.cancelledFilter(ctx)
		}
		// PreFilter already counted and logged the failure for this cycle.
		if p.policy.FailurePolicy == FailurePolicyIgnore {
			return nil
		}
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, p.failureReason(fs.err, p.mgr.callTimeout(p.profile)))
	}
	if fs != nil {
		idx, ok := fs.indexOf(p.name)
		if !ok {
			return nil
		}
		if fs.skipped(idx) {
			// applies() said no (PreFilter returns Skip for it; a lazy
			// cycle gets here).
			return nil
		}
		slot, ok := fs.res.slotOfInfo[ni]
		if ok {
			fs.visits.add(slot)
		} else {
			// Not a snapshot NodeInfo (a dry-run copy): by name.
			slot, ok = p.mgr.table.slotOf(node.Name)
		}
		if ok {
			st := stateOf(ni)
			v, ok, outside := fs.lookup(idx, slot, st)
			if outside {
				if err := p.mgr.evaluateRest(ctx, p.profile, fs); err != nil {
					if callerGaveUp(ctx) {
						return p.cancelledFilter(ctx)
					}
					return p.hostFailureFilter(ctx, pod, err)
				}
				v, ok, _ = fs.lookup(idx, slot, st)
			}
			if !ok {
				if v, ok = p.podsChangedVerdict(ctx, fs, idx, slot, ni); ok {
					filterVerdictsReused.Inc()
				}
			}
			if ok {
				if v.unfinished {
					return p.unfinishedFilter(ctx, pod, v.reason)
				}
				return filterStatus(v.code, v.reason, p.name, node.Name)
			}
		}
	}
	filterFallbacks.Inc()
	var wire *pb.Pod
	var applies appliesInfo
	if fs != nil {
		wire = fs.pod
		applies.known, applies.notApplying = fs.appliesAnswer()
		// One RPC for every native Filter plugin on this NodeInfo (dryrun.go).
		order := fs.res.resp.GetPlugins()
		key := dryRunKey{node: node.Name, state: stateOf(ni)}
		resp, hit := fs.dryRuns.get(key)
		if !hit {
			var err error
			if resp, err = p.mgr.filterOne(ctx, p.profile, order, wire, ni, applies); err != nil {
				if callerGaveUp(ctx) {
					return p.cancelledFilter(ctx)
				}
				return p.hostFailureFilter(ctx, pod, err)
			}
			fs.dryRuns.put(key, resp)
		}
		if v, ok := verdictOf(resp, order, p.name); ok {
			if v.unfinished != "" {
				return p.unfinishedFilter(ctx, pod, v.unfinished)
			}
			return filterStatus(v.code, v.reason, p.name, node.Name)
		}
		// An earlier native plugin rejected this NodeInfo, so the host did
		// not run this one. kube-scheduler stops at the first rejection and
		// does not get here; a caller that runs plugins on its own does,
		// and gets this plugin's own verdict below.
	} else {
		wire = convertPod(pod, p.mgr.podData())
	}
	resp, err := p.mgr.filterOne(ctx, p.profile, []string{p.name}, wire, ni, applies)
	if err != nil {
		if callerGaveUp(ctx) {
			return p.cancelledFilter(ctx)
		}
		return p.hostFailureFilter(ctx, pod, err)
	}
	for _, u := range resp.GetUnfinished() {
		if u.GetPlugin() == p.name {
			return p.unfinishedFilter(ctx, pod, u.GetReason())
		}
	}
	return filterStatus(resp.GetCode(), resp.GetReason(), p.name, node.Name)
}

// podsChangedVerdict answers Filter on a copy of a snapshot node whose
// pods alone changed (a preemption dry run removed victims, or the
// nominated-pods pass added pods: kube-scheduler copies the snapshot's
// NodeInfo and keeps its Node object) with the verdict the node got in
// PreFilter, when the plugin promised that its filter ignores the node's
// pods (plugin.h's SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS). Without the
// promise, or for any other NodeInfo, ok is false and the host is asked.
//
// A snapshot node outside PreFilter's window gets its verdict from the
// cycle's FilterNodes call, made here if the cycle's Filter has not made it
// (a preemptor's Filter never reaches this plugin on full nodes; its dry
// runs do, on copies); if that call fails, the host is asked about the copy.
func (p *Plugin) podsChangedVerdict(ctx context.Context, fs *filterState, idx int, slot uint32, ni fwk.NodeInfo) (verdict, bool) {
	if info := p.mgr.pluginInfo(p.name); info == nil || info.GetHints()&hintFilterIgnoresNodePods == 0 {
		return verdict{}, false
	}
	snap := p.snapshotNode(ni.Node().Name)
	if snap == nil || snap.Node() != ni.Node() {
		return verdict{}, false
	}
	v, ok, outside := fs.ownVerdict(idx, slot, stateOf(snap))
	if outside && p.mgr.evaluateRest(ctx, p.profile, fs) == nil {
		v, ok, _ = fs.ownVerdict(idx, slot, stateOf(snap))
	}
	return v, ok
}

// hintFilterIgnoresNodePods is plugin.h's SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS.
const hintFilterIgnoresNodePods = 1 << 0

// snapshotNode is the cycle's snapshot NodeInfo of a node, or nil.
func (p *Plugin) snapshotNode(name string) fwk.NodeInfo {
	if p.handle == nil {
		return nil
	}
	sl := p.handle.SnapshotSharedLister()
	if sl == nil {
		return nil
	}
	ni, err := sl.NodeInfos().Get(name)
	if err != nil {
		return nil
	}
	return ni
}

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

// hostFailureFilter applies the failure policy to a Filter-side call the
// host did not answer. Fail rejects without preemption (evicting pods
// cannot bring the host back); Ignore lets the plugin pass.
func (p *Plugin) hostFailureFilter(ctx context.Context, pod *v1.Pod, err error) *fwk.Status {
	p.notePolicyApplied(ctx, pod, err)
	if p.policy.FailurePolicy == FailurePolicyIgnore {
		return nil
	}
	p.mgr.rememberRejected(pod)
	p.mgr.watchRecovery()
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, p.failureReason(err, p.policy.Timeout))
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

// PreScore asks for all native scores of the feasible nodes once per cycle.
func (p *Plugin) PreScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (st *fwk.Status) {
	defer p.recoverStatus(ctx, "PreScore", &st)
	if info := p.mgr.pluginInfo(p.name); info != nil && !info.GetHasScore() {
		// No native score hook: Skip makes kube-scheduler leave out this
		// plugin's Score and NormalizeScore for the cycle, and a profile
		// whose native plugins all only filter makes no PreScore call.
		return fwk.NewStatus(fwk.Skip)
	}
	ss := p.cycleScoreState(ctx, state, pod, nodes)
	if ss.err != nil {
		if callerGaveUp(ctx) {
			return fwk.AsStatus(fmt.Errorf("plugin %s: PreScore cancelled by kube-scheduler: %w", p.name, callerEnd(ctx)))
		}
		policyApplied.WithLabelValues(p.name, string(p.policy.FailurePolicy)).Inc()
		if p.policy.FailurePolicy == FailurePolicyIgnore {
			return fwk.NewStatus(fwk.Skip)
		}
		// Placing the pod without this plugin's scores could mis-steer it:
		// fail the cycle so the pod is retried with backoff.
		return fwk.AsStatus(errors.New(p.failureReason(ss.err, p.mgr.callTimeout(p.profile))))
	}
	ps, ok := ss.plugins[p.name]
	if !ok || ps.GetSkipped() {
		return fwk.NewStatus(fwk.Skip)
	}
	if why := ps.GetUnfinished(); why != "" {
		policyApplied.WithLabelValues(p.name, string(p.policy.FailurePolicy)).Inc()
		if p.policy.FailurePolicy == FailurePolicyIgnore {
			return fwk.NewStatus(fwk.Skip)
		}
		return fwk.AsStatus(errors.New(p.unfinishedReason(why)))
	}
	if ps.GetError() != "" {
		return fwk.AsStatus(errors.New(ps.GetError()))
	}
	if len(ps.GetScores()) != len(nodes) {
		return fwk.AsStatus(fmt.Errorf("schedplug-host returned %d scores for plugin %s but %d nodes were asked for", len(ps.GetScores()), p.name, len(nodes)))
	}
	return nil
}

func nodeNames(nodes []fwk.NodeInfo) []string {
	out := make([]string, 0, len(nodes))
	for _, ni := range nodes {
		if n := ni.Node(); n != nil {
			out = append(out, n.Name)
		} else {
			out = append(out, "")
		}
	}
	return out
}

func (p *Plugin) cycleScoreState(ctx context.Context, state fwk.CycleState, pod *v1.Pod, feasible []fwk.NodeInfo) *scoreState {
	if ss := readScoreState(state); ss != nil {
		return ss
	}
	fs := readFilterState(state)
	if fs == nil {
		// PreFilter did not run for this profile's native plugins: bring the
		// host's table up to date first.
		fs = p.lazyFilterState(ctx, state, pod, feasible)
	}
	fs = p.called(ctx, fs, pod)
	ss := p.scoreWith(ctx, fs, nodeNames(feasible))
	state.Write(scoreStateKey, ss)
	return ss
}

func (p *Plugin) scoreWith(ctx context.Context, fs *filterState, feasible []string) *scoreState {
	if fs.err != nil {
		return newScoreState(feasible, nil, fs.err)
	}
	var applies appliesInfo
	applies.known, applies.notApplying = fs.appliesAnswer()
	resp, err := p.mgr.preScore(ctx, p.profile, fs.pod, feasible, fs.nodes, fs.podGroupCycle, applies)
	return newScoreState(feasible, resp, err)
}

// Score is a lookup in the PreScore answer. Without one (the profile
// enables no native plugin at preScore) it returns a placeholder that
// NormalizeScore replaces.
func (p *Plugin) Score(ctx context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (_ int64, st *fwk.Status) {
	defer p.recoverStatus(ctx, "Score", &st)
	ss := readScoreState(state)
	node := ni.Node()
	if ss == nil || ss.err != nil || node == nil {
		return 0, nil
	}
	ps := ss.plugins[p.name]
	i, ok := ss.position[node.Name]
	if ps == nil || !ok || i >= len(ps.GetScores()) {
		return 0, nil
	}
	return ps.GetScores()[i], nil
}

// ScoreExtensions returns the plugin itself: its NormalizeScore fills in
// the host's scores (already normalized into [0, 100]).
func (p *Plugin) ScoreExtensions() fwk.ScoreExtensions { return p }

// NormalizeScore sets every node's score to the host's normalized value.
// When this plugin's PreScore ran, that repeats what Score returned. When
// it did not (enabled at score but not preScore), this is where the cycle's
// PreScore call happens, lazily, for exactly the nodes being scored, so the
// scores equal those of a profile that enables preScore too; the failure
// policy and applies() answers apply the same way (a plugin that would
// have been skipped contributes 0 to every node).
func (p *Plugin) NormalizeScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, scores fwk.NodeScoreList) (st *fwk.Status) {
	defer p.recoverStatus(ctx, "NormalizeScore", &st)
	ss := readScoreState(state)
	if ss == nil {
		ss = p.lazyScoreState(ctx, state, pod, scores)
	}
	zero := func() {
		for i := range scores {
			scores[i].Score = 0
		}
	}
	if ss.err != nil {
		if callerGaveUp(ctx) {
			return fwk.AsStatus(fmt.Errorf("plugin %s: scoring cancelled by kube-scheduler: %w", p.name, callerEnd(ctx)))
		}
		policyApplied.WithLabelValues(p.name, string(p.policy.FailurePolicy)).Inc()
		if p.policy.FailurePolicy == FailurePolicyIgnore {
			zero()
			return nil
		}
		return fwk.AsStatus(errors.New(p.failureReason(ss.err, p.mgr.callTimeout(p.profile))))
	}
	ps := ss.plugins[p.name]
	if ps == nil || ps.GetSkipped() {
		zero()
		return nil
	}
	if why := ps.GetUnfinished(); why != "" {
		policyApplied.WithLabelValues(p.name, string(p.policy.FailurePolicy)).Inc()
		if p.policy.FailurePolicy == FailurePolicyIgnore {
			zero()
			return nil
		}
		return fwk.AsStatus(errors.New(p.unfinishedReason(why)))
	}
	if ps.GetError() != "" {
		return fwk.AsStatus(errors.New(ps.GetError()))
	}
	for i := range scores {
		j, ok := ss.position[scores[i].Name]
		if !ok || j >= len(ps.GetScores()) {
			return fwk.AsStatus(fmt.Errorf("plugin %s: node %q was not among the nodes scored by schedplug-host", p.name, scores[i].Name))
		}
		scores[i].Score = ps.GetScores()[j]
	}
	return nil
}

// lazyScoreState makes the cycle's PreScore call from NormalizeScore, which
// the framework runs for several plugins in parallel: the first makes the
// call, the others wait for it.
func (p *Plugin) lazyScoreState(ctx context.Context, state fwk.CycleState, pod *v1.Pod, scores fwk.NodeScoreList) *scoreState {
	p.mgr.lazyMu.Lock()
	defer p.mgr.lazyMu.Unlock()
	if ss := readScoreState(state); ss != nil {
		return ss
	}
	names := make([]string, len(scores))
	for i := range scores {
		names[i] = scores[i].Name
	}
	lazyCalls.WithLabelValues("PreScore").Inc()
	var ss *scoreState
	if fs := p.lazyFilterStateLocked(ctx, state, pod, nil); fs != nil {
		ss = p.scoreWith(ctx, fs, names)
	} else {
		ss = newScoreState(names, nil, status.Error(codes.Internal, "schedplug shim: no snapshot to send to schedplug-host"))
	}
	ss.lazy = true
	state.Write(scoreStateKey, ss)
	return ss
}

// EventsToRegister maps the events the native plugin declared. It runs when
// the framework is built, after the start-up Handshake; without one (host
// not up) it registers every node and pod event.
func (p *Plugin) EventsToRegister(_ context.Context) ([]fwk.ClusterEventWithHint, error) {
	var bits uint64
	if info := p.mgr.pluginInfo(p.name); info != nil {
		bits = info.GetEvents()
	}
	return eventsFor(bits), nil
}
