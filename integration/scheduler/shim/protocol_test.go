// One file: the protocol's corner cases (lazy calls, dropped sessions, lost
// answers, refused deltas, unfinished plugins), each a call sequence the main
// paths of shim_test.go never make, on the same env and fakeHost.

package shim

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/cycle"
	"schedplug.dev/integration/scheduler/shim/session"
)

// Tests of the shim/host protocol's corner cases.

func lazyCount(t *testing.T, method string) float64 {
	t.Helper()
	v := metricValue(t, "schedplug_shim_lazy_calls_total", "method", method)
	return v
}

// A profile that enables the native plugins at filter and score only (no
// preFilter, no preScore): Filter makes the PreFilter call itself, once,
// however many workers ask at once; NormalizeScore makes the PreScore call
// for exactly the scored nodes.
func TestFilterAndScoreWithoutPreFilterAndPreScore(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("HwEncrypt"), filterScorePlugin("NetworkLatency")}, nil)
	n1 := testNode("n1", map[string]string{"score-HwEncrypt": "10", "score-NetworkLatency": "70"}, 0)
	n2 := testNode("n2", map[string]string{"reject-HwEncrypt": ""}, 0)
	n3 := testNode("n3", map[string]string{"score-HwEncrypt": "90", "score-NetworkLatency": "20"}, 0)
	nodes := asList(n1, n2, n3)
	e.handle.setSnapshot(nodes)
	pod := testPod("p", nil)
	state := framework.NewCycleState()
	lazyPF, lazyPS := lazyCount(t, "PreFilter"), lazyCount(t, "PreScore")

	// The framework's parallel Filter workers.
	var wg sync.WaitGroup
	results := make([][]*fwk.Status, 2)
	for w, name := range []string{"HwEncrypt", "NetworkLatency"} {
		results[w] = make([]*fwk.Status, len(nodes))
		for i := range nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[w][i] = e.plugins[name].Filter(context.Background(), state, pod, nodes[i])
			}()
		}
	}
	wg.Wait()
	if got := e.host.count("PreFilter"); got != 1 {
		t.Fatalf("PreFilter RPCs = %d, want exactly 1 made lazily by the Filter workers", got)
	}
	if got := e.host.count("Filter"); got != 0 {
		t.Fatalf("single-node Filter RPCs = %d, want 0", got)
	}
	if d := lazyCount(t, "PreFilter") - lazyPF; d != 1 {
		t.Fatalf("lazy PreFilter counter moved by %v, want 1", d)
	}
	if st := results[0][1]; st.Code() != fwk.Unschedulable {
		t.Fatalf("HwEncrypt on n2: %v, want Unschedulable", st)
	}
	for w := range results {
		for i, st := range results[w] {
			if (w != 0 || i != 1) && !st.IsSuccess() {
				t.Fatalf("plugin %d node %d: %v", w, i, st)
			}
		}
	}

	// Score (no PreScore ran): placeholders, then NormalizeScore of both
	// plugins in parallel fills in the host's scores.
	feasible := []fwk.NodeInfo{n1, n3}
	lists := map[string]fwk.NodeScoreList{}
	for _, name := range []string{"HwEncrypt", "NetworkLatency"} {
		var l fwk.NodeScoreList
		for _, ni := range feasible {
			s, st := e.plugins[name].Score(context.Background(), state, pod, ni)
			if !st.IsSuccess() {
				t.Fatalf("%s.Score(%s) without PreScore: %v", name, ni.Node().Name, st)
			}
			l = append(l, fwk.NodeScore{Name: ni.Node().Name, Score: s})
		}
		lists[name] = l
	}
	for _, name := range []string{"HwEncrypt", "NetworkLatency"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if st := e.plugins[name].ScoreExtensions().NormalizeScore(context.Background(), state, pod, lists[name]); !st.IsSuccess() {
				t.Errorf("%s.NormalizeScore: %v", name, st)
			}
		}()
	}
	wg.Wait()
	want := map[string][]int64{"HwEncrypt": {10, 90}, "NetworkLatency": {70, 20}}
	for name, l := range lists {
		for i, ns := range l {
			if ns.Score != want[name][i] {
				t.Errorf("%s score of %s = %d, want %d", name, ns.Name, ns.Score, want[name][i])
			}
		}
	}
	if got := e.host.count("PreScore"); got != 1 {
		t.Fatalf("PreScore RPCs = %d, want 1", got)
	}
	if d := lazyCount(t, "PreScore") - lazyPS; d != 1 {
		t.Fatalf("lazy PreScore counter moved by %v, want 1", d)
	}
	if got := e.host.count("PreFilter"); got != 1 {
		t.Fatalf("PreFilter RPCs after scoring = %d, want still 1", got)
	}

	// A plugin whose applies() says no contributes nothing, as Skip would.
	state = framework.NewCycleState()
	skipPod := testPod("q", map[string]string{"skip-NetworkLatency": ""})
	l := fwk.NodeScoreList{{Name: "n1", Score: 5}, {Name: "n3", Score: 7}}
	if st := e.plugins["NetworkLatency"].NormalizeScore(context.Background(), state, skipPod, l); !st.IsSuccess() || l[0].Score != 0 || l[1].Score != 0 {
		t.Fatalf("NormalizeScore of a plugin that does not apply: %v %v, want zeros", st, l)
	}
}

