// The shim's main paths on fakeHost, with the fake framework handle and env
// that protocol_test.go reuses. One file: the env and its fakes are what every
// case here sets up first.

package shim

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/connectivity"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/abi"
	"schedplug.dev/integration/scheduler/shim/internal/shimtest"
)

const profileName = "default-scheduler"

type fakeHandle struct {
	fwk.Handle // nil: calling anything not overridden panics the test
	mu         sync.Mutex
	activated  []string
	// snapshot, when set, is what SnapshotSharedLister lists (the shim's
	// lazy calls need it); nil means no snapshot.
	snapshot []fwk.NodeInfo
}

func (h *fakeHandle) ProfileName() string { return profileName }

func (h *fakeHandle) SnapshotSharedLister() fwk.SharedLister {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.snapshot == nil {
		return nil
	}
	return &fakeLister{nodes: h.snapshot}
}

func (h *fakeHandle) setSnapshot(nodes []fwk.NodeInfo) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.snapshot = nodes
}

type fakeLister struct {
	fwk.SharedLister
	nodes []fwk.NodeInfo
}

func (l *fakeLister) NodeInfos() fwk.NodeInfoLister { return &fakeNodeLister{nodes: l.nodes} }

type fakeNodeLister struct {
	fwk.NodeInfoLister
	nodes []fwk.NodeInfo
}

func (l *fakeNodeLister) List() ([]fwk.NodeInfo, error) { return l.nodes, nil }

func (l *fakeNodeLister) Get(name string) (fwk.NodeInfo, error) {
	for _, ni := range l.nodes {
		if ni.Node() != nil && ni.Node().Name == name {
			return ni, nil
		}
	}
	return nil, fmt.Errorf("node %q is not in the snapshot", name)
}

func (h *fakeHandle) Activate(_ klog.Logger, pods map[string]*v1.Pod) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k := range pods {
		h.activated = append(h.activated, k)
	}
}

func (h *fakeHandle) activatedPods() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.activated...)
}

