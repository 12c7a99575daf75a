package shim

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"schedplug.dev/integration/scheduler/shim/internal/shimtest"
)

// profileHandle is a framework handle of a named profile.
type profileHandle struct {
	fakeHandle
	name string
}

func (h *profileHandle) ProfileName() string { return h.name }

// TestScoresAheadEqualPreScoreOnRealHost is the differential test of
// scores ahead: the same scheduling cycles, through a shim that normalizes
// the real host's scores ahead and through one that asks PreScore
// (SCHEDPLUG_SCORES_AHEAD=off), give every node the same score, for a
// profile with native filters (HwEncrypt, DedicatedNodes and
// NetworkLatency, with windows, cycles that go beyond them, and in-tree
// rejections) and for one whose native plugin only scores.
func TestScoresAheadEqualPreScoreOnRealHost(t *testing.T) {
	const nodes = 1000
	var latency strings.Builder
	for i := 0; i < nodes; i++ {
		if i%7 != 0 { // the others get the default latency
			fmt.Fprintf(&latency, "n%04d %d.%d\n", i, (i*37)%101, i%10)
		}
	}
	target, _ := shimtest.StartRealHostWith(t, shimtest.RealHost{Latency: latency.String(), ScoreOnlyProfile: "score-only"})
	var list []fwk.NodeInfo
	var infos []*framework.NodeInfo
	for i := 0; i < nodes; i++ {
		labels := map[string]string{}
		if i%3 != 0 {
			labels["node.kubernetes.io/hw-encrypt"] = "true"
		}
		if i%10 == 0 {
			labels["schedplug.io/dedicated"] = "true"
		}
		ni := testNode(fmt.Sprintf("n%04d", i), labels, i%3)
		infos = append(infos, ni)
		list = append(list, ni)
	}
	filterNames := []string{"HwEncrypt", "DedicatedNodes", "NetworkLatency"}
	type shim struct {
		mgr      *Manager
		profile  map[string]*Plugin
		onlyPlug *Plugin
	}
	start := func(noAhead bool) shim {
		m, err := NewManager(Config{Target: target, NoScoresAhead: noAhead, Profiles: []Profile{
			{SchedulerName: "schedplug-scheduler", Plugins: filterNames},
			{SchedulerName: "score-only", Plugins: []string{"NetworkLatency"}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Close)
		main := &profileHandle{name: "schedplug-scheduler"}
		main.setSnapshot(list)
		only := &profileHandle{name: "score-only"}
		only.setSnapshot(list)
		s := shim{mgr: m, profile: map[string]*Plugin{}}
		for _, n := range filterNames {
			s.profile[n] = NewPlugin(m, n, DefaultPolicy(), main)
		}
		s.onlyPlug = NewPlugin(m, "NetworkLatency", DefaultPolicy(), only)
		if err := m.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return s
	}
	ahead, calls := start(false), start(true)
	ctx := context.Background()

	// One cycle of the filter profile: Filter walks `walk` list positions
	// from `from`; kube-scheduler's own filters reject every fifth node
	// (shifted per cycle); the feasible nodes are scored.
	filterCycle := func(s shim, pod *v1.Pod, from, walk, k int) map[string]int64 {
		t.Helper()
		state := framework.NewCycleState()
		for _, n := range filterNames {
			if _, st := s.profile[n].PreFilter(ctx, state, pod, list); !st.IsSuccess() && !st.IsSkip() {
				t.Fatalf("PreFilter %s: %v", n, st)
			}
		}
		var feasible []fwk.NodeInfo
		for i := 0; i < walk; i++ {
			pos := (from + i) % nodes
			if (pos+k)%5 == 0 {
				continue
			}
			ni := list[pos]
			fits := true
			for _, f := range filterNames[:2] {
				if st := s.profile[f].Filter(ctx, state, pod, ni); !st.IsSuccess() {
					fits = false
					break
				}
			}
			if fits {
				feasible = append(feasible, ni)
			}
		}
		return scoreNodes(t, s.profile["NetworkLatency"], state, pod, feasible)
	}
	scoreOnlyCycle := func(s shim, pod *v1.Pod, from, walk int) map[string]int64 {
		t.Helper()
		state := framework.NewCycleState()
		if _, st := s.onlyPlug.PreFilter(ctx, state, pod, list); !st.IsSkip() {
			t.Fatalf("PreFilter of the score-only profile: %v, want Skip", st)
		}
		var feasible []fwk.NodeInfo
		for i := 0; i < walk; i++ {
			feasible = append(feasible, list[(from+i)%nodes])
		}
		return scoreNodes(t, s.onlyPlug, state, pod, feasible)
	}

	usedBefore := aheadOutcome(t, "used")
	from := 0
	for k := 0; k < 24; k++ {
		pod := testPod(fmt.Sprintf("p%02d", k), nil)
		pod.Annotations = map[string]string{}
		if k%3 == 0 {
			pod.Annotations["myorg.io/require-hw-encrypt"] = "true"
		}
		if k%4 == 0 {
			pod.Annotations["schedplug.io/dedicated-ok"] = "true"
		}
		walk := 150
		if k%8 == 5 {
			walk = nodes // a pod few nodes fit: beyond the window
		}
		want := filterCycle(calls, pod, from, walk, k)
		got := filterCycle(ahead, pod, from, walk, k)
		if len(want) == 0 || !maps.Equal(got, want) {
			t.Fatalf("cycle %d (from %d, %d positions): scores ahead gave %v, PreScore %v", k, from, walk, got, want)
		}
		// kube-scheduler's next cycle, of whichever profile, starts where
		// this one stopped.
		from = (from + walk) % nodes
		want = scoreOnlyCycle(calls, pod, from, walk)
		got = scoreOnlyCycle(ahead, pod, from, walk)
		if !maps.Equal(got, want) {
			t.Fatalf("score-only cycle %d: scores ahead gave %v, PreScore %v", k, got, want)
		}
		from = (from + walk) % nodes
		// A pod lands: its node changes for the next cycle.
		infos[(from+k)%nodes].AddPod(testPod(fmt.Sprintf("placed-%d", k), nil))
	}
	// Most cycles of both profiles were served from scores ahead.
	used := aheadOutcome(t, "used") - usedBefore
	t.Logf("scores ahead served %v of the 48 cycles", used)
	if used < 30 {
		t.Fatalf("scores ahead served %v of the 48 cycles; want most (missed %v, failed %v, none %v)", used, aheadOutcome(t, "node_not_scored_ahead"), aheadOutcome(t, "plugin_failed_ahead"), aheadOutcome(t, "no_answer"))
	}
}

// scoreNodes runs PreScore, Score and NormalizeScore of p on the nodes and
// returns the normalized scores by node name.
func scoreNodes(t *testing.T, p *Plugin, state fwk.CycleState, pod *v1.Pod, feasible []fwk.NodeInfo) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	if st := p.PreScore(ctx, state, pod, feasible); !st.IsSuccess() {
		t.Fatalf("PreScore: %v", st)
	}
	list := make(fwk.NodeScoreList, len(feasible))
	for i, ni := range feasible {
		s, st := p.Score(ctx, state, pod, ni)
		if !st.IsSuccess() {
			t.Fatalf("Score(%s): %v", ni.Node().Name, st)
		}
		list[i] = fwk.NodeScore{Name: ni.Node().Name, Score: s}
	}
	if st := p.NormalizeScore(ctx, state, pod, list); !st.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", st)
	}
	out := map[string]int64{}
	for _, s := range list {
		out[s.Name] = s.Score
	}
	return out
}