// With preScore enabled, NormalizeScore repeats what Score returned and
// makes no call.
func TestNormalizeScoreAfterPreScoreIsALookup(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("NetworkLatency")}, nil)
	n1 := testNode("n1", map[string]string{"score-NetworkLatency": "80"}, 0)
	nodes := asList(n1)
	state := framework.NewCycleState()
	pod := testPod("p", nil)
	pl := e.plugins["NetworkLatency"]
	e.runPreFilter(t, []string{"NetworkLatency"}, state, pod, nodes)
	if st := pl.PreScore(context.Background(), state, pod, nodes); !st.IsSuccess() {
		t.Fatal(st)
	}
	s, _ := pl.Score(context.Background(), state, pod, n1)
	l := fwk.NodeScoreList{{Name: "n1", Score: s}}
	if st := pl.NormalizeScore(context.Background(), state, pod, l); !st.IsSuccess() || l[0].Score != 80 {
		t.Fatalf("NormalizeScore: %v %v", st, l)
	}
	if got := e.host.count("PreScore"); got != 1 {
		t.Fatalf("PreScore RPCs = %d, want 1", got)
	}
}

// Upstream turns Skip from Filter into an error; the shim must not let the
// node pass (it used to).
func TestSkipFromFilterIsAnError(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("HwEncrypt")}, nil)
	pl := e.plugins["HwEncrypt"]
	n := testNode("n1", map[string]string{"skipfilter-HwEncrypt": "", "maxpods-HwEncrypt": "9"}, 1)
	state := framework.NewCycleState()
	pod := testPod("p", nil)
	e.runPreFilter(t, []string{"HwEncrypt"}, state, pod, asList(n))
	st := pl.Filter(context.Background(), state, pod, n)
	if st.Code() != fwk.Error || !strings.Contains(st.AsError().Error(), "returned Skip from filter") {
		t.Fatalf("lookup of a Skip verdict: %v, want an Error naming the Skip", st)
	}
	// The single-node path too.
	whatIf := n.SnapshotConcrete()
	whatIf.AddPod(testPod("extra", nil))
	st = pl.Filter(context.Background(), state, pod, whatIf)
	if st.Code() != fwk.Error || !strings.Contains(st.AsError().Error(), "HwEncrypt returned Skip from filter on node \"n1\"") {
		t.Fatalf("fallback with a Skip verdict: %v, want an Error", st)
	}
}

// A Filter fallback whose session the host forgot renews the session and
// answers, never panicking inside kube-scheduler.
func TestFilterFallbackSurvivesDroppedSession(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("HwEncrypt")}, nil)
	pl := e.plugins["HwEncrypt"]
	n := testNode("n1", nil, 0)
	// The host forgets the session: the Filter call gets
	// FAILED_PRECONDITION and the shim renews it.
	e.host.mu.Lock()
	e.host.sessions = map[string]bool{}
	e.host.mu.Unlock()
	var st *fwk.Status
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("Filter panicked: %v", r)
			}
		}()
		st = pl.Filter(context.Background(), framework.NewCycleState(), testPod("p", nil), n)
	}()
	if !st.IsSuccess() {
		t.Fatalf("Filter after a renewed session: %v", st)
	}
}

