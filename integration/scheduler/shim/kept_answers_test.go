package shim

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/abi"
)

// A reusing cycle's late PreFilter call (made by the first Filter that
// finds no kept verdict) can be cancelled by kube-scheduler while it is in
// flight over gRPC: the other Filter workers found enough feasible nodes.
// That is no outcome of the cycle: a preemption dry run later in the same
// cycle must get the host's verdict, not the failure policy, and the next
// replica must reuse the changed node's new verdict instead of calling
// again.
func TestACancelledLateCallIsNotTheCyclesOutcome(t *testing.T) {
	infos := []*pb.PluginInfo{
		{Name: "HwEncrypt", HasFilter: true, Hints: abi.HintFilterIgnoresNodePods | abi.HintFilterIgnoresPodIdentity},
		{Name: "NetworkLatency", HasFilter: true, Hints: abi.HintFilterIgnoresNodePods | abi.HintFilterIgnoresPodIdentity},
	}
	host := newFakeHost(t, infos...)
	host.offerFast = false // the gRPC path, where a cancelled context ends the call
	e := &env{host: host, handle: &fakeHandle{}, plugins: map[string]*Plugin{}}
	e.mgr = newTestManager(t, host.target(), infos)
	for _, info := range infos {
		e.plugins[info.Name] = NewPlugin(e.mgr, info.Name, DefaultPolicy(), e.handle)
	}
	if err := e.mgr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitWatched(t, e)
	w := withWindowNodes(e, 500)
	w.cycle(t, 0, 120, 4)
	w.cycle(t, 120, 120, 4)

	// Node 251 changes: the next replica has no kept verdict for it.
	w.replaceNode(251, map[string]string{"reject-HwEncrypt": ""})
	state := framework.NewCycleState()
	pod := testPod("replica-cancelled", nil)
	w.runPreFilter(t, []string{"HwEncrypt", "NetworkLatency"}, state, pod, w.nodes)
	// The host answers within the call's deadline (100ms), but after
	// kube-scheduler cancelled the Filter that made the call.
	host.setDelay(60 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	if st := w.plugins["HwEncrypt"].Filter(ctx, state, pod, w.nodes[251]); st.IsSuccess() {
		t.Fatalf("the cancelled Filter on node 251 passed it")
	}
	host.setDelay(0)

	// Preemption's dry run on a copy of node 251, later in the cycle.
	copyOf251 := w.nodes[251].(*framework.NodeInfo).Snapshot()
	st := w.plugins["HwEncrypt"].Filter(context.Background(), state.Clone(), pod, copyOf251)
	if st.IsSuccess() || strings.Contains(st.Message(), "failurePolicy") || !strings.Contains(st.Message(), "reject-HwEncrypt") {
		t.Fatalf("dry run on a copy of node 251 after the cancelled call: %v; want HwEncrypt's own rejection (node(s) are marked reject-HwEncrypt)", st)
	}

	// The next replica reuses the changed node's new verdict: no call.
	calls := host.count("PreFilter")
	state = framework.NewCycleState()
	pod = testPod("replica-next", nil)
	w.runPreFilter(t, []string{"HwEncrypt", "NetworkLatency"}, state, pod, w.nodes)
	if st := w.plugins["HwEncrypt"].Filter(context.Background(), state, pod, w.nodes[251]); st.IsSuccess() {
		t.Fatalf("node 251 for the next replica: success, want rejected")
	}
	if got := host.count("PreFilter") - calls; got != 0 {
		t.Fatalf("the next replica made %d PreFilter calls, want 0: the changed node's verdict was not kept", got)
	}
}

// A profile that enables its native plugins at filter but not at
// preFilter makes the cycle's PreFilter call lazily, from the first Filter.
// When that Filter runs in a clone of the CycleState (kube-scheduler's
// nominated-pods pass clones it), the call's answer must serve the whole
// cycle: the Filters on the original state make no second call, and the
// original state holds the cycle for Reserve.
func TestALazyPreFilterInACloneServesTheCycle(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{{Name: "HwEncrypt", HasFilter: true}}, nil)
	nodes := asList(testNode("a", nil, 0), testNode("b", map[string]string{"reject-HwEncrypt": ""}, 0), testNode("c", nil, 0))
	e.handle.setSnapshot(nodes)
	pod := testPod("lazy", nil)

	// A cycle as kube-scheduler starts it (schedule_one.go writes the
	// cycle's PodsToActivate first), with the nominated-pods pass first.
	state := framework.NewCycleState()
	state.Write(framework.PodsToActivateKey, framework.NewPodsToActivate())
	if st := e.plugins["HwEncrypt"].Filter(context.Background(), state.Clone(), pod, nodes[0]); !st.IsSuccess() {
		t.Fatalf("Filter in the clone on node a: %v", st)
	}
	for i, want := range []bool{true, false, true} {
		st := e.plugins["HwEncrypt"].Filter(context.Background(), state, pod, nodes[i])
		if st.IsSuccess() != want {
			t.Fatalf("Filter on node %s: %v, want success %v", nodes[i].Node().Name, st, want)
		}
	}
	if got := e.host.count("PreFilter"); got != 1 {
		t.Fatalf("PreFilter calls = %d for one cycle, want 1", got)
	}
	// Reserve runs on the original state and must find the cycle there
	// (the chosen node for explain, the simulator annotations' CycleAnswers).
	if readCycle(state) == nil {
		t.Fatal("the original CycleState holds no cycle: Reserve would not find it")
	}
	// The next cycle calls again.
	next := framework.NewCycleState()
	next.Write(framework.PodsToActivateKey, framework.NewPodsToActivate())
	if st := e.plugins["HwEncrypt"].Filter(context.Background(), next, pod, nodes[1]); st.IsSuccess() || st.Code() != fwk.Unschedulable {
		t.Fatalf("next cycle on node b: %v, want Unschedulable", st)
	}
	if got := e.host.count("PreFilter"); got != 2 {
		t.Fatalf("PreFilter calls = %d after a second cycle, want 2", got)
	}
}

