package shim

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/gen/schedplugv1"
)

// Plugin is the framework plugin standing for one native plugin in one
// profile. It implements every extension point a native plugin can have;
// when the host says the plugin has no Filter (or no Score), or that the
// pod is not its business, PreFilter (or PreScore) returns Skip and the
// framework skips the lookups.
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

// PreFilter sends the pod and the node-table delta once per cycle (the
// profile's first native plugin does it) and keeps the verdicts.
func (p *Plugin) PreFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	fs := p.cycleFilterState(ctx, state, pod, nodes)
	if fs.err != nil {
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
	i, ok := fs.pluginIndex[p.name]
	if !ok {
		// No native Filter for this plugin in this profile.
		return nil, fwk.NewStatus(fwk.Skip)
	}
	if sk := fs.res.resp.GetSkipped(); i < len(sk) && sk[i] {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	return nil, nil
}

func (p *Plugin) cycleFilterState(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *filterState {
	if d, err := state.Read(filterStateKey); err == nil {
		if fs, ok := d.(*filterState); ok {
			return fs
		}
	}
	wire := convertPod(pod)
	res, err := p.mgr.preFilter(ctx, p.profile, wire, nodes)
	fs := newFilterState(wire, nodes, res, err)
	state.Write(filterStateKey, fs)
	return fs
}

// PreFilterExtensions returns nil: AddPod/RemovePod exist so plugins can
// patch precomputed state for preemption's what-if NodeInfos. The shim
// never trusts a verdict for a NodeInfo whose generation differs from the
// one the host evaluated (removing or adding a pod bumps it), and asks the
// host about that exact NodeInfo instead, so there is nothing to patch.
func (p *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter looks the node up in the PreFilter verdicts, or asks the host
// about this NodeInfo when it is not the one the host evaluated.
func (p *Plugin) Filter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	node := ni.Node()
	if node == nil {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node not found")
	}
	var fs *filterState
	if d, err := state.Read(filterStateKey); err == nil {
		fs, _ = d.(*filterState)
	}
	if fs != nil && fs.err != nil {
		// PreFilter already counted and logged the failure for this cycle.
		if p.policy.FailurePolicy == FailurePolicyIgnore {
			return nil
		}
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, p.failureReason(fs.err))
	}
	if fs != nil {
		idx, ok := fs.pluginIndex[p.name]
		if !ok {
			return nil
		}
		if slot, ok := p.mgr.table.slotOf(node.Name); ok {
			if v, ok := fs.lookup(idx, slot, ni.GetGeneration()); ok {
				return filterStatus(v.code, v.reason, p.name)
			}
		}
	}
	filterFallbacks.Inc()
	var wire *pb.Pod
	if fs != nil {
		wire = fs.pod
	} else {
		wire = convertPod(pod)
	}
	resp, err := p.mgr.filterOne(ctx, p.profile, p.name, wire, ni)
	if err != nil {
		return p.hostFailureFilter(ctx, pod, err)
	}
	return filterStatus(resp.GetCode(), resp.GetReason(), p.name)
}

func filterStatus(code pb.Code, reason, plugin string) *fwk.Status {
	switch code {
	case pb.Code_CODE_SUCCESS, pb.Code_CODE_SKIP:
		return nil
	case pb.Code_CODE_UNSCHEDULABLE:
		return fwk.NewStatus(fwk.Unschedulable, reason)
	case pb.Code_CODE_UNSCHEDULABLE_AND_UNRESOLVABLE:
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, reason)
	case pb.Code_CODE_ERROR:
		return fwk.AsStatus(fmt.Errorf("native plugin %s: %s", plugin, reason))
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
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, p.failureReason(err))
}

func (p *Plugin) notePolicyApplied(ctx context.Context, pod *v1.Pod, err error) {
	policyApplied.WithLabelValues(p.name, string(p.policy.FailurePolicy)).Inc()
	klog.FromContext(ctx).V(2).Info("schedplug-host did not answer; applying failurePolicy",
		"plugin", p.name, "profile", p.profile, "pod", klog.KObj(pod), "policy", p.policy.FailurePolicy, "err", err)
}

