package cycle

import (
	"context"
	"slices"

	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/nodetable"
	"schedplug.dev/integration/scheduler/shim/normalize"
	"schedplug.dev/integration/scheduler/shim/session"
)

// Scores ahead (docs/protocol.md, "Scores ahead"): the host computes the
// raw scores before kube-scheduler's PreScore, and the shim normalizes
// them over the nodes kube-scheduler scores with the host's arithmetic
// (package normalize), so the cycle makes no PreScore call of its own:
//
//   - a profile with native Filter plugins asks for them with its
//     PreFilter call (and its FilterNodes call), for the nodes the host
//     evaluated and no native Filter rejected;
//   - a profile whose native plugins only score sends its one call, the
//     PreScore with the node-table delta, from PreFilter (where it
//     returns Skip) instead of from PreScore, asking for raw scores of
//     the nodes kube-scheduler is expected to filter, and does not wait
//     for the answer: the host scores while kube-scheduler filters.
//
// PreScore still asks the host when a scorer normalizes its scores itself
// (normalize_score), when a node to score was not scored ahead, and when a
// scorer failed or did not finish ahead (its answer for the nodes
// kube-scheduler scores could differ): the scores are then exactly the
// two-call path's.

// aheadScores is a cycle's raw scores computed ahead.
type aheadScores struct {
	// at: 1 + the position in the scores of each slot scored ahead, in a
	// table of `slots` slots; positions run over PreFilter's nodes, then
	// FilterNodes'.
	at      slotIndex
	slots   int
	n       int
	plugins []*pb.PluginScores
	// slotOfInfo is the slot of each snapshot NodeInfo the call's delta
	// was planned from (nodetable.Plan.SlotOfInfo): a pointer hash, where
	// a lookup by name hashes the name under the table's lock.
	slotOfInfo map[fwk.NodeInfo]uint32
}

// newAheadScores reads an answer's scores ahead for the table a call
// planned (nil when there are none).
func newAheadScores(sa *pb.ScoresAhead, plan *nodetable.Plan) *aheadScores {
	if sa == nil || len(sa.GetPlugins()) == 0 {
		return nil
	}
	a := &aheadScores{slots: plan.States.Size(), slotOfInfo: plan.SlotOfInfo}
	return a.with(sa)
}