// waitActivated waits up to 10s for pods to be re-activated and returns
// them.
func (h *fakeHandle) waitActivated() []string {
	deadline := time.Now().Add(10 * time.Second)
	for len(h.activatedPods()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	return h.activatedPods()
}

func filterScorePlugin(name string) *pb.PluginInfo {
	return &pb.PluginInfo{Name: name, HasFilter: true, HasScore: true}
}

type env struct {
	host    *fakeHost
	mgr     *Manager
	handle  *fakeHandle
	plugins map[string]*Plugin
}

// newEnv connects a manager to a fake host serving `infos`, with one shim
// plugin per info in profile order.
func newEnv(t *testing.T, infos []*pb.PluginInfo, pols map[string]Policy) *env {
	t.Helper()
	return newEnvOn(t, newFakeHost(t, infos...), infos, pols)
}

// newEnvOn is newEnv on a fake host set up by the caller.
func newEnvOn(t *testing.T, host *fakeHost, infos []*pb.PluginInfo, pols map[string]Policy) *env {
	t.Helper()
	e := &env{host: host, handle: &fakeHandle{}, plugins: map[string]*Plugin{}}
	e.mgr = newTestManager(t, host.target(), infos)
	for _, info := range infos {
		pol, ok := pols[info.Name]
		if !ok {
			pol = DefaultPolicy()
		}
		e.plugins[info.Name] = NewPlugin(e.mgr, info.Name, pol, e.handle)
	}
	if err := e.mgr.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return e
}

func newTestManager(t testing.TB, target string, infos []*pb.PluginInfo) *Manager {
	t.Helper()
	var names []string
	for _, i := range infos {
		names = append(names, i.Name)
	}
	m, err := NewManager(Config{
		Target:         target,
		ConnectTimeout: 300 * time.Millisecond,
		ResyncTimeout:  2 * time.Second,
		Profiles:       []Profile{{SchedulerName: profileName, Plugins: names}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

func testPod(name string, labels map[string]string) *v1.Pod { return shimtest.Pod(name, labels) }

func testNode(name string, labels map[string]string, pods int) *framework.NodeInfo {
	return shimtest.Node(name, labels, pods)
}

// waitReady waits until the client reconnected to a restarted host (calls
// fail fast while it reconnects; that is the failure policies' business).
func waitReady(t *testing.T, m *Manager) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for m.client.ConnState() != connectivity.Ready {
		if time.Now().After(deadline) {
			t.Fatalf("no connection to the restarted host within 10s (state %v)", m.client.ConnState())
		}
		m.client.Connect()
		time.Sleep(10 * time.Millisecond)
	}
}

func waitNotReady(t *testing.T, m *Manager) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for m.client.ConnState() == connectivity.Ready {
		if time.Now().After(deadline) {
			t.Fatal("the client did not notice the host going away within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func asList(nis ...*framework.NodeInfo) []fwk.NodeInfo { return shimtest.List(nis...) }

// runPreFilter runs PreFilter of every plugin in order, as the framework does.
func (e *env) runPreFilter(t *testing.T, order []string, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) map[string]*fwk.Status {
	t.Helper()
	out := map[string]*fwk.Status{}
	for _, n := range order {
		_, st := e.plugins[n].PreFilter(context.Background(), state, pod, nodes)
		out[n] = st
	}
	return out
}

func TestPreFilterOneCallThenFilterLookups(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("HwEncrypt"), filterScorePlugin("NetworkLatency")}, nil)
	n1 := testNode("n1", nil, 0)
	n2 := testNode("n2", map[string]string{"reject-HwEncrypt": ""}, 0)
	n3 := testNode("n3", map[string]string{"reject-NetworkLatency": "", "reject-HwEncrypt": ""}, 0)
	n4 := testNode("n4", map[string]string{"reject-NetworkLatency": ""}, 0)
	nodes := asList(n1, n2, n3, n4)
	state := framework.NewCycleState()
	pod := testPod("p", nil)

	sts := e.runPreFilter(t, []string{"HwEncrypt", "NetworkLatency"}, state, pod, nodes)
	for n, st := range sts {
		if !st.IsSuccess() {
			t.Fatalf("PreFilter %s: %v", n, st)
		}
	}
	if got := e.host.count("PreFilter"); got != 1 {
		t.Fatalf("PreFilter RPCs = %d, want 1 for two native plugins", got)
	}

	hw, nl := e.plugins["HwEncrypt"], e.plugins["NetworkLatency"]
	check := func(p *Plugin, ni fwk.NodeInfo, wantCode fwk.Code, wantReason string) {
		t.Helper()
		st := p.Filter(context.Background(), state, pod, ni)
		if st.Code() != wantCode || (wantReason != "" && st.Message() != wantReason) {
			t.Errorf("%s.Filter(%s) = %v %q, want %v %q", p.Name(), ni.Node().Name, st.Code(), st.Message(), wantCode, wantReason)
		}
	}
	check(hw, n1, fwk.Success, "")
	check(nl, n1, fwk.Success, "")
	check(hw, n2, fwk.Unschedulable, "node(s) are marked reject-HwEncrypt")
	check(nl, n2, fwk.Success, "")
	// n3: the host reports only the first rejecting plugin in profile order.
	check(hw, n3, fwk.Unschedulable, "node(s) are marked reject-HwEncrypt")
	check(nl, n4, fwk.Unschedulable, "node(s) are marked reject-NetworkLatency")
	if got := e.host.count("Filter"); got != 0 {
		t.Fatalf("Filter RPCs = %d, want 0: snapshot NodeInfos must be lookups", got)
	}
}

func TestFilterFallsBackForNonSnapshotNodeInfo(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("PodCap")}, nil)
	full := testNode("n1", map[string]string{"maxpods-PodCap": "2"}, 2)
	state := framework.NewCycleState()
	pod := testPod("p", nil)
	e.runPreFilter(t, []string{"PodCap"}, state, pod, asList(full))
	pl := e.plugins["PodCap"]

	before := metricValue(t, "schedplug_shim_filter_fallbacks_total")
	if st := pl.Filter(context.Background(), state, pod, full); st.Code() != fwk.Unschedulable {
		t.Fatalf("snapshot node with 2 pods: got %v, want Unschedulable", st)
	}
	// A preemption dry run: a copy of the node with a victim removed. Its
	// generation changes, so the verdict must come from the host for this
	// exact state (1 pod), not from the PreFilter table (2 pods).
	whatIf := full.SnapshotConcrete()
	if err := whatIf.RemovePod(klog.Background(), full.GetPods()[0].GetPod()); err != nil {
		t.Fatal(err)
	}
	if whatIf.GetGeneration() == full.GetGeneration() {
		t.Fatal("test setup: removing a pod did not change the generation")
	}
	if st := pl.Filter(context.Background(), state, pod, whatIf); !st.IsSuccess() {
		t.Fatalf("what-if node with 1 pod: got %v, want Success", st)
	}
	if got := e.host.count("Filter"); got != 1 {
		t.Fatalf("Filter RPCs = %d, want 1", got)
	}
	after := metricValue(t, "schedplug_shim_filter_fallbacks_total")
	if after-before != 1 {
		t.Fatalf("filter fallbacks counter moved by %v, want 1", after-before)
	}
	// The CycleState clone preemption uses still serves lookups.
	if st := pl.Filter(context.Background(), state.Clone(), pod, full); st.Code() != fwk.Unschedulable {
		t.Fatalf("cloned state lookup: %v", st)
	}
	if got := e.host.count("Filter"); got != 1 {
		t.Fatalf("Filter RPCs after a lookup on a cloned state = %d, want 1", got)
	}
}

// A preemption dry run's NodeInfo costs one Filter RPC for every native
// plugin of the profile, not one per plugin, and the answer serves the
// plugins that ask after the first.
func TestDryRunAsksTheHostOncePerNodeInfoForAllPlugins(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("HwEncrypt"), filterScorePlugin("PodCap")}, nil)
	order := []string{"HwEncrypt", "PodCap"}
	hw, pc := e.plugins["HwEncrypt"], e.plugins["PodCap"]
	pod := testPod("p", nil)
	ok := testNode("ok", map[string]string{"maxpods-PodCap": "2"}, 2)
	second := testNode("second", map[string]string{"maxpods-PodCap": "1", "reject-PodCap": ""}, 1)
	first := testNode("first", map[string]string{"reject-HwEncrypt": ""}, 1)
	state := framework.NewCycleState()
	e.runPreFilter(t, order, state, pod, asList(ok, second, first))

	whatIf := func(ni *framework.NodeInfo) *framework.NodeInfo {
		c := ni.SnapshotConcrete()
		if err := c.RemovePod(klog.Background(), ni.GetPods()[0].GetPod()); err != nil {
			t.Fatal(err)
		}
		return c
	}
	check := func(pl *Plugin, st fwk.CycleState, ni fwk.NodeInfo, want fwk.Code, reason string) {
		t.Helper()
		got := pl.Filter(context.Background(), st, pod, ni)
		if got.Code() != want || (reason != "" && got.Message() != reason) {
			t.Fatalf("%s.Filter(%s) = %v %q, want %v %q", pl.Name(), ni.Node().Name, got.Code(), got.Message(), want, reason)
		}
	}
	rpcs := func(want int) {
		t.Helper()
		if got := e.host.count("Filter"); got != want {
			t.Fatalf("Filter RPCs = %d, want %d", got, want)
		}
	}

	// "ok" with a victim removed (1 pod < 2): both pass, one RPC.
	okIf := whatIf(ok)
	check(hw, state, okIf, fwk.Success, "")
	check(pc, state, okIf, fwk.Success, "")
	rpcs(1)
	if req := e.host.lastFilter; !slices.Equal(req.Plugins, order) {
		t.Fatalf("batched Filter asked for %v, want %v", req.Plugins, order)
	}
	// The second plugin rejects: the first passes, the second gets the
	// host's reason, from one RPC; a clone of the state (parallel dry runs)
	// shares the answer.
	secondIf := whatIf(second)
	check(hw, state, secondIf, fwk.Success, "")
	check(pc, state.Clone(), secondIf, fwk.Unschedulable, "node(s) are marked reject-PodCap")
	rpcs(2)
	// The first plugin rejects: the host stopped there, so a later plugin
	// that is asked anyway gets its own RPC and its own verdict.
	firstIf := whatIf(first)
	check(hw, state, firstIf, fwk.Unschedulable, "node(s) are marked reject-HwEncrypt")
	rpcs(3)
	check(pc, state, firstIf, fwk.Success, "")
	rpcs(4)
	if req := e.host.lastFilter; !slices.Equal(req.Plugins, []string{"PodCap"}) {
		t.Fatalf("single-plugin Filter asked for %v, want [PodCap]", req.Plugins)
	}
	// The same NodeInfo state again: answered from the cycle, no RPC.
	check(pc, state, okIf, fwk.Success, "")
	rpcs(4)
}

// A plugin that promised its filter ignores the node's pods
// (SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS) gets its PreFilter verdict
// reused on a preemption dry run's copies of a node, without a call to the
// host; without the promise, on a changed Node object, or where the host
// never ran the plugin on the node, the host is asked as before.
func TestDryRunReusesVerdictsOfPluginsThatIgnoreNodePods(t *testing.T) {
	hinted := filterScorePlugin("HwEncrypt")
	hinted.Hints = abi.HintFilterIgnoresNodePods
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("PodCap"), hinted}, nil)
	order := []string{"PodCap", "HwEncrypt"}
	pc, hw := e.plugins["PodCap"], e.plugins["HwEncrypt"]
	pod := testPod("p", nil)
	ok := testNode("ok", map[string]string{"maxpods-PodCap": "3"}, 2)
	rejected := testNode("rejected", map[string]string{"reject-HwEncrypt": ""}, 1)
	full := testNode("full", map[string]string{"maxpods-PodCap": "2", "reject-HwEncrypt": ""}, 2)
	nodes := asList(ok, rejected, full)
	e.handle.setSnapshot(nodes)
	state := framework.NewCycleState()
	e.runPreFilter(t, order, state, pod, nodes)

	whatIf := func(ni *framework.NodeInfo) *framework.NodeInfo {
		c := ni.SnapshotConcrete()
		if err := c.RemovePod(klog.Background(), ni.GetPods()[0].GetPod()); err != nil {
			t.Fatal(err)
		}
		return c
	}
	check := func(pl *Plugin, ni fwk.NodeInfo, want fwk.Code, reason string) {
		t.Helper()
		got := pl.Filter(context.Background(), state.Clone(), pod, ni)
		if got.Code() != want || (reason != "" && got.Message() != reason) {
			t.Fatalf("%s.Filter(%s) = %v %q, want %v %q", pl.Name(), ni.Node().Name, got.Code(), got.Message(), want, reason)
		}
	}
	rpcs := func(want int) {
		t.Helper()
		if got := e.host.count("Filter"); got != want {
			t.Fatalf("Filter RPCs = %d, want %d", got, want)
		}
	}
	reused := metricValue(t, "schedplug_shim_filter_verdicts_reused_total")

	// The promised plugin on dry-run copies: its PreFilter verdicts, no RPC.
	check(hw, whatIf(ok), fwk.Success, "")
	check(hw, whatIf(rejected), fwk.Unschedulable, "node(s) are marked reject-HwEncrypt")
	rpcs(0)
	if now := metricValue(t, "schedplug_shim_filter_verdicts_reused_total"); now-reused != 2 {
		t.Fatalf("reused-verdicts counter moved by %v, want 2", now-reused)
	}
	// The plugin without the promise reads the pods: the host is asked.
	check(pc, whatIf(ok), fwk.Success, "")
	rpcs(1)
	// "full" was rejected by PodCap, so the host never ran HwEncrypt on
	// it; with a victim gone PodCap passes, and HwEncrypt's own verdict
	// comes from the host (PodCap's call asked for both).
	fullIf := whatIf(full)
	check(pc, fullIf, fwk.Success, "")
	check(hw, fullIf, fwk.Unschedulable, "node(s) are marked reject-HwEncrypt")
	rpcs(2)
	// A copy whose Node object is not the snapshot's (its labels may
	// differ) is never answered from PreFilter.
	relabelled := whatIf(rejected)
	n := rejected.Node().DeepCopy()
	delete(n.Labels, "reject-HwEncrypt")
	relabelled.SetNode(n)
	check(hw, relabelled, fwk.Success, "")
	rpcs(3)
}

func TestDeltaSendsOnlyChangesAndReusesSlots(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("HwEncrypt")}, nil)
	pl := e.plugins["HwEncrypt"]
	cycle := func(nodes ...*framework.NodeInfo) *pb.NodeTableDelta {
		t.Helper()
		if _, st := pl.PreFilter(context.Background(), framework.NewCycleState(), testPod("p", nil), asList(nodes...)); !st.IsSuccess() {
			t.Fatalf("PreFilter: %v", st)
		}
		return e.host.lastDelta()
	}
	a, b, c := testNode("a", nil, 0), testNode("b", nil, 0), testNode("c", nil, 0)

	d := cycle(a, b, c)
	if !d.Full || len(d.Upserts) != 3 {
		t.Fatalf("first delta: full=%v upserts=%d, want a full table of 3", d.Full, len(d.Upserts))
	}
	d = cycle(a, b, c)
	if d.Full || len(d.Upserts) != 0 || len(d.Removed) != 0 || d.NewVersion != d.BaseVersion {
		t.Fatalf("unchanged cluster: delta %v, want empty", d)
	}
	// Update: b gets a pod (new generation).
	b.AddPod(testPod("x", nil))
	d = cycle(a, b, c)
	if len(d.Upserts) != 1 || d.Upserts[0].Name != "b" || d.Upserts[0].PodCount != 1 || len(d.Removed) != 0 {
		t.Fatalf("update: delta %v, want only b with 1 pod", d)
	}
	if d.NewVersion != d.BaseVersion+1 {
		t.Fatalf("versions %d -> %d, want +1", d.BaseVersion, d.NewVersion)
	}
	slotB := d.Upserts[0].Index
	// Remove b.
	d = cycle(a, c)
	if len(d.Upserts) != 0 || len(d.Removed) != 1 || d.Removed[0] != slotB {
		t.Fatalf("remove: delta %v, want removed [%d]", d, slotB)
	}
	// A new node takes b's free slot.
	d = cycle(a, c, testNode("e", nil, 0))
	if len(d.Upserts) != 1 || d.Upserts[0].Name != "e" || d.Upserts[0].Index != slotB {
		t.Fatalf("add after remove: delta %v, want e in reused slot %d", d, slotB)
	}
	if got := e.mgr.tracker.Host().Nodes(); got != 3 {
		t.Fatalf("table size %d, want 3", got)
	}
	// The host accepted everything, so no resync happened.
	if got := e.host.count("Handshake"); got != 1 {
		t.Fatalf("Handshakes = %d, want 1", got)
	}
}