// Whatever goes wrong inside the shim becomes an Error status for the
// cycle, never a panic in a kube-scheduler goroutine.
func TestShimTurnsPanicsIntoErrors(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("HwEncrypt")}, nil)
	pl := e.plugins["HwEncrypt"]
	state := framework.NewCycleState()
	// A corrupt cycle state: a cycle no tracker started.
	state.Write(cycleKey, &cycle.Cycle{})
	before := metricValue(t, "schedplug_shim_panics_recovered_total")
	var st *fwk.Status
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("Filter panicked: %v", r)
			}
		}()
		st = pl.Filter(context.Background(), state, testPod("p", nil), testNode("n1", nil, 0))
	}()
	if st.Code() != fwk.Error || !strings.Contains(st.AsError().Error(), "internal error in Filter of plugin HwEncrypt") {
		t.Fatalf("Filter on a corrupt state: %v", st)
	}
	if after := metricValue(t, "schedplug_shim_panics_recovered_total"); after-before != 1 {
		t.Fatalf("panics counter moved by %v", after-before)
	}
}

// The host applied the delta and then failed (its chain ran out of time):
// it says so in the trailer, and the shim continues from that version.
func TestHostFailureAfterApplyKeepsTable(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("HwEncrypt")}, nil)
	pl := e.plugins["HwEncrypt"]
	a, b := testNode("a", nil, 0), testNode("b", nil, 0)
	pod := testPod("p", nil)
	pl.PreFilter(context.Background(), framework.NewCycleState(), pod, asList(a, b))

	e.host.mu.Lock()
	e.host.failAfterApply = status.Error(codes.DeadlineExceeded, "PreFilter for pod default/p: the deadline ran out")
	e.host.mu.Unlock()
	a.AddPod(testPod("x", nil))
	pl.PreFilter(context.Background(), framework.NewCycleState(), pod, asList(a, b))
	applied := e.host.lastDelta()

	e.host.mu.Lock()
	e.host.failAfterApply = nil
	e.host.mu.Unlock()
	b.AddPod(testPod("y", nil))
	if _, st := pl.PreFilter(context.Background(), framework.NewCycleState(), pod, asList(a, b)); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	d := e.host.lastDelta()
	if d.Full || d.BaseVersion != applied.NewVersion || len(d.Upserts) != 1 || d.Upserts[0].Name != "b" {
		t.Fatalf("delta after a failure past the delta: %v, want only b, from version %d", d, applied.NewVersion)
	}
	if got := e.host.count("Handshake"); got != 1 {
		t.Fatalf("Handshakes = %d, want 1 (no new session)", got)
	}
}

// The shim's own deadline fired, so it never heard whether the host applied
// the delta. The host did; the next delta is refused with the host's version
// in the trailer, which is the lost delta's: the shim commits it and goes on
// without a new session or a full upload.
func TestLostAnswerContinuesFromHostVersion(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("Strict")},
		map[string]Policy{"Strict": {FailurePolicy: FailurePolicyFail, Timeout: 30 * time.Millisecond}})
	pl := e.plugins["Strict"]
	a, b := testNode("a", nil, 0), testNode("b", nil, 0)
	pod := testPod("p", nil)
	pl.PreFilter(context.Background(), framework.NewCycleState(), pod, asList(a, b))
	before := metricValue(t, "schedplug_shim_deltas_recovered_total")

	e.host.setDelay(300 * time.Millisecond)
	a.AddPod(testPod("x", nil))
	state := framework.NewCycleState()
	pl.PreFilter(context.Background(), state, pod, asList(a, b))
	if c := readCycle(state); c == nil || callErr(c) == nil {
		t.Fatal("the slow PreFilter did not time out")
	}
	e.host.setDelay(0)
	// Wait until the host has applied the slow call's delta.
	deadline := time.Now().Add(10 * time.Second)
	for {
		e.host.mu.Lock()
		n := len(e.host.deltas)
		e.host.mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.AddPod(testPod("y", nil))
	if _, st := pl.PreFilter(context.Background(), framework.NewCycleState(), pod, asList(a, b)); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	d := e.host.lastDelta()
	if d.Full || len(d.Upserts) != 1 || d.Upserts[0].Name != "b" {
		t.Fatalf("last delta %v, want only b on the table the host already had", d)
	}
	if got := e.host.count("Handshake"); got != 1 {
		t.Fatalf("Handshakes = %d, want 1", got)
	}
	if after := metricValue(t, "schedplug_shim_deltas_recovered_total"); after-before != 1 {
		t.Fatalf("recovered-deltas counter moved by %v, want 1", after-before)
	}
}

