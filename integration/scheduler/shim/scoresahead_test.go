package shim

import (
	"context"
	"fmt"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// newAheadEnv is newEnv on a fake host that offers scores ahead.
func newAheadEnv(t *testing.T, infos []*pb.PluginInfo, setup func(*fakeHost)) *env {
	t.Helper()
	host := newFakeHost(t, infos...)
	host.scoresAhead = true
	if setup != nil {
		setup(host)
	}
	return newEnvOn(t, host, infos, nil)
}

// frameworkCycle runs one scheduling cycle as kube-scheduler does: every
// plugin's PreFilter, the filters of `filters` on every node, then PreScore,
// Score and NormalizeScore of `scorer` on the nodes that passed and are not
// in `inTreeRejects` (what kube-scheduler's own filters turn down). It
// returns the scorer's normalized scores by node name.
func frameworkCycle(t *testing.T, e *env, order []string, filters []string, scorer string, pod *v1.Pod, nodes []fwk.NodeInfo, inTreeRejects map[string]bool) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	state := framework.NewCycleState()
	skipped := map[string]bool{}
	for _, n := range order {
		if _, st := e.plugins[n].PreFilter(ctx, state, pod, nodes); st.IsSkip() {
			skipped[n] = true
		} else if !st.IsSuccess() {
			t.Fatalf("PreFilter %s: %v", n, st)
		}
	}
	var feasible []fwk.NodeInfo
	for _, ni := range nodes {
		fits := !inTreeRejects[ni.Node().Name]
		for _, f := range filters {
			if skipped[f] || !fits {
				continue
			}
			fits = e.plugins[f].Filter(ctx, state, pod, ni).IsSuccess()
		}
		if fits {
			feasible = append(feasible, ni)
		}
	}
	return scoreNodes(t, e.plugins[scorer], state, pod, feasible)
}

func aheadOutcome(t *testing.T, outcome string) float64 {
	return metricValue(t, "schedplug_shim_scores_ahead_total", "outcome", outcome)
}

// A profile with a native Filter and a native Score makes one call per
// pod: PreFilter brings the raw scores of the nodes no native Filter
// rejected, the shim normalizes them over the nodes kube-scheduler scores,
// and the next call tells the host which those were (Placement.scored).
func TestScoresAheadFilterAndScoreMakeOneCall(t *testing.T) {
	infos := []*pb.PluginInfo{{Name: "F", HasFilter: true}, {Name: "S", HasScore: true}}
	e := newAheadEnv(t, infos, nil)
	a := testNode("a", map[string]string{"score-S": "10"}, 0)
	b := testNode("b", map[string]string{"score-S": "90", "reject-F": "x"}, 0)
	c := testNode("c", map[string]string{"score-S": "55"}, 0)
	d := testNode("d", map[string]string{"score-S": "70"}, 0)
	used := aheadOutcome(t, "used")
	normalized := histogramCount(t, "schedplug_shim_normalize_duration_seconds", "plugin", "S")
	got := frameworkCycle(t, e, []string{"F", "S"}, []string{"F"}, "S", testPod("p1", nil), asList(a, b, c, d), map[string]bool{"c": true})
	expectScores(t, got, map[string]int64{"a": 10, "d": 70})
	if len(got) != 2 {
		t.Fatalf("scored %v, want a and d", got)
	}
	if pf, ps := e.host.count("PreFilter"), e.host.count("PreScore"); pf != 1 || ps != 0 {
		t.Fatalf("PreFilter, PreScore calls = %d, %d; want 1, 0", pf, ps)
	}
	if got := aheadOutcome(t, "used") - used; got != 1 {
		t.Fatalf("scores_ahead_total{outcome=used} grew by %v, want 1", got)
	}
	// The shim normalized them: its histogram times it (the host's
	// normalize series cannot).
	if got := histogramCount(t, "schedplug_shim_normalize_duration_seconds", "plugin", "S") - normalized; got != 1 {
		t.Fatalf("schedplug_shim_normalize_duration_seconds{plugin=S} counted %d normalizations, want 1", got)
	}
	// The next call says which nodes of the scores ahead (a, c and d, in
	// slot order) were scored: a and d.
	frameworkCycle(t, e, []string{"F", "S"}, []string{"F"}, "S", testPod("p2", nil), asList(a, b, c, d), nil)
	var scored *pb.Placement
	for _, p := range e.host.placed {
		if p.GetPodUid() == "uid-p1" && len(p.GetScored()) > 0 {
			scored = p
		}
	}
	if scored == nil || !slices.Equal(scored.GetScored(), []uint32{0, 2}) {
		t.Fatalf("placements the host got: %v; want p1 scored at positions [0 2]", e.host.placed)
	}
}

// Whenever scores ahead could differ from what PreScore gives, the cycle
// makes its PreScore call: a scorer that did not finish ahead, one that
// normalizes its scores itself (as the host reports it, or as the
// Handshake says).
func TestScoresAheadFallBackToPreScore(t *testing.T) {
	a := testNode("a", map[string]string{"score-S": "10"}, 0)
	c := testNode("c", map[string]string{"score-S": "55"}, 0)
	for _, tc := range []struct {
		name    string
		info    *pb.PluginInfo
		setup   func(*fakeHost)
		pod     *v1.Pod
		outcome string
		want    map[string]int64
	}{
		{name: "unfinished ahead", info: &pb.PluginInfo{Name: "S", HasScore: true}, pod: testPod("p", map[string]string{"unfinished-S": "x"}),
			outcome: "plugin_failed_ahead", want: map[string]int64{"a": 0, "c": 0}},
		{name: "normalized by the plugin", info: &pb.PluginInfo{Name: "S", HasScore: true}, pod: testPod("p", nil),
			setup: func(h *fakeHost) {
				h.normalization = map[string]pb.Normalization{"S": pb.Normalization_NORMALIZATION_BY_PLUGIN}
			},
			outcome: "plugin_normalizes_itself", want: map[string]int64{"a": 10, "c": 55}},
		{name: "own normalize_score in the Handshake", info: &pb.PluginInfo{Name: "S", HasScore: true, HasNormalizeScore: true}, pod: testPod("p", nil),
			want: map[string]int64{"a": 10, "c": 55}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			infos := []*pb.PluginInfo{{Name: "F", HasFilter: true}, tc.info}
			e := newAheadEnv(t, infos, tc.setup)
			if tc.pod.Labels["unfinished-S"] != "" {
				// Ignore: an unfinished scorer contributes nothing.
				e.plugins["S"].policy.FailurePolicy = FailurePolicyIgnore
			}
			before := 0.0
			if tc.outcome != "" {
				before = aheadOutcome(t, tc.outcome)
			}
			ctx := context.Background()
			state := framework.NewCycleState()
			nodes := asList(a, c)
			for _, n := range []string{"F", "S"} {
				e.plugins[n].PreFilter(ctx, state, tc.pod, nodes)
			}
			if st := e.plugins["S"].PreScore(ctx, state, tc.pod, nodes); !st.IsSuccess() && !st.IsSkip() {
				t.Fatalf("PreScore: %v", st)
			}
			for _, ni := range nodes {
				s, _ := e.plugins["S"].Score(ctx, state, tc.pod, ni)
				if s != tc.want[ni.Node().Name] {
					t.Errorf("Score(%s) = %d, want %d", ni.Node().Name, s, tc.want[ni.Node().Name])
				}
			}
			if ps := e.host.count("PreScore"); ps != 1 {
				t.Fatalf("PreScore calls = %d, want 1", ps)
			}
			if tc.outcome != "" {
				if got := aheadOutcome(t, tc.outcome) - before; got != 1 {
					t.Fatalf("scores_ahead_total{outcome=%s} grew by %v, want 1", tc.outcome, got)
				}
			}
		})
	}
}

// A profile whose native plugins only score sends its one call from
// PreFilter, for raw scores; PreScore waits for it and makes no call. When
// kube-scheduler scores a node outside the nodes scored ahead, PreScore
// asks the host for exactly its nodes, without a delta (the call from
// PreFilter brought the table up to date).
func TestScoresAheadScoreOnlyProfile(t *testing.T) {
	info := &pb.PluginInfo{Name: "S", HasScore: true}
	e := newAheadEnv(t, []*pb.PluginInfo{info}, nil)
	var nodes []fwk.NodeInfo
	var all []*framework.NodeInfo
	for i := 0; i < 100; i++ {
		n := testNode(fmt.Sprintf("n%02d", i), map[string]string{"score-S": fmt.Sprint(i)}, 0)
		all = append(all, n)
		nodes = append(nodes, n)
	}
	cycle := func(pod string, feasible []*framework.NodeInfo) map[string]int64 {
		t.Helper()
		ctx := context.Background()
		state := framework.NewCycleState()
		p := e.plugins["S"]
		if _, st := p.PreFilter(ctx, state, testPod(pod, nil), nodes); !st.IsSkip() {
			t.Fatalf("PreFilter of a score-only plugin: %v, want Skip", st)
		}
		if st := p.PreScore(ctx, state, testPod(pod, nil), asList(feasible...)); !st.IsSuccess() {
			t.Fatalf("PreScore: %v", st)
		}
		out := map[string]int64{}
		for _, ni := range feasible {
			s, _ := p.Score(ctx, state, testPod(pod, nil), ni)
			out[ni.Node().Name] = s
		}
		return out
	}
	// Every node scored ahead (nothing to predict from yet).
	got := cycle("p1", all[0:10])
	for i := 0; i < 10; i++ {
		if name := fmt.Sprintf("n%02d", i); got[name] != int64(i) {
			t.Fatalf("score of %s = %d, want %d (all: %v)", name, got[name], i, got)
		}
	}
	if ps := e.host.count("PreScore"); ps != 1 || !e.host.lastPreScore.GetRaw() || e.host.lastPreScore.GetDelta() == nil || len(e.host.lastPreScore.GetNodes()) != 100 {
		t.Fatalf("PreScore calls = %d, last %v; want 1 raw call with the delta for all 100 nodes", ps, e.host.lastPreScore)
	}
	// The next cycle asks for the run after the last one's nodes: nodes
	// 10-19 are in it.
	got = cycle("p2", all[10:20])
	if got["n15"] != 15 || e.host.count("PreScore") != 2 || len(e.host.lastPreScore.GetNodes()) >= 100 {
		t.Fatalf("second cycle: scores %v, %d PreScore calls, last for %d nodes; want 15 for n15, 2 calls, a window", got, e.host.count("PreScore"), len(e.host.lastPreScore.GetNodes()))
	}
	// kube-scheduler scores nodes far from the predicted run: one more
	// PreScore, for exactly those nodes, without a delta.
	missing := aheadOutcome(t, "node_not_scored_ahead")
	got = cycle("p3", all[70:75])
	if got["n72"] != 72 || e.host.count("PreScore") != 4 {
		t.Fatalf("third cycle: scores %v after %d PreScore calls; want 72 for n72 after 4", got, e.host.count("PreScore"))
	}
	if last := e.host.lastPreScore; last.GetRaw() || last.GetDelta() != nil || len(last.GetNodes()) != 5 {
		t.Fatalf("the PreScore for nodes not scored ahead was %v; want the 5 nodes, not raw, no delta", last)
	}
	if got := aheadOutcome(t, "node_not_scored_ahead") - missing; got != 1 {
		t.Fatalf("scores_ahead_total{outcome=node_not_scored_ahead} grew by %v, want 1", got)
	}
	if pf := e.host.count("PreFilter"); pf != 0 {
		t.Fatalf("PreFilter calls = %d, want 0 for a score-only profile", pf)
	}
}

