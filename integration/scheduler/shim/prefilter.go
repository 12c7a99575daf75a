package shim

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"schedplug.dev/integration/scheduler/shim/cycle"
)

// PreFilter starts the profile's cycle (the profile's first native plugin
// does it, the others find it) and makes its call to the host, unless the
// cycle answers from kept verdicts.
func (p *Plugin) PreFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (_ *fwk.PreFilterResult, st *fwk.Status) {
	defer p.recoverStatus(ctx, "PreFilter", &st)
	c := readCycle(state)
	if c == nil {
		c = p.startCycle(state, pod, nodes)
	}
	if answers := c.Answers(); answers != nil && p.hasFilter() {
		defer func() { answers.PreFilter(p.name, st) }()
	}
	if c.ScoreOnly() {
		// No native Filter in the profile: the delta travels with
		// PreScore, the cycle's one call, sent now for scores ahead so
		// that the host scores while kube-scheduler filters.
		c.StartScoresAhead(ctx)
		return nil, fwk.NewStatus(fwk.Skip)
	}
	if c.Reusing() {
		return nil, p.skipUnless(!c.Skipped(p.name))
	}
	if _, err := c.Called(ctx); err != nil {
		return nil, p.preFilterFailed(ctx, c, pod, err)
	}
	return nil, p.skipUnless(!c.Skipped(p.name))
}

// hasFilter says whether the native plugin has a Filter (true before the
// host said).
func (p *Plugin) hasFilter() bool {
	info := p.mgr.pluginInfo(p.name)
	return info == nil || info.GetHasFilter()
}

// skipUnless is Skip (kube-scheduler leaves out the plugin's Filter for
// the cycle) unless the plugin filters this pod.
func (p *Plugin) skipUnless(filters bool) *fwk.Status {
	if filters {
		return nil
	}
	return fwk.NewStatus(fwk.Skip)
}

// preFilterFailed applies the failure policy to a cycle whose call the
// host did not answer: Ignore skips this plugin's Filter for the cycle;
// Fail lets Filter reject every node it is asked about, so the event counts
// them beside the other plugins' reasons ("0/5 nodes are available: 2
// Insufficient cpu, 3 schedplug-host ...").
func (p *Plugin) preFilterFailed(ctx context.Context, c *cycle.Cycle, pod *v1.Pod, err error) *fwk.Status {
	if callerGaveUp(ctx) {
		// kube-scheduler gave up on the cycle; not the host's fault.
		return fwk.AsStatus(fmt.Errorf("plugin %s: PreFilter cancelled by kube-scheduler: %w", p.name, callerEnd(ctx)))
	}
	c.NoteFailure()
	p.notePolicyApplied(ctx, pod, err)
	if p.policy.FailurePolicy == FailurePolicyIgnore {
		return fwk.NewStatus(fwk.Skip)
	}
	p.mgr.refuse(pod)
	return nil
}

// PreFilterExtensions returns nil: AddPod/RemovePod exist so plugins can
// patch precomputed state for preemption's what-if NodeInfos. The shim
// never trusts a verdict for a NodeInfo whose state differs from the one
// the host evaluated (removing or adding a pod bumps the generation and
// changes the pod count), and asks the host about that exact NodeInfo
// instead, so there is nothing to patch.
func (p *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }
