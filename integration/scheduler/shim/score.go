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

// PreScore asks for all native scores of the feasible nodes, once per
// cycle (the profile's first native Score plugin makes the call).
func (p *Plugin) PreScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (st *fwk.Status) {
	defer p.recoverStatus(ctx, "PreScore", &st)
	if info := p.mgr.pluginInfo(p.name); info != nil && !info.GetHasScore() {
		// No native score hook: Skip makes kube-scheduler leave out this
		// plugin's Score and NormalizeScore for the cycle, and a profile
		// whose native plugins all only filter makes no PreScore call.
		return fwk.NewStatus(fwk.Skip)
	}
	c := p.cycleOf(state, pod, nodes)
	if answers := c.Answers(); answers != nil {
		defer func() { answers.PreScore(p.name, st) }()
	}
	s := c.Scores(ctx, nil, nodes, nil)
	ps, st := p.ownScores(ctx, s, "PreScore")
	switch {
	case st != nil || ps != nil && len(ps.GetScores()) != len(nodes):
		if st == nil {
			st = fwk.AsStatus(fmt.Errorf("schedplug-host returned %d scores for plugin %s but %d nodes were asked for", len(ps.GetScores()), p.name, len(nodes)))
		}
		return st
	case ps == nil:
		return fwk.NewStatus(fwk.Skip)
	}
	return nil
}

// ownScores is this plugin's scores in s; nil scores and a nil status: the
// plugin contributes nothing (skipped, or Ignore when the host failed).
func (p *Plugin) ownScores(ctx context.Context, s *cycle.Scores, where string) (*pb.PluginScores, *fwk.Status) {
	if s.Err != nil {
		if callerGaveUp(ctx) {
			return nil, fwk.AsStatus(fmt.Errorf("plugin %s: %s cancelled by kube-scheduler: %w", p.name, where, callerEnd(ctx)))
		}
		policyApplied.WithLabelValues(p.name, string(p.policy.FailurePolicy)).Inc()
		if p.policy.FailurePolicy == FailurePolicyIgnore {
			return nil, nil
		}
		// Placing the pod without this plugin's scores could mis-steer it:
		// fail the cycle so the pod is retried with backoff.
		return nil, fwk.AsStatus(errors.New(p.failureReason(s.Err, p.mgr.registry.CallTimeout(p.profile))))
	}
	ps := s.Of(p.name)
	switch {
	case ps == nil || ps.GetSkipped():
		return nil, nil
	case ps.GetUnfinished() != "":
		policyApplied.WithLabelValues(p.name, string(p.policy.FailurePolicy)).Inc()
		if p.policy.FailurePolicy == FailurePolicyIgnore {
			return nil, nil
		}
		return nil, fwk.AsStatus(errors.New(p.unfinishedReason(ps.GetUnfinished())))
	case ps.GetError() != "":
		return nil, fwk.AsStatus(errors.New(ps.GetError()))
	}
	return ps, nil
}

// Score is a lookup in the PreScore answer. Without one (the profile
// enables no native plugin at preScore) it returns a placeholder that
// NormalizeScore replaces.
func (p *Plugin) Score(ctx context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (_ int64, st *fwk.Status) {
	defer p.recoverStatus(ctx, "Score", &st)
	c := p.cycleIn(state)
	if c == nil || ni.Node() == nil {
		return 0, nil
	}
	s, ok := c.ScoresMade()
	if !ok || s.Err != nil {
		return 0, nil
	}
	ps := s.Of(p.name)
	i, ok := s.PositionOf(ni)
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
	c := p.cycleOf(state, pod, nil)
	s, made := c.ScoresMade()
	if !made {
		names := make([]string, len(scores))
		for i := range scores {
			names[i] = scores[i].Name
		}
		s = c.Scores(ctx, names, nil, func() { lazyCalls.WithLabelValues("PreScore").Inc() })
	}
	ps, st := p.ownScores(ctx, s, "scoring")
	if st != nil {
		return st
	}
	for i := range scores {
		scores[i].Score = 0
		if ps == nil {
			continue
		}
		j, ok := i, i < s.Len() && s.NodeName(i) == scores[i].Name
		if !ok {
			// The framework lists the nodes in PreScore's order; a caller
			// that does not is looked up by name.
			j, ok = s.Position(scores[i].Name)
		}
		if !ok || j >= len(ps.GetScores()) {
			return fwk.AsStatus(fmt.Errorf("plugin %s: node %q was not among the nodes scored by schedplug-host", p.name, scores[i].Name))
		}
		scores[i].Score = ps.GetScores()[j]
	}
	return nil
}