// Scores ahead are the cycle's own answer: a host that restarts between
// PreFilter and PreScore does not change the cycle's scores (as it does
// not change its Filter verdicts), and the next cycle starts afresh on
// the new host.
func TestScoresAheadAcrossAHostRestart(t *testing.T) {
	infos := []*pb.PluginInfo{{Name: "F", HasFilter: true}, {Name: "S", HasScore: true}}
	e := newAheadEnv(t, infos, nil)
	a := testNode("a", map[string]string{"score-S": "10"}, 0)
	c := testNode("c", map[string]string{"score-S": "55"}, 0)
	ctx := context.Background()
	state := framework.NewCycleState()
	pod := testPod("p1", nil)
	nodes := asList(a, c)
	for _, n := range []string{"F", "S"} {
		e.plugins[n].PreFilter(ctx, state, pod, nodes)
	}
	e.host.reset()
	if st := e.plugins["S"].PreScore(ctx, state, pod, nodes); !st.IsSuccess() {
		t.Fatalf("PreScore after the host restarted: %v", st)
	}
	if s, _ := e.plugins["S"].Score(ctx, state, pod, c); s != 55 {
		t.Fatalf("Score(c) = %d, want 55", s)
	}
	c.Node().Labels["score-S"] = "60"
	c.SetNode(c.Node()) // a new generation: the node travels with the next delta
	got := frameworkCycle(t, e, []string{"F", "S"}, []string{"F"}, "S", testPod("p2", nil), nodes, nil)
	expectScores(t, got, map[string]int64{"a": 10, "c": 60})
	if ps := e.host.count("PreScore"); ps != 0 {
		t.Fatalf("PreScore calls on the restarted host = %d, want 0", ps)
	}
}

// NormalizeScore reads each node's score by position when the framework
// lists the nodes in PreScore's order; a list in another order still gets
// each node its own score.
func TestNormalizeScoreInAnotherOrderThanPreScore(t *testing.T) {
	infos := []*pb.PluginInfo{{Name: "F", HasFilter: true}, {Name: "S", HasScore: true}}
	e := newAheadEnv(t, infos, nil)
	a := testNode("a", map[string]string{"score-S": "10"}, 0)
	c := testNode("c", map[string]string{"score-S": "55"}, 0)
	d := testNode("d", map[string]string{"score-S": "70"}, 0)
	ctx := context.Background()
	state := framework.NewCycleState()
	pod := testPod("p", nil)
	nodes := asList(a, c, d)
	for _, n := range []string{"F", "S"} {
		if _, st := e.plugins[n].PreFilter(ctx, state, pod, nodes); !st.IsSuccess() && !st.IsSkip() {
			t.Fatalf("PreFilter %s: %v", n, st)
		}
	}
	if st := e.plugins["S"].PreScore(ctx, state, pod, nodes); !st.IsSuccess() {
		t.Fatalf("PreScore: %v", st)
	}
	list := fwk.NodeScoreList{{Name: "d"}, {Name: "a"}, {Name: "c"}}
	if st := e.plugins["S"].NormalizeScore(ctx, state, pod, list); !st.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", st)
	}
	want := map[string]int64{"a": 10, "c": 55, "d": 70}
	for _, s := range list {
		if s.Score != want[s.Name] {
			t.Errorf("score of %s = %d, want %d", s.Name, s.Score, want[s.Name])
		}
	}
}