func TestResyncAfterHostRestart(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("HwEncrypt")}, nil)
	pl := e.plugins["HwEncrypt"]
	nodes := asList(testNode("a", nil, 0), testNode("b", map[string]string{"reject-HwEncrypt": ""}, 0))
	pod := testPod("p", nil)
	pl.PreFilter(context.Background(), framework.NewCycleState(), pod, nodes)

	e.host.stop()
	waitNotReady(t, e.mgr)
	e.host.reset()
	e.host.start(t)
	waitReady(t, e.mgr)
	before := metricValue(t, "schedplug_shim_resyncs_total")
	state := framework.NewCycleState()
	if _, st := pl.PreFilter(context.Background(), state, pod, nodes); !st.IsSuccess() {
		t.Fatalf("PreFilter after restart: %v, want a transparent resync", st)
	}
	after := metricValue(t, "schedplug_shim_resyncs_total")
	if after-before != 1 {
		t.Fatalf("resyncs counter moved by %v, want 1", after-before)
	}
	d := e.host.lastDelta()
	if !d.Full || len(d.Upserts) != 2 {
		t.Fatalf("delta after restart: full=%v upserts=%d, want the full table", d.Full, len(d.Upserts))
	}
	if st := pl.Filter(context.Background(), state, pod, nodes[1]); st.Code() != fwk.Unschedulable {
		t.Fatalf("Filter after resync: %v", st)
	}
}

func TestResyncWhenHostTableVersionDiffers(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("HwEncrypt")}, nil)
	pl := e.plugins["HwEncrypt"]
	a := testNode("a", nil, 0)
	pl.PreFilter(context.Background(), framework.NewCycleState(), testPod("p", nil), asList(a))
	// The host moved on without us (e.g. it applied a delta whose answer
	// was lost): the next delta does not apply.
	e.host.mu.Lock()
	e.host.version += 7
	e.host.mu.Unlock()
	a.AddPod(testPod("x", nil))
	if _, st := pl.PreFilter(context.Background(), framework.NewCycleState(), testPod("p", nil), asList(a)); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	if d := e.host.lastDelta(); !d.Full {
		t.Fatalf("delta %v, want a full resync", d)
	}
	if got := e.host.count("Handshake"); got != 2 {
		t.Fatalf("Handshakes = %d, want 2", got)
	}
}

func TestScoreLookupAndSkip(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{
		filterScorePlugin("NetworkLatency"),
		{Name: "FilterOnly", HasFilter: true},
	}, nil)
	nl, fo := e.plugins["NetworkLatency"], e.plugins["FilterOnly"]
	n1 := testNode("n1", map[string]string{"score-NetworkLatency": "80"}, 0)
	n2 := testNode("n2", map[string]string{"score-NetworkLatency": "15"}, 0)
	nodes := asList(n1, n2)
	state := framework.NewCycleState()
	pod := testPod("p", nil)
	e.runPreFilter(t, []string{"NetworkLatency", "FilterOnly"}, state, pod, nodes)

	if st := nl.PreScore(context.Background(), state, pod, nodes); !st.IsSuccess() {
		t.Fatalf("PreScore: %v", st)
	}
	if st := fo.PreScore(context.Background(), state, pod, nodes); !st.IsSkip() {
		t.Fatalf("PreScore of a plugin without Score: %v, want Skip", st)
	}
	if got := e.host.count("PreScore"); got != 1 {
		t.Fatalf("PreScore RPCs = %d, want 1", got)
	}
	for _, c := range []struct {
		ni   fwk.NodeInfo
		want int64
	}{{n1, 80}, {n2, 15}} {
		s, st := nl.Score(context.Background(), state, pod, c.ni)
		if !st.IsSuccess() || s != c.want {
			t.Errorf("Score(%s) = %d, %v; want %d", c.ni.Node().Name, s, st, c.want)
		}
	}

	// The host says the pod is not NetworkLatency's business.
	state = framework.NewCycleState()
	skipPod := testPod("q", map[string]string{"skip-NetworkLatency": ""})
	sts := e.runPreFilter(t, []string{"NetworkLatency", "FilterOnly"}, state, skipPod, nodes)
	if !sts["NetworkLatency"].IsSkip() || !sts["FilterOnly"].IsSuccess() {
		t.Fatalf("PreFilter with skip label: %v", sts)
	}
	if st := nl.PreScore(context.Background(), state, skipPod, nodes); !st.IsSkip() {
		t.Fatalf("PreScore with skip label: %v, want Skip", st)
	}
}

