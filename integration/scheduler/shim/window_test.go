package shim

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

func identityOrder(n int) []uint32 {
	order := make([]uint32, n)
	for i := range order {
		order[i] = uint32(i)
	}
	return order
}

func visitsAt(slots int, positions ...int) visitSet {
	v := newVisitSet(slots)
	for _, p := range positions {
		v.add(uint32(p))
	}
	return v
}

func span(from, to, step int) []int {
	var out []int
	for p := from; p < to; p += step {
		out = append(out, p)
	}
	return out
}

func TestPredictWindowStartsAfterThePreviousRun(t *testing.T) {
	order := identityOrder(1000)
	// Positions 100..329 visited, with holes where earlier plugins
	// rejected nodes: the run is 230 positions long.
	var visited []int
	for p := 100; p < 330; p++ {
		if p%7 != 3 || p == 329 {
			visited = append(visited, p)
		}
	}
	start, length, ok := predictWindow(order, visitsAt(1000, visited...))
	margin := windowMargin(1000) // 31 + 16
	wantLen := margin + 230 + 230/2 + margin
	if !ok || start != 330-margin || length != wantLen {
		t.Fatalf("predictWindow = (%d, %d, %v), want (%d, %d, true)", start, length, ok, 330-margin, wantLen)
	}

	// A run wrapping around the end of the list: 900..999 and 0..129.
	start, length, ok = predictWindow(order, visitsAt(1000, append(span(900, 1000, 1), span(0, 130, 1)...)...))
	if !ok || start != 130-margin || length != wantLen {
		t.Fatalf("wrapping run: predictWindow = (%d, %d, %v), want (%d, %d, true)", start, length, ok, 130-margin, wantLen)
	}
	// The window itself may wrap: a run ending at the list's end.
	start, _, ok = predictWindow(order, visitsAt(1000, span(780, 1000, 1)...))
	if !ok || start != 1000-margin {
		t.Fatalf("run up to the end: start %d (ok %v), want %d", start, ok, 1000-margin)
	}

	// Positions map to slots through the order: the same visits by slot
	// under a reversed order are the run 670..899 of positions.
	rev := make([]uint32, 1000)
	for i := range rev {
		rev[i] = uint32(999 - i)
	}
	start, _, ok = predictWindow(rev, visitsAt(1000, span(100, 330, 1)...))
	if !ok || start != 900-margin {
		t.Fatalf("reversed order: start %d (ok %v), want %d", start, ok, 900-margin)
	}
}

func TestPredictWindowEvaluatesEverythingWithoutAGuide(t *testing.T) {
	order := identityOrder(1000)
	cases := map[string]struct {
		order   []uint32
		visited visitSet
	}{
		"no previous cycle":        {order, nil},
		"nothing visited":          {order, newVisitSet(1000)},
		"every node visited":       {order, visitsAt(1000, span(0, 1000, 1)...)},
		"a run over most nodes":    {order, visitsAt(1000, span(0, 600, 1)...)},
		"a window over half":       {order, visitsAt(1000, span(0, 300, 1)...)},
		"a cluster of a few nodes": {identityOrder(20), visitsAt(20, 3, 4, 5)},
	}
	for name, c := range cases {
		if start, length, ok := predictWindow(c.order, c.visited); ok {
			t.Errorf("%s: predictWindow = (%d, %d, true), want every node", name, start, length)
		}
	}
}