// with is a with the scores of another answer of the same cycle added
// (FilterNodes' for the nodes outside PreFilter's window).
func (a *aheadScores) with(sa *pb.ScoresAhead) *aheadScores {
	if a == nil || len(sa.GetPlugins()) == 0 {
		return a
	}
	out := &aheadScores{slots: a.slots, n: a.n + len(sa.GetNodes()), slotOfInfo: a.slotOfInfo,
		at: newSlotIndex(a.slots, &a.at, sa.GetNodes(), int32(a.n+1), nil, true)}
	if a.plugins == nil {
		out.plugins = sa.GetPlugins()
		return out
	}
	for i, p := range a.plugins {
		merged := &pb.PluginScores{Plugin: p.GetPlugin(), Skipped: p.GetSkipped(), Error: p.GetError(), Unfinished: p.GetUnfinished(), Normalization: p.GetNormalization()}
		if i < len(sa.GetPlugins()) {
			q := sa.GetPlugins()[i]
			if q.GetPlugin() != p.GetPlugin() || q.GetSkipped() != p.GetSkipped() || q.GetNormalization() != p.GetNormalization() {
				merged.Unfinished = "the host's scores ahead of two calls of one cycle disagree"
			}
			merged.Error = cmpOr(merged.Error, q.GetError())
			merged.Unfinished = cmpOr(merged.Unfinished, q.GetUnfinished())
			merged.Raw = append(slices.Clone(p.GetRaw()), q.GetRaw()...)
		}
		out.plugins = append(out.plugins, merged)
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// aheadPosition is the node's position in a's scores.
func (a *aheadScores) position(slot uint32) (int, bool) {
	v, ok := a.at.get(slot)
	if !ok {
		return 0, false
	}
	return int(v) - 1, true
}

// Why scores ahead did not serve a cycle's PreScore (the label of
// schedplug_shim_scores_ahead_total; "used" when they did).
const (
	aheadUsed         = "used"
	aheadNone         = "no_answer"
	aheadMissingNode  = "node_not_scored_ahead"
	aheadPluginFailed = "plugin_failed_ahead"
	aheadOwnNormalize = "plugin_normalizes_itself"
)

// fromAhead is the cycle's scores of `feasible` (their NodeInfos in
// `infos`, when the caller has them; feasible nil: the names are infos')
// from scores ahead, or nil and why not.
func (c *Cycle) fromAhead(a *aheadScores, feasible []string, infos []fwk.NodeInfo) (*Scores, string) {
	s := &Scores{nodes: feasible, infos: infos}
	slots := make([]uint32, s.Len())
	found := true
	for i := range slots {
		var ok bool
		if a != nil && infos != nil {
			slots[i], ok = a.slotOfInfo[infos[i]]
		}
		if !ok {
			slots[i], found = c.t.host.SlotOf(s.NodeName(i))
		}
		if !found {
			break
		}
	}
	if c.scoreOnly && found {
		c.visitAll(slots)
	}
	if a == nil {
		return nil, aheadNone
	}
	// The positions overwrite the slots, which are not read again.
	positions := slots
	for i, slot := range slots {
		pos, ok := a.position(slot)
		if !found || !ok {
			return nil, aheadMissingNode
		}
		positions[i] = uint32(pos)
	}
	s.plugins, s.ahead, s.feasibleAt = make(map[string]*pb.PluginScores, len(a.plugins)), a, make([]int32, a.n)
	for i, pos := range positions {
		s.feasibleAt[pos] = int32(i + 1)
	}
	for _, p := range a.plugins {
		out := &pb.PluginScores{Plugin: p.GetPlugin(), Skipped: p.GetSkipped()}
		s.plugins[p.GetPlugin()] = out
		switch {
		case p.GetSkipped():
			continue
		case p.GetError() != "" || p.GetUnfinished() != "" || len(p.GetRaw()) != a.n:
			// Its answer for the nodes kube-scheduler scores could differ
			// (the failing node may not be one of them).
			return nil, aheadPluginFailed
		case !normalize.Applicable(p.GetNormalization()):
			return nil, aheadOwnNormalize
		}
		// The feasible nodes' raw scores, normalized in place.
		out.Scores = make([]int64, len(positions))
		for i, pos := range positions {
			out.Scores[i] = p.GetRaw()[pos]
		}
		if err := normalize.Into(p.GetPlugin(), p.GetNormalization(), out.Scores, out.Scores, s.NodeName); err != nil {
			// The error the host's PreScore gives for this plugin.
			out.Scores, out.Error = nil, err.Error()
		}
	}
	// The host's recent cycles normalize their raw scores over
	// the same nodes (`schedplug explain`).
	c.t.host.Scored(c.pod.GetUid(), ascending(positions, s.feasibleAt))
	return s, aheadUsed
}

// ascending is the positions marked in feasibleAt (non-zero), in
// ascending order, written over positions, which holds each of them.
func ascending(positions []uint32, feasibleAt []int32) []uint32 {
	out := positions[:0]
	for p, at := range feasibleAt {
		if at != 0 {
			out = append(out, uint32(p))
		}
	}
	return out
}

// visitAll notes the nodes a score-only cycle scored as visited: the
// next cycle's scores ahead are asked for the run after them (the cycle's
// Filter, which notes them for profiles with native filters, does
// not run for a profile whose native plugins only score).
func (c *Cycle) visitAll(slots []uint32) {
	if len(slots) == 0 {
		return
	}
	c.sizeVisits(int(slices.Max(slots)) + 1)
	for _, slot := range slots {
		c.visit(slot)
	}
}

// StartScoresAhead sends, for a profile whose native plugins only score,
// the cycle's one call now (kube-scheduler's PreFilter) rather than from
// PreScore: the node-table delta and a request for raw scores of the nodes
// kube-scheduler's Filter is expected to visit. It does not wait for the
// answer, which the host computes while kube-scheduler filters; Scores
// reads it.
func (c *Cycle) StartScoresAhead(ctx context.Context) {
	if !c.scoreOnly || !c.scoresAhead || c.nodes == nil {
		return
	}
	c.aheadOnce.Do(func() {
		visits := c.t.scoreGuide()
		c.aheadCall = c.t.host.startScoresAhead(ctx, c.callArgs(nil), func(plan *nodetable.Plan) []uint32 {
			return aheadSlots(plan.Order, visits)
		})
	})
}

// aheadSlots are the slots a score-only cycle asks scores ahead for: the
// run of list positions predicted from the last cycle's scored nodes, or
// every node of the snapshot when nothing predicts it.
func aheadSlots(order []uint32, visits visitSet) []uint32 {
	start, length, ok := predictWindow(order, visits, 0, 1, nil)
	if !ok {
		start, length = 0, len(order)
	}
	out := make([]uint32, 0, length)
	for i := 0; i < length && i < len(order); i++ {
		if slot := order[(start+i)%len(order)]; slot != nodetable.NoSlot {
			out = append(out, slot)
		}
	}
	return out
}

// scoresAheadFor is whether a cycle of a profile with these native
// plugins asks for scores ahead on session s: the host offers them, some
// plugin scores, and none normalizes its scores itself.
func scoresAheadFor(s *session.Session, plugins []string) bool {
	if s == nil || !s.ScoresAhead {
		return false
	}
	scores := false
	for _, name := range plugins {
		info := s.Plugin(name)
		if info.GetHasNormalizeScore() {
			return false
		}
		scores = scores || info.GetHasScore()
	}
	return scores
}