// Filter-only native plugins cost no PreScore call and no Score calls: the
// Go twins of such plugins have no Score at all.
func TestFilterOnlyPluginsMakeNoPreScoreCall(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{{Name: "HwEncrypt", HasFilter: true}, {Name: "DedicatedNodes", HasFilter: true}}, nil)
	nodes := asList(testNode("n1", nil, 0), testNode("n2", nil, 0))
	state := framework.NewCycleState()
	pod := testPod("p", nil)
	e.runPreFilter(t, []string{"HwEncrypt", "DedicatedNodes"}, state, pod, nodes)
	for _, name := range []string{"HwEncrypt", "DedicatedNodes"} {
		if st := e.plugins[name].PreScore(context.Background(), state, pod, nodes); !st.IsSkip() {
			t.Fatalf("%s.PreScore: %v, want Skip", name, st)
		}
	}
	if got := e.host.count("PreScore"); got != 0 {
		t.Fatalf("PreScore RPCs = %d, want 0 for plugins without a score hook", got)
	}
}

func TestPluginWithoutFilterSkipsFilter(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{{Name: "ScoreOnly", HasScore: true}}, nil)
	_, st := e.plugins["ScoreOnly"].PreFilter(context.Background(), framework.NewCycleState(), testPod("p", nil), asList(testNode("a", nil, 0)))
	if !st.IsSkip() {
		t.Fatalf("PreFilter of a score-only plugin: %v, want Skip", st)
	}
}

func TestFailurePolicyWhenHostDown(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("Strict"), filterScorePlugin("Lenient")},
		map[string]Policy{"Lenient": {FailurePolicy: FailurePolicyIgnore, Timeout: 50 * time.Millisecond}})
	nodes := asList(testNode("a", nil, 0))
	e.host.stop()

	pod := testPod("p", nil)
	state := framework.NewCycleState()
	start := time.Now()
	sts := e.runPreFilter(t, []string{"Lenient", "Strict"}, state, pod, nodes)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("PreFilter with host down took %v", d)
	}
	if st := sts["Strict"]; !st.IsSuccess() {
		t.Fatalf("Fail policy in PreFilter: %v, want success (Filter rejects each node)", st)
	}
	if st := e.plugins["Strict"].Filter(context.Background(), state, pod, nodes[0]); st.Code() != fwk.UnschedulableAndUnresolvable || !strings.Contains(st.Message(), "could not be reached") || !strings.Contains(st.Message(), "Strict") {
		t.Fatalf("Fail policy: %v %q", st.Code(), st.Message())
	}
	if st := sts["Lenient"]; !st.IsSkip() {
		t.Fatalf("Ignore policy: %v, want Skip", st)
	}
	// Single-node calls follow the same policies.
	if st := e.plugins["Lenient"].Filter(context.Background(), framework.NewCycleState(), pod, nodes[0]); !st.IsSuccess() {
		t.Fatalf("Ignore policy in Filter: %v", st)
	}
	if st := e.plugins["Strict"].Filter(context.Background(), framework.NewCycleState(), pod, nodes[0]); st.Code() != fwk.UnschedulableAndUnresolvable {
		t.Fatalf("Fail policy in Filter: %v", st)
	}
	// Score: Ignore skips, Fail fails the cycle.
	if st := e.plugins["Lenient"].PreScore(context.Background(), state, pod, nodes); !st.IsSkip() {
		t.Fatalf("Ignore policy in PreScore: %v", st)
	}
	if st := e.plugins["Strict"].PreScore(context.Background(), state, pod, nodes); st.Code() != fwk.Error {
		t.Fatalf("Fail policy in PreScore: %v", st)
	}
}