// A delta the host refuses as malformed (INVALID_ARGUMENT) means the
// tables disagree: the shim sends the full table in the same cycle.
func TestRefusedDeltaLeadsToFullResync(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("HwEncrypt")}, nil)
	pl := e.plugins["HwEncrypt"]
	a, b := testNode("a", nil, 0), testNode("b", map[string]string{"reject-HwEncrypt": ""}, 0)
	pod := testPod("p", nil)
	pl.PreFilter(context.Background(), framework.NewCycleState(), pod, asList(a, b))
	// The host lost node b without a version change (a bug somewhere):
	// removing b is refused.
	e.host.mu.Lock()
	for s, n := range e.host.table {
		if n.Name == "b" {
			delete(e.host.table, s)
		}
	}
	e.host.mu.Unlock()
	state := framework.NewCycleState()
	if _, st := pl.PreFilter(context.Background(), state, pod, asList(a)); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	if d := e.host.lastDelta(); !d.Full || len(d.Upserts) != 1 {
		t.Fatalf("delta after a refused one: %v, want the full table", d)
	}
	if st := pl.Filter(context.Background(), state, pod, a); !st.IsSuccess() {
		t.Fatalf("Filter after the resync: %v", st)
	}
}

// kube-scheduler cancels outstanding Filter calls once it found enough
// feasible nodes. That is no host failure.
func TestCancelledFilterFallbackIsNoHostFailure(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("Strict")},
		map[string]Policy{"Strict": {FailurePolicy: FailurePolicyFail, Timeout: 5 * time.Second}})
	pl := e.plugins["Strict"]
	n := testNode("n1", nil, 0)
	// On a loaded machine the start-up handshake may have missed its 300ms;
	// without a session the call fails before kube-scheduler cancels it.
	deadline := time.Now().Add(10 * time.Second)
	for !e.mgr.Connected() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	e.host.setDelay(500 * time.Millisecond)
	before := metricValue(t, "schedplug_shim_failure_policy_applied_total", "plugin", "Strict", "policy", "Fail")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	st := pl.Filter(ctx, framework.NewCycleState(), testPod("p", nil), n)
	if st.IsSuccess() || strings.Contains(st.Message(), "schedplug-host could not") || !strings.Contains(st.Message(), "cancelled") {
		t.Fatalf("cancelled Filter: %v %q", st.Code(), st.Message())
	}
	if after := metricValue(t, "schedplug_shim_failure_policy_applied_total", "plugin", "Strict", "policy", "Fail"); after != before {
		t.Fatalf("failure-policy counter moved by %v for a cancelled call", after-before)
	}
	e.mgr.refused.mu.Lock()
	remembered := len(e.mgr.refused.pods)
	e.mgr.refused.mu.Unlock()
	if remembered != 0 {
		t.Fatalf("%d pods remembered for re-activation after a cancelled call", remembered)
	}
}

