package cycle

import (
	"context"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// Scores is the cycle's PreScore answer: every native Score plugin's
// scores of the feasible nodes, normalized into [0, 100].
type Scores struct {
	// Err: the host did not answer; each plugin applies its failurePolicy.
	Err error
	// position: node name -> index into each plugin's scores; nodes the
	// names in that order.
	position map[string]int
	nodes    []string
	plugins  map[string]*pb.PluginScores
}

// Nodes are the scored nodes, in the order of each plugin's scores. The
// slice is shared: callers do not change it.
func (s *Scores) Nodes() []string { return s.nodes }

// Of is plugin's scores (nil when the host sent none for it).
func (s *Scores) Of(plugin string) *pb.PluginScores { return s.plugins[plugin] }

// Position is the node's index in each plugin's scores.
func (s *Scores) Position(node string) (int, bool) {
	i, ok := s.position[node]
	return i, ok
}

// Scores makes the cycle's PreScore call, once per cycle, for the nodes
// `feasible` (the framework's parallel NormalizeScore workers wait for the
// first). The host's table must be current: a score-only cycle sends the
// delta with the call; otherwise the cycle's PreFilter call, made first if
// it was not, brought it. onCall, when set, is told when this caller makes
// the call.
func (c *Cycle) Scores(ctx context.Context, feasible []string, onCall func()) *Scores {
	s, err, _ := c.scores.do(ctx, func(ctx context.Context) (*Scores, error) {
		if onCall != nil {
			onCall()
		}
		if c.scoreOnly && c.nodes != nil {
			resp, err := c.t.host.preScoreAlone(ctx, c.callArgs(nil), feasible)
			return newScores(feasible, resp, err), nil
		}
		r, err := c.Called(ctx)
		if err != nil {
			return &Scores{Err: err}, nil
		}
		resp, err := c.t.host.preScore(ctx, c.callArgs(nil), feasible, r.applies())
		return newScores(feasible, resp, err), nil
	})
	if s == nil {
		return &Scores{Err: err}
	}
	return s
}

func newScores(feasible []string, resp *pb.PreScoreResponse, err error) *Scores {
	s := &Scores{Err: err}
	if err != nil {
		return s
	}
	s.nodes = feasible
	s.position = make(map[string]int, len(feasible))
	for i, name := range feasible {
		s.position[name] = i
	}
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