func TestFailurePolicyWhenHostSlow(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("Strict"), filterScorePlugin("Lenient")},
		map[string]Policy{
			"Strict":  {FailurePolicy: FailurePolicyFail, Timeout: 30 * time.Millisecond},
			"Lenient": {FailurePolicy: FailurePolicyIgnore, Timeout: 30 * time.Millisecond},
		})
	nodes := asList(testNode("a", nil, 0))
	pod := testPod("p", nil)
	// Bring the table in sync first so the slow call is an ordinary one.
	e.runPreFilter(t, []string{"Strict", "Lenient"}, framework.NewCycleState(), pod, nodes)
	e.host.setDelay(300 * time.Millisecond)

	start := time.Now()
	slowState := framework.NewCycleState()
	sts := e.runPreFilter(t, []string{"Strict", "Lenient"}, slowState, pod, nodes)
	if d := time.Since(start); d > 250*time.Millisecond {
		t.Fatalf("a slow host blocked the cycle for %v; the timeout is 30ms", d)
	}
	if st := e.plugins["Strict"].Filter(context.Background(), slowState, pod, nodes[0]); st.Code() != fwk.UnschedulableAndUnresolvable || !strings.Contains(st.Message(), "schedplug-host did not answer within 30ms; plugin Strict has failurePolicy Fail") {
		t.Fatalf("Fail policy on timeout: %v %q", st.Code(), st.Message())
	}
	if st := sts["Lenient"]; !st.IsSkip() {
		t.Fatalf("Ignore policy on timeout: %v", st)
	}
	// Host answers in time again: a timed-out delta must not leave the
	// shim and the host disagreeing.
	e.host.setDelay(0)
	time.Sleep(350 * time.Millisecond) // let the slow calls finish on the host
	state := framework.NewCycleState()
	nodes[0].(*framework.NodeInfo).SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"reject-Strict": ""}}})
	sts = e.runPreFilter(t, []string{"Strict", "Lenient"}, state, pod, nodes)
	if !sts["Strict"].IsSuccess() {
		t.Fatalf("PreFilter after recovery: %v", sts["Strict"])
	}
	if st := e.plugins["Strict"].Filter(context.Background(), state, pod, nodes[0]); st.Code() != fwk.Unschedulable {
		t.Fatalf("Filter after recovery: %v, want the host's verdict on the updated node", st)
	}
}

func TestStartFailsOnNamesTheHostDoesNotReport(t *testing.T) {
	host := newFakeHost(t, filterScorePlugin("HwEncrypt"))
	m := newTestManager(t, host.target(), []*pb.PluginInfo{{Name: "hwEncrypt"}})
	err := m.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), `enables plugin "hwEncrypt" but no loaded .so reports that name`) {
		t.Fatalf("Start: %v, want the host's message", err)
	}
	// Every factory call gets the same answer.
	if err2 := m.Start(context.Background()); err2 == nil || err2.Error() != err.Error() {
		t.Fatalf("second Start: %v", err2)
	}
}