// failureReason is stable per kind of failure so that the FailedScheduling
// event aggregates nodes: "0/5 nodes are available: 5 <reason>".
func (p *Plugin) failureReason(err error) string {
	if unreachable(err) {
		return fmt.Sprintf("schedplug-host could not be reached (%s); plugin %s has failurePolicy Fail", status.Code(err), p.name)
	}
	return fmt.Sprintf("schedplug-host could not evaluate plugin %s (%s); it has failurePolicy Fail", p.name, status.Code(err))
}

// PreScore asks for all native scores of the feasible nodes once per cycle.
func (p *Plugin) PreScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	ss := p.cycleScoreState(ctx, state, pod, nodes)
	if ss.err != nil {
		policyApplied.WithLabelValues(p.name, string(p.policy.FailurePolicy)).Inc()
		if p.policy.FailurePolicy == FailurePolicyIgnore {
			return fwk.NewStatus(fwk.Skip)
		}
		// Placing the pod without this plugin's scores could mis-steer it:
		// fail the cycle so the pod is retried with backoff.
		return fwk.AsStatus(errors.New(p.failureReason(ss.err)))
	}
	ps, ok := ss.plugins[p.name]
	if !ok || ps.GetSkipped() {
		return fwk.NewStatus(fwk.Skip)
	}
	if ps.GetError() != "" {
		return fwk.AsStatus(errors.New(ps.GetError()))
	}
	if len(ps.GetScores()) != len(nodes) {
		return fwk.AsStatus(fmt.Errorf("schedplug-host returned %d scores for plugin %s but %d nodes were asked for", len(ps.GetScores()), p.name, len(nodes)))
	}
	return nil
}

func (p *Plugin) cycleScoreState(ctx context.Context, state fwk.CycleState, pod *v1.Pod, feasible []fwk.NodeInfo) *scoreState {
	if d, err := state.Read(scoreStateKey); err == nil {
		if ss, ok := d.(*scoreState); ok {
			return ss
		}
	}
	var fs *filterState
	if d, err := state.Read(filterStateKey); err == nil {
		fs, _ = d.(*filterState)
	}
	if fs == nil {
		// PreFilter did not run for this profile's native plugins: bring the
		// host's table up to date first.
		var all []fwk.NodeInfo
		if p.handle != nil {
			if l, err := p.handle.SnapshotSharedLister().NodeInfos().List(); err == nil {
				all = l
			}
		}
		if all == nil {
			all = feasible
		}
		fs = p.cycleFilterStateFresh(ctx, state, pod, all)
	}
	var ss *scoreState
	if fs.err != nil {
		ss = newScoreState(feasible, nil, fs.err)
	} else {
		resp, err := p.mgr.preScore(ctx, p.profile, fs.pod, feasible, fs.nodes)
		ss = newScoreState(feasible, resp, err)
	}
	state.Write(scoreStateKey, ss)
	return ss
}

func (p *Plugin) cycleFilterStateFresh(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *filterState {
	wire := convertPod(pod)
	res, err := p.mgr.preFilter(ctx, p.profile, wire, nodes)
	fs := newFilterState(wire, nodes, res, err)
	state.Write(filterStateKey, fs)
	return fs
}

// Score is a lookup in the PreScore answer.
func (p *Plugin) Score(ctx context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	d, err := state.Read(scoreStateKey)
	if err != nil {
		return 0, fwk.AsStatus(fmt.Errorf("plugin %s: no PreScore result in this cycle; enable the plugin at preScore as well as score (multiPoint does both)", p.name))
	}
	ss := d.(*scoreState)
	ps := ss.plugins[p.name]
	i, ok := ss.position[ni.Node().Name]
	if ps == nil || !ok || i >= len(ps.GetScores()) {
		return 0, fwk.AsStatus(fmt.Errorf("plugin %s: node %q was not among the nodes scored in PreScore", p.name, ni.Node().Name))
	}
	return ps.GetScores()[i], nil
}

// ScoreExtensions returns nil: the host returns scores already normalized
// into [0, 100].
func (p *Plugin) ScoreExtensions() fwk.ScoreExtensions { return nil }

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
