package cycle

import (
	"context"
	"sync"

	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// Scores is the cycle's PreScore answer: every native Score plugin's
// scores of the feasible nodes, normalized into [0, 100].
type Scores struct {
	// Err: the host did not answer; each plugin applies its failurePolicy.
	Err error
	// nodes: the scored nodes' names, in the order of each plugin's
	// scores; nil when infos, their NodeInfos, say them (a list of the
	// names is then built when first asked, namesOnce). position: the
	// index of each name, built when first asked (positionOnce): Score
	// finds most nodes through ahead instead.
	nodes        []string
	infos        []fwk.NodeInfo
	namesOnce    sync.Once
	names        []string
	positionOnce sync.Once
	position     map[string]int
	plugins      map[string]*pb.PluginScores
	// ahead, when the scores came from scores ahead: the scores ahead and
	// feasibleAt[p], 1 + the index of the node at position p of them in
	// nodes (0: not scored), so that a snapshot NodeInfo's index is two
	// array reads after its slot, without a map of the names.
	ahead      *aheadScores
	feasibleAt []int32
}

// Nodes are the scored nodes, in the order of each plugin's scores. The
// slice is shared: callers do not change it.
func (s *Scores) Nodes() []string {
	if s.nodes != nil || s.infos == nil {
		return s.nodes
	}
	s.namesOnce.Do(func() { s.names = namesOf(s.infos) })
	return s.names
}

// Len is the number of scored nodes.
func (s *Scores) Len() int {
	if s.nodes == nil && s.infos != nil {
		return len(s.infos)
	}
	return len(s.nodes)
}

// NodeName is the name of the i-th scored node (i < Len()).
func (s *Scores) NodeName(i int) string {
	if s.nodes == nil && s.infos != nil {
		return nameOf(s.infos[i])
	}
	return s.nodes[i]
}

// namesOf is the names of the nodes of infos ("" for a NodeInfo without
// a node).
func namesOf(infos []fwk.NodeInfo) []string {
	out := make([]string, len(infos))
	for i, ni := range infos {
		out[i] = nameOf(ni)
	}
	return out
}

func nameOf(ni fwk.NodeInfo) string {
	if n := ni.Node(); n != nil {
		return n.Name
	}
	return ""
}

// Of is plugin's scores (nil when the host sent none for it).
func (s *Scores) Of(plugin string) *pb.PluginScores { return s.plugins[plugin] }

// Position is the node's index in each plugin's scores.
func (s *Scores) Position(node string) (int, bool) {
	s.positionOnce.Do(func() {
		s.position = make(map[string]int, s.Len())
		for i := range s.Len() {
			s.position[s.NodeName(i)] = i
		}
	})
	i, ok := s.position[node]
	return i, ok
}

// PositionOf is Position of ni's node, found by the NodeInfo's slot when
// the scores came from scores ahead and ni is a node of the snapshot the
// cycle's call was planned from.
func (s *Scores) PositionOf(ni fwk.NodeInfo) (int, bool) {
	if a := s.ahead; a != nil {
		if slot, ok := a.slotOfInfo[ni]; ok {
			if p, ok := a.position(slot); ok && p < len(s.feasibleAt) && s.feasibleAt[p] > 0 {
				return int(s.feasibleAt[p]) - 1, true
			}
		}
	}
	n := ni.Node()
	if n == nil {
		return 0, false
	}
	return s.Position(n.Name)
}

// Scores is the cycle's scores of the nodes `feasible`, once per cycle
// (the framework's parallel NormalizeScore workers wait for the first):
// the scores ahead normalized over them when they serve (ahead.go), else
// the answer of the cycle's PreScore call. The host's table must be
// current: a score-only cycle sends the delta with its call (ahead, or
// now); otherwise the cycle's PreFilter call, made first if it was not,
// brought it. infos, when not nil, are the feasible nodes' NodeInfos;
// feasible may then be nil, and a list of the names is built only for a
// call to the host. onCall, when set, is told when this caller makes a
// call.
func (c *Cycle) Scores(ctx context.Context, feasible []string, infos []fwk.NodeInfo, onCall func()) *Scores {
	s, err, _ := c.scores.do(ctx, func(ctx context.Context) (*Scores, error) {
		ahead, current, err := c.aheadFor(ctx)
		if err != nil {
			return &Scores{Err: err}, nil
		}
		if c.scoresAhead {
			s, outcome := c.fromAhead(ahead, feasible, infos)
			scoresAheadOutcomes.WithLabelValues(outcome).Inc()
			if s != nil {
				return s, nil
			}
		}
		if onCall != nil {
			onCall()
		}
		if feasible == nil {
			feasible = namesOf(infos)
		}
		if c.scoreOnly && c.nodes != nil && !current {
			resp, err := c.t.host.preScoreAlone(ctx, c.callArgs(nil), feasible)
			return newScores(feasible, resp, err), nil
		}
		var applies appliesInfo
		if !c.scoreOnly || !current {
			r, err := c.Called(ctx)
			if err != nil {
				return &Scores{Err: err}, nil
			}
			applies = r.applies()
		}
		resp, err := c.t.host.preScore(ctx, c.callArgs(nil), feasible, applies)
		return newScores(feasible, resp, err), nil
	})
	if s == nil {
		return &Scores{Err: err}
	}
	return s
}

// aheadFor is the cycle's scores ahead, if any, waiting for a score-only
// cycle's call sent from PreFilter; current says that call brought the
// host's table up to date (the scores then need no delta). err: ctx ended
// while waiting.
func (c *Cycle) aheadFor(ctx context.Context) (ahead *aheadScores, current bool, err error) {
	if c.scoreOnly {
		if c.aheadCall == nil {
			return nil, false, nil
		}
		a, err := c.t.host.finishScoresAhead(ctx, c.aheadCall)
		return a, err == nil, nil
	}
	if !c.scoresAhead {
		return nil, false, nil
	}
	r, err := c.Called(ctx)
	if err != nil {
		return nil, false, nil // Scores meets the error again
	}
	return r.ahead.Load(), true, nil
}

func newScores(feasible []string, resp *pb.PreScoreResponse, err error) *Scores {
	s := &Scores{Err: err}
	if err != nil {
		return s
	}
	s.nodes = feasible
	s.plugins = make(map[string]*pb.PluginScores, len(resp.GetPlugins()))
	for _, p := range resp.GetPlugins() {
		s.plugins[p.GetPlugin()] = p
	}
	return s
}

// ScoresMade is the cycle's PreScore answer if the call was made.
func (c *Cycle) ScoresMade() (*Scores, bool) {
	s, _, over := c.scores.result()
	return s, over && s != nil
}