// Kept verdicts die with the session and the build that computed them: a
// host that restarts (the watch stream ends), swaps a plugin build (a new
// identity), or is killed, makes the next replica call instead of reusing.
func TestKeptVerdictsEndWithTheirSessionAndBuild(t *testing.T) {
	w := newReuseEnv(t, 200, abi.HintFilterIgnoresNodePods|abi.HintFilterIgnoresPodIdentity, true)
	replica := func(name string) (state fwk.CycleState, pod *v1.Pod, calls int) {
		before := w.host.count("PreFilter")
		state = framework.NewCycleState()
		pod = testPod(name, nil)
		w.runPreFilter(t, []string{"HwEncrypt", "NetworkLatency"}, state, pod, w.nodes)
		w.plugins["HwEncrypt"].Filter(context.Background(), state, pod, w.nodes[1])
		return state, pod, w.host.count("PreFilter") - before
	}
	warm := func() {
		t.Helper()
		waitTrusted(t, w.mgr)
		replica("warm-a")
		replica("warm-b")
		if _, _, calls := replica("warm-c"); calls != 0 {
			t.Fatalf("a replica after two made %d calls, want 0 (kept verdicts)", calls)
		}
	}

	warm()
	w.host.reset() // a restart: the session is gone, the watch stream ends
	waitUntrusted(t, w.mgr)
	if _, _, calls := replica("after-restart"); calls == 0 {
		t.Fatal("a replica after the host restarted made no call: it used verdicts of the old host")
	}

	warm()
	w.host.setBuild(2) // a plugin swapped on the host
	waitFor(t, "the shim takes the new build", func() bool { return w.mgr.client.Current().Identity().Build == 2 })
	if _, _, calls := replica("after-swap"); calls == 0 {
		t.Fatal("a replica after the host swapped its plugin build made no call: it used the old build's verdicts")
	}

	warm()
	w.host.stop() // killed
	waitUntrusted(t, w.mgr)
	state, pod, _ := replica("while-down")
	st := w.plugins["HwEncrypt"].Filter(context.Background(), state, pod, w.nodes[1])
	if st.IsSuccess() || !strings.Contains(st.Message(), "failurePolicy Fail") {
		t.Fatalf("a replica while the host is down: %v, want the Fail policy's rejection", st)
	}
}

func waitTrusted(t *testing.T, m *Manager) {
	t.Helper()
	waitFor(t, "the session's watch stream is open", func() bool { return m.client.Current().Trusted() })
}

func waitUntrusted(t *testing.T, m *Manager) {
	t.Helper()
	waitFor(t, "the shim notices the host went away", func() bool { return !m.client.Current().Trusted() })
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