func TestReconnectsWhenHostComesUpLater(t *testing.T) {
	host := newFakeHost(t, filterScorePlugin("HwEncrypt"))
	host.stop()
	infos := []*pb.PluginInfo{filterScorePlugin("HwEncrypt")}
	m := newTestManager(t, host.target(), infos)
	h := &fakeHandle{}
	pl := NewPlugin(m, "HwEncrypt", DefaultPolicy(), h)
	start := time.Now()
	if err := m.Start(context.Background()); err != nil {
		t.Fatalf("Start with host down: %v, want nil (keep reconnecting)", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Start waited %v; ConnectTimeout is 300ms", d)
	}
	// Before the handshake EventsToRegister is broad.
	evs, _ := pl.EventsToRegister(context.Background())
	if len(evs) == 0 || evs[0].Event.ActionType&fwk.UpdateNodeCondition == 0 {
		t.Fatalf("events before handshake: %v", evs)
	}
	nodes := asList(testNode("a", nil, 0))
	pod := testPod("p", nil)
	downState := framework.NewCycleState()
	pl.PreFilter(context.Background(), downState, pod, nodes)
	if st := pl.Filter(context.Background(), downState, pod, nodes[0]); st.Code() != fwk.UnschedulableAndUnresolvable {
		t.Fatalf("Filter with host down: %v", st)
	}

	host.start(t)
	deadline := time.Now().Add(10 * time.Second)
	for !m.Connected() {
		if time.Now().After(deadline) {
			t.Fatal("the shim did not reconnect within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, st := pl.PreFilter(context.Background(), framework.NewCycleState(), pod, nodes); !st.IsSuccess() {
		t.Fatalf("PreFilter after reconnect: %v", st)
	}
	if d := host.lastDelta(); !d.Full {
		t.Fatalf("first delta after reconnect: %v, want full", d)
	}
	// The pod the failure policy rejected is put back into the active queue.
	deadline = time.Now().Add(5 * time.Second)
	for len(h.activatedPods()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := h.activatedPods(); len(got) != 1 || got[0] != "default/p" {
		t.Fatalf("activated pods %v, want [default/p]", got)
	}
}

func TestRejectedPodsActivatedWhenHostReturns(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("HwEncrypt")}, nil)
	pl := e.plugins["HwEncrypt"]
	nodes := asList(testNode("a", nil, 0))
	pl.PreFilter(context.Background(), framework.NewCycleState(), testPod("p", nil), nodes)

	e.host.stop()
	waitNotReady(t, e.mgr)
	downState := framework.NewCycleState()
	pl.PreFilter(context.Background(), downState, testPod("q", nil), nodes)
	if st := pl.Filter(context.Background(), downState, testPod("q", nil), nodes[0]); st.Code() != fwk.UnschedulableAndUnresolvable {
		t.Fatalf("Filter with host down: %v", st)
	}
	time.Sleep(2 * recoveryDelay)
	if got := e.handle.activatedPods(); len(got) != 0 {
		t.Fatalf("pods activated while the host is still down: %v", got)
	}
	e.host.reset()
	e.host.start(t)
	if got := e.handle.waitActivated(); len(got) != 1 || got[0] != "default/q" {
		t.Fatalf("activated %v, want [default/q]", got)
	}
	// Its next cycle resyncs with the restarted host.
	if _, st := pl.PreFilter(context.Background(), framework.NewCycleState(), testPod("q", nil), nodes); !st.IsSuccess() {
		t.Fatalf("PreFilter after the host returned: %v", st)
	}
}

func TestEventsToRegisterFollowsDeclaredBits(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{
		{Name: "Labels", HasFilter: true, Events: abi.EventNodeAdd | abi.EventNodeUpdateLabel},
		{Name: "Pods", HasFilter: true, Events: abi.EventPodDelete},
		{Name: "All", HasFilter: true},
	}, nil)
	// The last two are the pending pod's own updates (targetPod), which
	// every plugin registers; before 1.37 they share their resource with
	// the bound pods' (assignedPod).
	find := func(evs []fwk.ClusterEventWithHint, r fwk.EventResource) fwk.ActionType {
		for _, ev := range evs[:len(evs)-2] {
			if ev.Event.Resource == r {
				return ev.Event.ActionType
			}
		}
		return fwk.None
	}
	evs, _ := e.plugins["Labels"].EventsToRegister(context.Background())
	if got := find(evs, fwk.Node); got != fwk.Add|fwk.UpdateNodeLabel {
		t.Errorf("Labels node actions %v", got)
	}
	if got := find(evs, assignedPod); got != fwk.None {
		t.Errorf("Labels pod actions %v, want none", got)
	}
	evs, _ = e.plugins["Pods"].EventsToRegister(context.Background())
	if got := find(evs, assignedPod); got != fwk.Delete {
		t.Errorf("Pods pod actions %v", got)
	}
	if got := find(evs, fwk.Node); got != fwk.None {
		t.Errorf("Pods node actions %v, want none", got)
	}
	evs, _ = e.plugins["All"].EventsToRegister(context.Background())
	wantNode := fwk.Add | fwk.Delete | fwk.UpdateNodeLabel | fwk.UpdateNodeTaint | fwk.UpdateNodeAllocatable | fwk.UpdateNodeAnnotation | fwk.UpdateNodeCondition
	if got := find(evs, fwk.Node); got != wantNode {
		t.Errorf("All node actions %v, want %v", got, wantNode)
	}
	if got := find(evs, assignedPod); got != fwk.Add|fwk.Delete|fwk.UpdatePodLabel {
		t.Errorf("All pod actions %v", got)
	}
}

func TestFilterErrorCodeAbortsWithMessage(t *testing.T) {
	st := filterStatus(pb.Code_CODE_ERROR, "reading /sys failed", "HwEncrypt", "n1")
	if st.Code() != fwk.Error || !strings.Contains(st.AsError().Error(), "HwEncrypt: reading /sys failed") {
		t.Fatalf("%v", st)
	}
	if st := filterStatus(pb.Code_CODE_UNSCHEDULABLE_AND_UNRESOLVABLE, "r", "X", "n1"); st.Code() != fwk.UnschedulableAndUnresolvable || st.Message() != "r" {
		t.Fatalf("%v", st)
	}
}
