package shim

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/abi"
	"schedplug.dev/integration/scheduler/shim/cycle"
)

// windowEnv is a cluster of n nodes whose verdicts are known: every 10th
// node rejects HwEncrypt, every 15th NetworkLatency.
type windowEnv struct {
	*env
	nodes []fwk.NodeInfo
}

func newWindowEnv(t *testing.T, n int, pols map[string]Policy, hints uint64) *windowEnv {
	infos := []*pb.PluginInfo{filterScorePlugin("HwEncrypt"), filterScorePlugin("NetworkLatency")}
	for _, info := range infos {
		info.Hints = hints
	}
	return withWindowNodes(newEnv(t, infos, pols), n)
}

// withWindowNodes gives the env n nodes, every 10th rejected by HwEncrypt
// and every 15th by NetworkLatency, as its snapshot.
func withWindowNodes(e *env, n int) *windowEnv {
	w := &windowEnv{env: e}
	for i := 0; i < n; i++ {
		labels := map[string]string{}
		if i%10 == 0 {
			labels["reject-HwEncrypt"] = ""
		}
		if i%15 == 0 {
			labels["reject-NetworkLatency"] = ""
		}
		w.nodes = append(w.nodes, testNode(fmt.Sprintf("n%04d", i), labels, 0))
	}
	e.handle.setSnapshot(w.nodes)
	return w
}