// The host reports a slow plugin as unfinished and the others' verdicts:
// each plugin applies its own failure policy, and the reason names the
// slow plugin and the cause.
func TestUnfinishedPluginPolicyPerPlugin(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("Strict"), filterScorePlugin("Lenient")},
		map[string]Policy{"Lenient": {FailurePolicy: FailurePolicyIgnore, Timeout: DefaultTimeout}})
	ok := testNode("ok", nil, 0)
	bad := testNode("bad", map[string]string{"reject-Strict": ""}, 0)
	nodes := asList(ok, bad)

	// Lenient (Ignore) is slow: Strict's verdicts still count.
	state := framework.NewCycleState()
	pod := testPod("p", map[string]string{"unfinished-Lenient": ""})
	e.runPreFilter(t, []string{"Strict", "Lenient"}, state, pod, nodes)
	if st := e.plugins["Strict"].Filter(context.Background(), state, pod, ok); !st.IsSuccess() {
		t.Fatalf("Strict on ok while Lenient is slow: %v, want success", st)
	}
	if st := e.plugins["Strict"].Filter(context.Background(), state, pod, bad); st.Code() != fwk.Unschedulable {
		t.Fatalf("Strict on bad: %v", st)
	}
	if st := e.plugins["Lenient"].Filter(context.Background(), state, pod, ok); !st.IsSuccess() {
		t.Fatalf("slow Lenient (Ignore): %v, want success", st)
	}

	// Strict (Fail) is slow: it rejects, naming itself and the cause.
	state = framework.NewCycleState()
	pod = testPod("q", map[string]string{"unfinished-Strict": ""})
	e.runPreFilter(t, []string{"Strict", "Lenient"}, state, pod, nodes)
	st := e.plugins["Strict"].Filter(context.Background(), state, pod, ok)
	want := `plugin "Strict" did not finish filter within 80.0 ms on schedplug-host; plugin Strict has failurePolicy Fail`
	if st.Code() != fwk.UnschedulableAndUnresolvable || st.Message() != want {
		t.Fatalf("slow Strict: %v %q, want %q", st.Code(), st.Message(), want)
	}
	// Score side: Ignore skips, Fail fails naming the plugin.
	state = framework.NewCycleState()
	pod = testPod("r", map[string]string{"unfinished-Lenient": "", "unfinished-Strict": ""})
	e.runPreFilter(t, []string{"Strict", "Lenient"}, state, pod, nodes)
	if st := e.plugins["Lenient"].PreScore(context.Background(), state, pod, nodes); !st.IsSkip() {
		t.Fatalf("slow Lenient PreScore: %v, want Skip", st)
	}
	if st := e.plugins["Strict"].PreScore(context.Background(), state, pod, nodes); st.Code() != fwk.Error || !strings.Contains(st.AsError().Error(), `plugin "Strict" did not finish score`) {
		t.Fatalf("slow Strict PreScore: %v", st)
	}
	// The single-node path.
	whatIf := ok.SnapshotConcrete()
	whatIf.AddPod(testPod("extra", nil))
	st = e.plugins["Strict"].Filter(context.Background(), framework.NewCycleState(), testPod("s", map[string]string{"unfinished-Strict": ""}), whatIf)
	if st.Code() != fwk.UnschedulableAndUnresolvable || !strings.Contains(st.Message(), `plugin "Strict" did not finish filter`) {
		t.Fatalf("slow Strict single-node: %v %q", st.Code(), st.Message())
	}
}

// The reason a user reads in `kubectl describe pod` names the real cause.
func TestFailureReasonNamesTheCause(t *testing.T) {
	p := &Plugin{name: "HwEncrypt"}
	for _, c := range []struct {
		err  error
		want string
	}{
		{session.ErrNoSession, "schedplug-host could not be reached (Unavailable); plugin HwEncrypt has failurePolicy Fail"},
		{status.Error(codes.DeadlineExceeded, "context deadline exceeded"), "schedplug-host did not answer within 100ms; plugin HwEncrypt has failurePolicy Fail"},
		{status.Error(codes.InvalidArgument, `unknown profile "x"`), `schedplug-host returned error InvalidArgument: unknown profile "x"; plugin HwEncrypt has failurePolicy Fail`},
		{status.Error(codes.DeadlineExceeded, "session s1 is busy: PreFilter pod a/b"), "schedplug-host returned error DeadlineExceeded: session s1 is busy: PreFilter pod a/b; plugin HwEncrypt has failurePolicy Fail"},
	} {
		if got := p.failureReason(c.err, 100*time.Millisecond); got != c.want {
			t.Errorf("failureReason(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

// applies() is asked once per cycle: the shim sends PreFilter's answers
// back with PreScore and single-node Filter calls.
func TestAppliesAnswersSentBack(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("HwEncrypt"), filterScorePlugin("NetworkLatency")}, nil)
	n := testNode("n1", nil, 0)
	nodes := asList(n)
	pod := testPod("p", map[string]string{"skip-NetworkLatency": ""})
	state := framework.NewCycleState()
	e.runPreFilter(t, []string{"HwEncrypt", "NetworkLatency"}, state, pod, nodes)
	e.plugins["HwEncrypt"].PreScore(context.Background(), state, pod, nodes)
	e.host.mu.Lock()
	ps := e.host.lastPreScore
	e.host.mu.Unlock()
	if ps == nil || !ps.AppliesKnown || len(ps.NotApplying) != 1 || ps.NotApplying[0] != "NetworkLatency" {
		t.Fatalf("PreScore request %v, want applies_known with NetworkLatency not applying", ps)
	}
	whatIf := n.SnapshotConcrete()
	whatIf.AddPod(testPod("extra", nil))
	e.plugins["HwEncrypt"].Filter(context.Background(), state, pod, whatIf)
	e.host.mu.Lock()
	fr := e.host.lastFilter
	e.host.mu.Unlock()
	if fr == nil || !fr.AppliesKnown || len(fr.NotApplying) != 1 {
		t.Fatalf("Filter request %v, want the applies answers", fr)
	}
}
