package simulate

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// podResult is what became of a pending pod.
func podResult(p *v1.Pod, profiles map[string]bool, hist *history, nodes []*v1.Node) PodResult {
	k := key(p)
	r := PodResult{Pod: k, Profile: p.Spec.SchedulerName, Tie: []string{}}
	if !profiles[p.Spec.SchedulerName] {
		r.Status = Skipped
		r.Reason = fmt.Sprintf("spec.schedulerName %q is not a profile of the configuration; another scheduler places this pod", p.Spec.SchedulerName)
		return r
	}
	s := hist.snapshot(k)
	r.Attempts = s.attempts
	if c := s.cycle; c != nil {
		r.FeasibleNodes, r.EvaluatedNodes, r.Scored = c.feasible, c.evaluated, c.scored
		if c.scored {
			r.Score = c.best
		}
		if len(c.tie) > 1 {
			r.Tie = c.tie
		}
		if hist.detailed(k) {
			r.Explain = explain(c, nodes)
		}
	}
	switch {
	case s.errored:
		r.Status = Errored
		r.Reason = s.message + "; kube-scheduler retries the pod later, the simulation stops trying it"
	case s.node != "" && s.deleted:
		r.Status, r.Node = Preempted, s.node
		r.Reason = fmt.Sprintf("placed on %s, then evicted by preemption for %s", s.node, s.evictedBy)
	case s.node != "":
		r.Status, r.Node = Placed, s.node
	case !s.failed && s.gatedBy != "":
		r.Status = Unschedulable
		r.Reason = fmt.Sprintf("never tried: kube-scheduler's %s plugin holds the pod back before scheduling (PreEnqueue), e.g. for its spec.schedulingGates", s.gatedBy)
	default:
		r.Status, r.Reason, r.NominatedNode = Unschedulable, s.message, s.nominated
	}
	return r
}

// explain lists, in the dump's order, every node the cycle evaluated:
// rejected (by which plugin, why) or feasible, with its scores when scored.
func explain(c *cycle, nodes []*v1.Node) *Explain {
	ex := &Explain{SkippedFilters: slices.Sorted(slices.Values(c.skipped)), Nodes: []ExplainNode{}}
	if ex.SkippedFilters == nil {
		ex.SkippedFilters = []string{}
	}
	scores := map[string]fwk.NodePluginScores{}
	for _, s := range c.scores {
		scores[s.Name] = s
	}
	for _, n := range nodes {
		row := ExplainNode{Node: n.Name}
		status, evaluated := c.filters[n.Name]
		switch {
		case c.prefilter != nil:
			status = c.prefilter
		case evaluated:
		case c.diagnosis != nil:
			status = c.diagnosis.Get(n.Name)
		default:
			continue // kube-scheduler had found enough feasible nodes
		}
		if status.IsSuccess() {
			row.Feasible = true
		} else {
			row.Plugin, row.Code, row.Reason = status.Plugin(), status.Code().String(), status.Message()
		}
		if s, ok := scores[n.Name]; ok && c.scored {
			row.Scored, row.Total = true, s.TotalScore
			for _, raw := range s.RawScores {
				ps := PluginScore{Plugin: raw.Name, Raw: raw.Score}
				for _, w := range s.Scores {
					if w.Name == raw.Name {
						ps.Weighted = w.Score
					}
				}
				row.Scores = append(row.Scores, ps)
			}
		}
		ex.Nodes = append(ex.Nodes, row)
	}
	return ex
}