func TestWindowRangesAndTheirComplementCoverEverySlotOnce(t *testing.T) {
	// Slots out of position order, and a position without a node.
	order := identityOrder(300)
	order[5], order[6] = 6, 5
	order[290] = noSlot
	ranges, in := windowRanges(order, 280, 40, 300)
	want := []uint32{280, 290, 291, 300, 0, 5, 6, 7, 5, 6, 7, 20}
	if fmt.Sprint(ranges) != fmt.Sprint(want) {
		t.Fatalf("windowRanges = %v, want %v", ranges, want)
	}
	rest := in.complementRanges(300)
	if fmt.Sprint(rest) != fmt.Sprint([]uint32{20, 280, 290, 291}) {
		t.Fatalf("complementRanges = %v", rest)
	}
	covered := make([]int, 300)
	for _, rs := range [][]uint32{ranges, rest} {
		for i := 0; i < len(rs); i += 2 {
			for s := rs[i]; s < rs[i+1]; s++ {
				covered[s]++
			}
		}
	}
	for s, n := range covered {
		if n != 1 && s != 290 {
			t.Errorf("slot %d covered %d times", s, n)
		}
	}
}

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

func testutilCounter(t *testing.T, c metrics.CounterMetric) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(c)
	if err != nil {
		t.Fatal(err)
	}
	return v
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
	margin := uint32(windowMargin(1000)) // 31 + 16
	wantStart := 120 - margin
	wantEnd := wantStart + margin + 120 + 120/2 + margin
	if ev := w.lastEvaluate(); len(ev) != 2 || ev[0] != wantStart || ev[1] != wantEnd {
		t.Fatalf("second cycle evaluated %v, want [%d %d]", ev, wantStart, wantEnd)
	}
	if got := w.host.count("FilterNodes"); got != 0 {
		t.Fatalf("FilterNodes calls = %d within the window, want 0", got)
	}

	// A pod no node fits visits every node from where the last one
	// stopped: the first node outside the window asks about all the
	// others, once, whichever of 16 workers gets there first.
	misses := testutilCounter(t, filterWindowMisses)
	w.cycle(t, 240, 1000, 16)
	if got := w.host.count("FilterNodes"); got != 1 {
		t.Fatalf("FilterNodes calls = %d for a cycle beyond its window, want 1", got)
	}
	if got := testutilCounter(t, filterWindowMisses) - misses; got != 1 {
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
	w := newWindowEnv(t, 1000, nil, hintFilterIgnoresNodePods)
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
	w.mgr.cfg.EvaluateAllNodes = true
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

// BenchmarkWindow5000 is the shim's per-cycle work for the window at 5000
// nodes: the prediction from a run of 541 visited positions and the slot
// ranges of the window.
func BenchmarkWindow5000(b *testing.B) {
	order := identityOrder(5000)
	visited := visitsAt(5000, span(1000, 1541, 1)...)
	for b.Loop() {
		start, length, ok := predictWindow(order, visited)
		if !ok {
			b.Fatal("no window")
		}
		windowRanges(order, start, length, 5000)
	}
}

func TestWindowLogPausesAfterTooManyMisses(t *testing.T) {
	var l windowLog
	// An old miss leaves the log once windowLogSize later outcomes came.
	l.record(true)
	for i := 0; i < windowLogSize; i++ {
		if l.record(false) {
			t.Fatal("paused without misses")
		}
	}
	for i := 0; i < windowMaxMisses-1; i++ {
		if l.record(true) {
			t.Fatalf("paused after %d misses in the log, want %d", i+1, windowMaxMisses)
		}
	}
	if !l.allowed() {
		t.Fatal("not allowed before the pause")
	}
	if !l.record(true) {
		t.Fatalf("not paused after %d misses among the last %d", windowMaxMisses, windowLogSize)
	}
	for i := 0; i < windowPause; i++ {
		if l.allowed() {
			t.Fatalf("allowed %d cycles into a pause of %d", i, windowPause)
		}
	}
	if !l.allowed() {
		t.Fatal("still paused after the pause")
	}
	if l.n != 0 || l.misses != 0 {
		t.Fatalf("the pause did not start a fresh log: %+v", l)
	}
}

// Cycles that never continue where the last one stopped (as when
// kube-scheduler tries batching hints first): after windowMaxMisses
// misses the shim stops sending windows.
func TestFilterWindowPausesWhenThePredictionKeepsMissing(t *testing.T) {
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