// cycle runs one scheduling cycle as the framework's Filter would: PreFilter
// of both plugins, then both Filters (in profile order, the second only if
// the first passed) on `count` nodes from list position `start`, spread
// over `workers` goroutines; every status is checked.
func (w *windowEnv) cycle(t *testing.T, start, count, workers int) {
	t.Helper()
	state := framework.NewCycleState()
	pod := testPod(fmt.Sprintf("p-%d-%d", start, count), nil)
	for name, st := range w.runPreFilter(t, []string{"HwEncrypt", "NetworkLatency"}, state, pod, w.nodes) {
		if !st.IsSuccess() {
			t.Fatalf("PreFilter %s: %v", name, st)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, count)
	for k := 0; k < workers; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			for i := k; i < count; i += workers {
				pos := (start + i) % len(w.nodes)
				ni := w.nodes[pos]
				st := w.plugins["HwEncrypt"].Filter(context.Background(), state, pod, ni)
				if want := pos%10 == 0; st.IsSuccess() == want {
					errs <- fmt.Sprintf("HwEncrypt on %s: %v, want rejected %v", ni.Node().Name, st, want)
					continue
				}
				if !st.IsSuccess() {
					continue
				}
				st = w.plugins["NetworkLatency"].Filter(context.Background(), state, pod, ni)
				if want := pos%15 == 0; st.IsSuccess() == want {
					errs <- fmt.Sprintf("NetworkLatency on %s: %v, want rejected %v", ni.Node().Name, st, want)
				}
			}
		}(k)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func (w *windowEnv) lastEvaluate() []uint32 {
	w.host.mu.Lock()
	defer w.host.mu.Unlock()
	return w.host.evaluates[len(w.host.evaluates)-1]
}

func TestFilterWindowFollowsTheFrameworksWalk(t *testing.T) {
	w := newWindowEnv(t, 1000, nil, 0)

	// The first cycle has nothing to go by: every node.
	w.cycle(t, 0, 120, 4)
	if ev := w.lastEvaluate(); ev != nil {
		t.Fatalf("first cycle evaluated %v, want every node", ev)
	}
	// The next one starts where it stopped and gets a window around that.
	w.cycle(t, 120, 120, 4)
	margin := uint32(31 + 16) // the window's margin at 1000 nodes: sqrt(nodes) + 16
	wantStart := 120 - margin
	wantEnd := wantStart + margin + 120 + 120/4 + margin
	if ev := w.lastEvaluate(); len(ev) != 2 || ev[0] != wantStart || ev[1] != wantEnd {
		t.Fatalf("second cycle evaluated %v, want [%d %d]", ev, wantStart, wantEnd)
	}
	if got := w.host.count("FilterNodes"); got != 0 {
		t.Fatalf("FilterNodes calls = %d within the window, want 0", got)
	}

	// A pod no node fits visits every node from where the last one
	// stopped: the first node outside the window asks about the next run
	// of positions, a window's length past it, and the first node beyond
	// that about all the others, once each, whichever of 16 workers gets
	// there first; every node gets its verdict.
	misses := metricValue(t, "schedplug_shim_filter_window_misses_total")
	w.cycle(t, 240, 1000, 16)
	if got := w.host.count("FilterNodes"); got != 2 {
		t.Fatalf("FilterNodes calls = %d for a cycle that visits every node, want 2", got)
	}
	evs := w.evaluatesOf(2)
	windowEnd, length := uint32(240+120+120/4+margin), uint32(margin+120+120/4+margin)
	if next := evs[0]; len(next) != 2 || next[0] != windowEnd || next[1] < windowEnd+length || next[1] > windowEnd+length+16 {
		t.Fatalf("the first FilterNodes call evaluated %v, want the next run [%d, %d+a worker's lead)", next, windowEnd, windowEnd+length)
	}
	if rest := evs[1]; len(rest) != 4 || rest[0] != 0 || rest[1] != 240-margin || rest[2] != evs[0][1] || rest[3] != 1000 {
		t.Fatalf("the second FilterNodes call evaluated %v, want every node left", rest)
	}
	if got := metricValue(t, "schedplug_shim_filter_window_misses_total") - misses; got != 1 {
		t.Fatalf("filter_window_misses_total went up by %v, want 1", got)
	}
	if got := w.host.count("Filter"); got != 0 {
		t.Fatalf("single-node Filter calls = %d, want 0", got)
	}
	// After it, every node again (the last run covered them all).
	w.cycle(t, 240, 100, 4)
	if ev := w.lastEvaluate(); ev != nil {
		t.Fatalf("the cycle after one that visited every node evaluated %v, want every node", ev)
	}
	if got := w.host.count("PreFilter"); got != 4 {
		t.Fatalf("PreFilter calls = %d, want 4", got)
	}
}

// With a host that takes a feasible target, the window is the whole list
// from where the walk is expected to start, and the host stops once as
// many nodes passed as in the recent runs, an eighth more and a margin for
// each margin before the start and one for the end:
// a longer walk than the last no longer misses for want of a longer window
// alone, and the host evaluates what the walk needs.
func TestFilterWindowWithAFeasibleTargetWalksUntilEnoughPass(t *testing.T) {
	infos := []*pb.PluginInfo{filterScorePlugin("HwEncrypt"), filterScorePlugin("NetworkLatency")}
	host := newFakeHost(t, infos...)
	host.feasibleTarget = true
	w := withWindowNodes(newEnvOn(t, host, infos, nil), 1000)
	margin := uint32(31 + 16)

	w.cycle(t, 0, 120, 4)
	if ev := w.lastEvaluate(); ev != nil {
		t.Fatalf("first cycle evaluated %v, want every node", ev)
	}
	// 104 of positions 0-119 pass both filters (every 10th and every
	// 15th fail): a target of 104 + 13 + 3 margins, on the whole list
	// from two margins before position 120.
	w.cycle(t, 120, 120, 4)
	if ev, want := w.lastEvaluate(), []uint32{120 - 2*margin, 1000, 0, 120 - 2*margin}; !slices.Equal(ev, want) {
		t.Fatalf("second cycle evaluated %v, want %v", ev, want)
	}
	if got, want := w.lastTarget(), uint32(104+13+3*margin); got != want {
		t.Fatalf("second cycle's feasible target = %d, want %d", got, want)
	}
	// A walk of 300 positions, longer than the host walked for the last
	// one: one FilterNodes call for the next run.
	w.cycle(t, 240, 300, 16)
	if got := w.host.count("FilterNodes"); got != 1 {
		t.Fatalf("FilterNodes calls = %d, want 1", got)
	}
	// 260 of positions 240-539 passed: the next target follows the
	// longest recent run's, and the walk of 300 stays inside it. The
	// step between the last two walks is known now (walk.go), so the
	// window begins one margin before the expected start, not two, and
	// the target has a margin less.
	w.cycle(t, 540, 300, 16)
	if got, want := w.lastTarget(), uint32(260+32+2*margin); got != want {
		t.Fatalf("fourth cycle's feasible target = %d, want %d", got, want)
	}
	if ev := w.lastEvaluate(); len(ev) == 0 || ev[0] != 540-margin {
		t.Fatalf("fourth cycle evaluated %v, want the list from %d (a margin before 540)", ev, 540-margin)
	}
	if got := w.host.count("FilterNodes"); got != 1 {
		t.Fatalf("FilterNodes calls = %d after a walk within the target, want still 1", got)
	}
	if got := w.host.count("Filter"); got != 0 {
		t.Fatalf("single-node Filter calls = %d, want 0", got)
	}
	// A walk over 950 positions: with the margins the recent runs cover
	// the whole list, so the next cycles evaluate every node.
	w.cycle(t, 840, 950, 16)
	w.cycle(t, 790, 100, 4)
	if ev, target := w.lastEvaluate(), w.lastTarget(); ev != nil || target != 0 {
		t.Fatalf("after a walk over most of the list: evaluated %v with target %d, want every node", ev, target)
	}
}

func (w *windowEnv) lastTarget() uint32 {
	w.host.mu.Lock()
	defer w.host.mu.Unlock()
	return w.host.targets[len(w.host.targets)-1]
}

// evaluatesOf is the `evaluate` ranges of the last k calls.
func (w *windowEnv) evaluatesOf(k int) [][]uint32 {
	w.host.mu.Lock()
	defer w.host.mu.Unlock()
	return append([][]uint32(nil), w.host.evaluates[len(w.host.evaluates)-k:]...)
}

// A walk a little longer than its window (a pod of a kind that finds
// fewer nodes feasible) costs one FilterNodes call for the next run of
// positions, not for every node outside the window.
func TestFilterWindowMissEvaluatesTheNextRun(t *testing.T) {
	w := newWindowEnv(t, 1000, nil, 0)
	w.cycle(t, 0, 120, 4)
	w.cycle(t, 120, 120, 4) // window [193, 437)
	w.cycle(t, 240, 300, 16)
	if got := w.host.count("FilterNodes"); got != 1 {
		t.Fatalf("FilterNodes calls = %d for a walk 103 positions past its window, want 1", got)
	}
	next := w.evaluatesOf(1)[0]
	if len(next) != 2 || next[0] != 437 || next[1] < 437+244 || next[1] > 437+244+16 {
		t.Fatalf("FilterNodes evaluated %v, want the next run from 437, about as long as the window (244)", next)
	}
	if got := w.host.count("Filter"); got != 0 {
		t.Fatalf("single-node Filter calls = %d, want 0", got)
	}
}

func TestFilterWindowHoldsTheNominatedNode(t *testing.T) {
	w := newWindowEnv(t, 1000, nil, 0)
	w.cycle(t, 0, 120, 4)
	// kube-scheduler filters a pod's nominated node first.
	state := framework.NewCycleState()
	pod := testPod("nominated", nil)
	pod.Status.NominatedNodeName = "n0371"
	w.runPreFilter(t, []string{"HwEncrypt", "NetworkLatency"}, state, pod, w.nodes)
	if ev := w.lastEvaluate(); len(ev) != 4 || ev[2] != 371 || ev[3] != 372 {
		t.Fatalf("evaluated %v, want the window and then [371 372]", ev)
	}
	if st := w.plugins["HwEncrypt"].Filter(context.Background(), state, pod, w.nodes[371]); !st.IsSuccess() {
		t.Fatalf("HwEncrypt on the nominated node: %v", st)
	}
	if st := w.plugins["NetworkLatency"].Filter(context.Background(), state, pod, w.nodes[371]); !st.IsSuccess() {
		t.Fatalf("NetworkLatency on the nominated node: %v", st)
	}
	if got := w.host.count("FilterNodes"); got != 0 {
		t.Fatalf("FilterNodes calls = %d for the nominated node, want 0", got)
	}
}

// A preemption dry run on a copy of a node outside the window (the
// preemptor's Filter never reached this plugin: full nodes fail
// NodeResourcesFit first) of a plugin that promised its filter ignores the
// node's pods: the cycle's FilterNodes call answers it, not a single-node
// Filter per copy.
func TestFilterWindowAnswersDryRunsOutsideIt(t *testing.T) {
	w := newWindowEnv(t, 1000, nil, abi.HintFilterIgnoresNodePods)
	w.cycle(t, 0, 120, 4)
	state := framework.NewCycleState()
	pod := testPod("preemptor", nil)
	w.runPreFilter(t, []string{"HwEncrypt", "NetworkLatency"}, state, pod, w.nodes)
	for _, pos := range []int{500, 510, 511} { // 500, 510 reject HwEncrypt
		copyOf := w.nodes[pos].(*framework.NodeInfo).SnapshotConcrete()
		copyOf.AddPod(testPod(fmt.Sprintf("victim-%d", pos), nil))
		st := w.plugins["HwEncrypt"].Filter(context.Background(), state.Clone(), pod, copyOf)
		if want := pos%10 == 0; st.IsSuccess() == want {
			t.Errorf("HwEncrypt on a dry-run copy of node %d: %v, want rejected %v", pos, st, want)
		}
	}
	if got := w.host.count("FilterNodes"); got != 1 {
		t.Errorf("FilterNodes calls = %d, want 1", got)
	}
	if got := w.host.count("Filter"); got != 0 {
		t.Errorf("single-node Filter calls = %d, want 0: the copies' verdicts come from the cycle", got)
	}
}

func TestFilterWindowOffEvaluatesEveryNode(t *testing.T) {
	w := newWindowEnv(t, 1000, nil, 0)
	w.mgr.tracker.SetOptions(cycle.Options{EvaluateAllNodes: true})
	w.cycle(t, 0, 120, 4)
	w.cycle(t, 120, 120, 4)
	if ev := w.lastEvaluate(); ev != nil {
		t.Fatalf("EvaluateAllNodes: the second cycle evaluated %v, want every node", ev)
	}
}

func TestFilterWindowMissAppliesTheFailurePolicyWhenTheHostFails(t *testing.T) {
	w := newWindowEnv(t, 1000, map[string]Policy{
		"HwEncrypt":      {FailurePolicy: FailurePolicyFail, Timeout: time.Second},
		"NetworkLatency": {FailurePolicy: FailurePolicyIgnore, Timeout: time.Second},
	}, 0)
	w.cycle(t, 0, 120, 1)
	w.host.mu.Lock()
	w.host.filterNodesErr = status.Error(codes.Unavailable, "the host went away")
	w.host.mu.Unlock()

	state := framework.NewCycleState()
	pod := testPod("p", nil)
	w.runPreFilter(t, []string{"HwEncrypt", "NetworkLatency"}, state, pod, w.nodes)
	inside, outside := w.nodes[121], w.nodes[1] // 121 passes both
	if st := w.plugins["HwEncrypt"].Filter(context.Background(), state, pod, inside); !st.IsSuccess() {
		t.Fatalf("inside the window: %v", st)
	}
	st := w.plugins["HwEncrypt"].Filter(context.Background(), state, pod, outside)
	if st.Code() != fwk.UnschedulableAndUnresolvable || !strings.Contains(st.Message(), "HwEncrypt has failurePolicy Fail") {
		t.Fatalf("Fail policy outside the window: %v %q", st.Code(), st.Message())
	}
	if st := w.plugins["NetworkLatency"].Filter(context.Background(), state, pod, w.nodes[2]); !st.IsSuccess() {
		t.Fatalf("Ignore policy outside the window: %v", st)
	}
	if got := w.host.count("FilterNodes"); got != 1 {
		t.Fatalf("FilterNodes calls = %d, want 1 (a failed call is not repeated within the cycle)", got)
	}
	// Inside the window the verdicts still stand.
	if st := w.plugins["HwEncrypt"].Filter(context.Background(), state, pod, w.nodes[130]); st.IsSuccess() {
		t.Fatalf("node 130 must stay rejected by HwEncrypt: %v", st)
	}
}

func TestFilterWindowSwitchFromEnv(t *testing.T) {
	for v, wantAll := range map[string]bool{"": false, "on": false, "off": true} {
		t.Setenv(EnvFilterWindow, v)
		cfg, err := ConfigFromEnv()
		if err != nil || cfg.EvaluateAllNodes != wantAll {
			t.Errorf("%s=%q: EvaluateAllNodes %v (%v), want %v", EnvFilterWindow, v, cfg.EvaluateAllNodes, err, wantAll)
		}
	}
	t.Setenv(EnvFilterWindow, "no")
	if _, err := ConfigFromEnv(); err == nil || !strings.Contains(err.Error(), EnvFilterWindow) || !strings.Contains(err.Error(), `"off"`) {
		t.Errorf("%s=no: %v, want an error naming the variable and the choices", EnvFilterWindow, err)
	}
}

// Cycles that never continue where the last one stopped (as when
// kube-scheduler tries batching hints first): after 16 misses (the window
// log's limit) the shim stops sending windows.
func TestFilterWindowPausesWhenThePredictionKeepsMissing(t *testing.T) {
	const windowMaxMisses = 16
	w := newWindowEnv(t, 1000, nil, 0)
	w.cycle(t, 0, 120, 4)
	for i := 0; i < windowMaxMisses; i++ {
		w.cycle(t, 500*((i+1)%2), 120, 4) // 500, 0, 500, ...: never the predicted start
		if ev := w.lastEvaluate(); ev == nil {
			t.Fatalf("cycle %d evaluated every node, want a window", i+2)
		}
	}
	if got := w.host.count("FilterNodes"); got != windowMaxMisses {
		t.Fatalf("FilterNodes calls = %d, want %d", got, windowMaxMisses)
	}
	w.cycle(t, 0, 120, 4)
	if ev := w.lastEvaluate(); ev != nil {
		t.Fatalf("after %d misses in a row the next cycle evaluated %v, want every node", windowMaxMisses, ev)
	}
}
