package shim

import (
	"context"
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// scoreCycle runs one scheduling cycle of a profile whose native plugins
// only score, as the framework does (PreFilter, PreScore, Score and
// NormalizeScore), and returns the normalized scores by node name.
func scoreCycle(t *testing.T, e *env, plugin string, nodes []fwk.NodeInfo) map[string]int64 {
	t.Helper()
	p := e.plugins[plugin]
	state := framework.NewCycleState()
	pod := testPod("p", nil)
	if _, st := p.PreFilter(context.Background(), state, pod, nodes); !st.IsSkip() {
		t.Fatalf("PreFilter of a score-only plugin: %v, want Skip", st)
	}
	if st := p.PreScore(context.Background(), state, pod, nodes); !st.IsSuccess() {
		t.Fatalf("PreScore: %v", st)
	}
	list := make(fwk.NodeScoreList, len(nodes))
	for i, ni := range nodes {
		s, st := p.Score(context.Background(), state, pod, ni)
		if !st.IsSuccess() {
			t.Fatalf("Score(%s): %v", ni.Node().Name, st)
		}
		list[i] = fwk.NodeScore{Name: ni.Node().Name, Score: s}
	}
	if st := p.NormalizeScore(context.Background(), state, pod, list); !st.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", st)
	}
	out := map[string]int64{}
	for _, s := range list {
		out[s.Name] = s.Score
	}
	return out
}

func expectScores(t *testing.T, got, want map[string]int64) {
	t.Helper()
	for name, w := range want {
		if got[name] != w {
			t.Errorf("score of %s = %d, want %d (all: %v)", name, got[name], w, got)
		}
	}
}

// A profile without native Filter plugins makes one host call per pod: its
// PreScore carries the node-table delta, and no PreFilter is sent, through
// node changes and a host restart alike.
func TestScoreOnlyProfileMakesOneCallPerPod(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{{Name: "Nearby", HasScore: true}}, nil)
	a := testNode("a", map[string]string{"score-Nearby": "10"}, 0)
	b := testNode("b", map[string]string{"score-Nearby": "90"}, 0)
	expectScores(t, scoreCycle(t, e, "Nearby", asList(a, b)), map[string]int64{"a": 10, "b": 90})
	if d := e.host.lastPreScore.GetDelta(); !d.GetFull() || len(d.GetUpserts()) != 2 {
		t.Fatalf("first PreScore's delta = %v, want the full table of 2 nodes", d)
	}

	// A new node travels as a delta of one upsert, with the next pod.
	c := testNode("c", map[string]string{"score-Nearby": "55"}, 0)
	expectScores(t, scoreCycle(t, e, "Nearby", asList(a, b, c)), map[string]int64{"a": 10, "b": 90, "c": 55})
	if d := e.host.lastPreScore.GetDelta(); d.GetFull() || len(d.GetUpserts()) != 1 || d.GetUpserts()[0].GetName() != "c" {
		t.Fatalf("second PreScore's delta = %v, want only node c", d)
	}

	// The host restarts: the PreScore is refused (unknown session), the
	// shim handshakes again and sends the full table with the same call.
	e.host.reset()
	expectScores(t, scoreCycle(t, e, "Nearby", asList(a, b, c)), map[string]int64{"a": 10, "b": 90, "c": 55})
	if d := e.host.lastPreScore.GetDelta(); !d.GetFull() {
		t.Fatalf("PreScore after the restart sent delta %v, want the full table", d)
	}
	if got := e.host.count("PreFilter"); got != 0 {
		t.Fatalf("PreFilter RPCs = %d, want 0 for a profile without native filters", got)
	}
	if got := e.host.count("PreScore"); got != 2 {
		t.Fatalf("PreScore RPCs since the restart = %d, want 2 (refused, then with the full table)", got)
	}
}

// A host that does not offer PreScoreRequest.delta gets the PreFilter call
// that brings its table up to date, as before.
func TestScoreOnlyProfileOnAnOlderHostCallsPreFilterFirst(t *testing.T) {
	info := &pb.PluginInfo{Name: "Nearby", HasScore: true}
	host := newFakeHost(t, info)
	host.noPreScoreDelta = true
	e := &env{host: host, handle: &fakeHandle{}, plugins: map[string]*Plugin{}}
	e.mgr = newTestManager(t, host.target(), []*pb.PluginInfo{info})
	e.plugins["Nearby"] = NewPlugin(e.mgr, "Nearby", DefaultPolicy(), e.handle)
	if err := e.mgr.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	a := testNode("a", map[string]string{"score-Nearby": "30"}, 0)
	p := e.plugins["Nearby"]
	state := framework.NewCycleState()
	pod := testPod("p", nil)
	if _, st := p.PreFilter(context.Background(), state, pod, asList(a)); !st.IsSkip() {
		t.Fatalf("PreFilter: %v, want Skip (no native Filter)", st)
	}
	if st := p.PreScore(context.Background(), state, pod, asList(a)); !st.IsSuccess() {
		t.Fatalf("PreScore: %v", st)
	}
	if s, _ := p.Score(context.Background(), state, pod, a); s != 30 {
		t.Fatalf("Score = %d, want 30", s)
	}
	if pf, ps := host.count("PreFilter"), host.count("PreScore"); pf != 1 || ps != 1 {
		t.Fatalf("PreFilter, PreScore RPCs = %d, %d; want 1, 1", pf, ps)
	}
	if host.lastPreScore.GetDelta() != nil {
		t.Fatalf("PreScore to an older host carried a delta: %v", host.lastPreScore.GetDelta())
	}
}
