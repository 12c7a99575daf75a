package shim

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// hookedPlugin filters, scores and has every ABI v1.6 hook.
func hookedPlugin(name string) *pb.PluginInfo {
	return &pb.PluginInfo{Name: name, HasFilter: true, HasScore: true, HasReserve: true, HasPermit: true, HasPreBind: true, HasPreEnqueue: true}
}

// hookHandle adds the API client and the waiting pods to fakeHandle.
type hookHandle struct {
	*fakeHandle
	client  kubernetes.Interface
	mu      sync.Mutex
	waiting map[types.UID]*fakeWaitingPod
}

func (h *hookHandle) ClientSet() kubernetes.Interface { return h.client }

func (h *hookHandle) GetWaitingPod(uid types.UID) fwk.WaitingPod {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.waiting[uid]; w != nil {
		return w
	}
	return nil
}

func (h *hookHandle) wait(uid types.UID) *fakeWaitingPod {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := &fakeWaitingPod{}
	h.waiting[uid] = w
	return w
}

// fakeWaitingPod records what the shim decided (Reject is in
// waitingpod_test.go: its signature depends on the minor).
type fakeWaitingPod struct {
	fwk.WaitingPod
	mu        sync.Mutex
	decisions []string
}

func (w *fakeWaitingPod) Allow(plugin string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.decisions = append(w.decisions, "allow "+plugin)
}

func (w *fakeWaitingPod) reject(plugin, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.decisions = append(w.decisions, "reject "+plugin+": "+msg)
}

// waitDecisions waits until n decisions arrived and returns them.
func (w *fakeWaitingPod) waitDecisions(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		w.mu.Lock()
		got := append([]string(nil), w.decisions...)
		w.mu.Unlock()
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// hookEnv is a profile whose shim plugins come from FactoryFor, in
// profile order, as kube-scheduler builds them.
type hookEnv struct {
	host    *fakeHost
	mgr     *Manager
	handle  *hookHandle
	client  *fake.Clientset
	order   []string
	plugins map[string]fwk.Plugin
}

func newHookEnv(t testing.TB, infos []*pb.PluginInfo, args map[string]string, objects ...runtime.Object) *hookEnv {
	t.Helper()
	host := newFakeHost(t, infos...)
	e := &hookEnv{host: host, mgr: newTestManager(t, host.target(), infos), client: fake.NewClientset(objects...), plugins: map[string]fwk.Plugin{}}
	e.handle = &hookHandle{fakeHandle: &fakeHandle{}, client: e.client, waiting: map[types.UID]*fakeWaitingPod{}}
	for _, info := range infos {
		var a runtime.Object
		if raw, ok := args[info.Name]; ok {
			a = &runtime.Unknown{Raw: []byte(raw), ContentType: runtime.ContentTypeJSON}
		}
		p, err := FactoryFor(func() (*Manager, error) { return e.mgr, nil }, info.Name)(context.Background(), a, e.handle)
		if err != nil {
			t.Fatal(err)
		}
		e.order = append(e.order, info.Name)
		e.plugins[info.Name] = p
	}
	return e
}

// The extension points run as kube-scheduler runs them: in profile order
// over the plugins that implement them, stopping at the first plugin that
// does not succeed (Unreserve: every one, in reverse order).

func (e *hookEnv) preFilter(state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) {
	for _, n := range e.order {
		e.plugins[n].(fwk.PreFilterPlugin).PreFilter(context.Background(), state, pod, nodes)
	}
}

func (e *hookEnv) preEnqueue(pod *v1.Pod) map[string]*fwk.Status {
	out := map[string]*fwk.Status{}
	for _, n := range e.order {
		if pl, ok := e.plugins[n].(fwk.PreEnqueuePlugin); ok {
			if out[n] = pl.PreEnqueue(context.Background(), pod); !out[n].IsSuccess() {
				break
			}
		}
	}
	return out
}

func (e *hookEnv) reserve(state fwk.CycleState, pod *v1.Pod, node string) map[string]*fwk.Status {
	out := map[string]*fwk.Status{}
	for _, n := range e.order {
		if out[n] = e.plugins[n].(fwk.ReservePlugin).Reserve(context.Background(), state, pod, node); !out[n].IsSuccess() {
			break
		}
	}
	return out
}

func (e *hookEnv) unreserve(state fwk.CycleState, pod *v1.Pod, node string) {
	for i := len(e.order) - 1; i >= 0; i-- {
		e.plugins[e.order[i]].(fwk.ReservePlugin).Unreserve(context.Background(), state, pod, node)
	}
}

type permitAnswer struct {
	st   *fwk.Status
	wait time.Duration
}

func (e *hookEnv) permit(state fwk.CycleState, pod *v1.Pod, node string) map[string]permitAnswer {
	out := map[string]permitAnswer{}
	for _, n := range e.order {
		if pl, ok := e.plugins[n].(fwk.PermitPlugin); ok {
			st, wait := pl.Permit(context.Background(), state, pod, node)
			if out[n] = (permitAnswer{st, wait}); !st.IsSuccess() && !st.IsWait() {
				break
			}
		}
	}
	return out
}

func (e *hookEnv) preBind(state fwk.CycleState, pod *v1.Pod, node string) map[string]*fwk.Status {
	out := map[string]*fwk.Status{}
	for _, n := range e.order {
		if pl, ok := e.plugins[n].(fwk.PreBindPlugin); ok {
			if out[n] = pl.PreBind(context.Background(), state, pod, node); !out[n].IsSuccess() {
				break
			}
		}
	}
	return out
}

func (e *hookEnv) patches() int {
	n := 0
	for _, a := range e.client.Actions() {
		if a.GetVerb() == "patch" {
			n++
		}
	}
	return n
}

func (e *enqueueAnswers) kept() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.m)
}

func hookMethods(reqs []hookReq) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.method+" "+strings.Join(r.plugins, ","))
	}
	return out
}

func TestHooksOneCallPerPodForAllNativePluginsWithTheHook(t *testing.T) {
	pod := testPod("gpu-job", nil)
	e := newHookEnv(t, []*pb.PluginInfo{hookedPlugin("DeviceShare"), filterScorePlugin("HwEncrypt"), hookedPlugin("Quota")}, nil, pod)
	for _, n := range []string{"DeviceShare", "Quota"} {
		pl := e.plugins[n]
		if _, ok := pl.(fwk.PermitPlugin); !ok {
			t.Errorf("%s has the permit hook but is no PermitPlugin", n)
		}
		if _, ok := pl.(fwk.PreBindPlugin); !ok {
			t.Errorf("%s has the pre_bind hook but is no PreBindPlugin", n)
		}
		if _, ok := pl.(fwk.PreEnqueuePlugin); !ok {
			t.Errorf("%s has the pre_enqueue hook but is no PreEnqueuePlugin", n)
		}
	}
	if _, ok := e.plugins["HwEncrypt"].(*Plugin); !ok {
		t.Errorf("HwEncrypt, without hooks, is registered as %T, want *Plugin (no Permit, PreBind or PreEnqueue)", e.plugins["HwEncrypt"])
	}

	nodes := asList(testNode("n1", nil, 0), testNode("n2", nil, 0))
	state := framework.NewCycleState()
	for n, st := range e.preEnqueue(pod) {
		if !st.IsSuccess() {
			t.Fatalf("PreEnqueue of %s: %v", n, st)
		}
	}
	e.preFilter(state, pod, nodes)
	for n, st := range e.reserve(state, pod, "n1") {
		if !st.IsSuccess() {
			t.Fatalf("Reserve of %s: %v", n, st)
		}
	}
	for n, a := range e.permit(state, pod, "n1") {
		if !a.st.IsSuccess() {
			t.Fatalf("Permit of %s: %v", n, a.st)
		}
	}
	for n, st := range e.preBind(state, pod, "n1") {
		if !st.IsSuccess() {
			t.Fatalf("PreBind of %s: %v", n, st)
		}
	}
	e.unreserve(state, pod, "n1")

	want := []string{"PreEnqueue DeviceShare,Quota", "Reserve DeviceShare,Quota", "Permit DeviceShare,Quota", "PreBind DeviceShare,Quota", "Unreserve DeviceShare,Quota"}
	if got := hookMethods(e.host.hookCalls()); !slices.Equal(got, want) {
		t.Fatalf("hook calls %q, want %q", got, want)
	}
	if n := e.patches(); n != 1 {
		t.Fatalf("%d patches of the pod, want 1", n)
	}
	got, err := e.client.CoreV1().Pods("default").Get(context.Background(), pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"DeviceShare", "Quota"} {
		if v := got.Annotations[n+".example/node"]; v != "n1" {
			t.Errorf("annotation %s.example/node = %q, want n1", n, v)
		}
		if v := got.Labels[n+".example/bound"]; v != "yes" {
			t.Errorf("label %s.example/bound = %q, want yes", n, v)
		}
	}
	// The hooks send the pod PreFilter sent.
	if c := readCycle(state); c == nil || c.Pod().GetUid() != string(pod.UID) {
		t.Fatal("no cycle for the pod")
	}
}

func TestFilterScoreOnlyProfileMakesNoHookCalls(t *testing.T) {
	e := newHookEnv(t, []*pb.PluginInfo{filterScorePlugin("HwEncrypt"), filterScorePlugin("NetworkLatency")}, nil)
	for n, pl := range e.plugins {
		if _, ok := pl.(*Plugin); !ok {
			t.Fatalf("%s is registered as %T, want *Plugin", n, pl)
		}
	}
	nodes := asList(testNode("n1", nil, 0))
	for i := 0; i < 3; i++ {
		pod := testPod("p"+string(rune('a'+i)), nil)
		state := framework.NewCycleState()
		e.preFilter(state, pod, nodes)
		for n, st := range e.reserve(state, pod, "n1") {
			if !st.IsSuccess() {
				t.Fatalf("Reserve of %s: %v", n, st)
			}
		}
		e.unreserve(state, pod, "n1")
	}
	if got := e.host.hookCalls(); len(got) != 0 {
		t.Fatalf("hook calls for a profile without hooks: %q", hookMethods(got))
	}
	if n := e.host.count("PreFilter"); n != 3 {
		t.Fatalf("%d PreFilter calls for 3 pods, want 3 (and nothing else)", n)
	}
}

func TestReserveFailureIsTheNamedPluginsAndUnreserveRunsOnce(t *testing.T) {
	e := newHookEnv(t, []*pb.PluginInfo{hookedPlugin("DeviceShare"), hookedPlugin("Quota")}, nil)
	pod := testPod("p", map[string]string{"reservefail-Quota": ""})
	state := framework.NewCycleState()
	sts := e.reserve(state, pod, "n1")
	if !sts["DeviceShare"].IsSuccess() {
		t.Fatalf("DeviceShare reserved and must succeed: %v", sts["DeviceShare"])
	}
	if st := sts["Quota"]; st.Code() != fwk.Unschedulable || st.Message() != "no devices left on n1" {
		t.Fatalf("Quota: %v %q, want Unschedulable with its reason", st.Code(), st.Message())
	}
	e.unreserve(state, pod, "n1")
	// A pod group's member placed again in the same state: a new
	// reservation, with calls of its own.
	e.reserve(state, pod, "n2")
	e.unreserve(state, pod, "n2")
	want := []string{"Reserve DeviceShare,Quota", "Unreserve DeviceShare,Quota", "Reserve DeviceShare,Quota", "Unreserve DeviceShare,Quota"}
	if got := hookMethods(e.host.hookCalls()); !slices.Equal(got, want) {
		t.Fatalf("hook calls %q, want %q", got, want)
	}
}

func TestPreBindPatch(t *testing.T) {
	infos := []*pb.PluginInfo{hookedPlugin("DeviceShare"), hookedPlugin("Quota")}
	t.Run("nothing to write makes no API call", func(t *testing.T) {
		pod := testPod("p", map[string]string{"nopatch": ""})
		e := newHookEnv(t, infos, nil, pod)
		for n, st := range e.preBind(framework.NewCycleState(), pod, "n1") {
			if !st.IsSuccess() {
				t.Fatalf("PreBind of %s: %v", n, st)
			}
		}
		if n := e.patches(); n != 0 {
			t.Fatalf("%d patches, want none", n)
		}
	})
	t.Run("a failed patch is an Error naming the plugins", func(t *testing.T) {
		pod := testPod("p", nil)
		e := newHookEnv(t, infos, nil, pod)
		e.client.PrependReactor("patch", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New("the scheduler may not patch pods"))
		})
		sts := e.preBind(framework.NewCycleState(), pod, "n1")
		st := sts["DeviceShare"]
		if st.Code() != fwk.Error || !strings.Contains(st.Message(), "DeviceShare, Quota") || !strings.Contains(st.Message(), "may not patch pods") {
			t.Fatalf("DeviceShare: %v %q, want an Error naming the plugins and the API error", st.Code(), st.Message())
		}
		if _, ran := sts["Quota"]; ran {
			t.Fatal("kube-scheduler stops at the first failed PreBind")
		}
		if n := e.host.count("PreBind"); n != 1 {
			t.Fatalf("%d PreBind calls, want 1", n)
		}
	})
	t.Run("a plugin's failure is its own and nothing is written", func(t *testing.T) {
		pod := testPod("p", map[string]string{"prebindfail-Quota": ""})
		e := newHookEnv(t, infos, nil, pod)
		sts := e.preBind(framework.NewCycleState(), pod, "n1")
		if !sts["DeviceShare"].IsSuccess() {
			t.Fatalf("DeviceShare: %v", sts["DeviceShare"])
		}
		if st := sts["Quota"]; st.Code() != fwk.Error || !strings.Contains(st.Message(), "native plugin Quota failed in PreBind: holds no reservation") {
			t.Fatalf("Quota: %v %q", st.Code(), st.Message())
		}
		if n := e.patches(); n != 0 {
			t.Fatalf("%d patches after a failed PreBind, want none", n)
		}
	})
}

func TestPermitWaitsThenTheHostsDecisionsAllowOrReject(t *testing.T) {
	e := newHookEnv(t, []*pb.PluginInfo{hookedPlugin("DeviceShare"), hookedPlugin("Quota")}, nil)
	pod := testPod("p", map[string]string{"wait-DeviceShare": "5000", "wait-Quota": "0"})
	got := e.permit(framework.NewCycleState(), pod, "n1")
	if a := got["DeviceShare"]; !a.st.IsWait() || a.wait != 5*time.Second {
		t.Fatalf("DeviceShare: %v %v, want Wait 5s", a.st, a.wait)
	}
	if a := got["Quota"]; !a.st.IsWait() || a.wait != maxPermitWait {
		t.Fatalf("Quota: %v %v, want Wait %v (no timeout is the most)", a.st, a.wait, maxPermitWait)
	}
	if n := e.host.count("Permit"); n != 1 {
		t.Fatalf("%d Permit calls, want 1", n)
	}

	w := e.handle.wait(pod.UID)
	e.host.decide(&pb.WaitingPodDecision{SchedulerName: profileName, Plugin: "DeviceShare", PodUid: string(pod.UID), Allow: true})
	e.host.decide(&pb.WaitingPodDecision{SchedulerName: profileName, Plugin: "Quota", PodUid: string(pod.UID), Reason: "quota of team-a used up"})
	// A pod that no longer waits is left alone.
	e.host.decide(&pb.WaitingPodDecision{SchedulerName: profileName, Plugin: "Quota", PodUid: "gone", Allow: true})
	want := []string{"allow DeviceShare", "reject Quota: quota of team-a used up"}
	if got := w.waitDecisions(t, 2); !slices.Equal(got, want) {
		t.Fatalf("decisions %q, want %q", got, want)
	}

	rejected := testPod("r", map[string]string{"wait-DeviceShare": "10", "permitreject-Quota": ""})
	got = e.permit(framework.NewCycleState(), rejected, "n1")
	if a := got["Quota"]; a.st.Code() != fwk.Unschedulable || a.st.Message() != "quota exhausted" {
		t.Fatalf("Quota: %v, want Unschedulable with its reason", a.st)
	}
	if a := got["DeviceShare"]; !a.st.IsWait() || a.wait != 10*time.Millisecond {
		t.Fatalf("DeviceShare: %v %v, want its own Wait", a.st, a.wait)
	}
}

func TestPreEnqueueGateIsThePluginsOneCallPerPass(t *testing.T) {
	e := newHookEnv(t, []*pb.PluginInfo{hookedPlugin("DeviceShare"), hookedPlugin("Quota")}, nil)
	pod := testPod("p", map[string]string{"gate-Quota": ""})
	for pass := 1; pass <= 2; pass++ {
		sts := e.preEnqueue(pod)
		if !sts["DeviceShare"].IsSuccess() {
			t.Fatalf("DeviceShare admits: %v", sts["DeviceShare"])
		}
		if st := sts["Quota"]; st.Code() != fwk.UnschedulableAndUnresolvable || st.Message() != "gated by Quota" {
			t.Fatalf("Quota: %v, want UnschedulableAndUnresolvable with its reason", st)
		}
		if n := e.host.count("PreEnqueue"); n != pass {
			t.Fatalf("%d PreEnqueue calls after %d passes, want one per pass", n, pass)
		}
	}
	// Gated by the first plugin: the second never runs, and its answer is
	// not kept.
	first := testPod("q", map[string]string{"gate-DeviceShare": ""})
	if sts := e.preEnqueue(first); len(sts) != 1 || sts["DeviceShare"].IsSuccess() {
		t.Fatalf("statuses %v, want DeviceShare's gate only", sts)
	}
	if kept := e.mgr.enqueues.kept(); kept != 0 {
		t.Fatalf("%d PreEnqueue answers kept after their passes, want 0", kept)
	}
}

func TestHookFailurePolicies(t *testing.T) {
	e := newHookEnv(t, []*pb.PluginInfo{hookedPlugin("Strict"), hookedPlugin("Lenient")},
		map[string]string{"Lenient": `{"schedplug": {"failurePolicy": "Ignore", "timeout": "50ms"}}`})
	pod := testPod("p", nil)
	e.host.stop()
	waitNotReady(t, e.mgr)

	state := framework.NewCycleState()
	lenient, strict := e.plugins["Lenient"], e.plugins["Strict"]
	if st := lenient.(fwk.ReservePlugin).Reserve(context.Background(), state, pod, "n1"); !st.IsSuccess() {
		t.Fatalf("Ignore in Reserve: %v", st)
	}
	if st := strict.(fwk.ReservePlugin).Reserve(context.Background(), state, pod, "n1"); st.Code() != fwk.Error || !strings.Contains(st.Message(), "plugin Strict has failurePolicy Fail") {
		t.Fatalf("Fail in Reserve: %v", st)
	}
	e.unreserve(state, pod, "n1") // logged, never fails
	if st, _ := lenient.(fwk.PermitPlugin).Permit(context.Background(), state, pod, "n1"); !st.IsSuccess() {
		t.Fatalf("Ignore in Permit: %v", st)
	}
	if st := strict.(fwk.PreBindPlugin).PreBind(context.Background(), state, pod, "n1"); st.Code() != fwk.Error || !strings.Contains(st.Message(), "Strict") {
		t.Fatalf("Fail in PreBind: %v", st)
	}
	if st := lenient.(fwk.PreEnqueuePlugin).PreEnqueue(context.Background(), pod); !st.IsSuccess() {
		t.Fatalf("Ignore in PreEnqueue admits: %v", st)
	}
	st := strict.(fwk.PreEnqueuePlugin).PreEnqueue(context.Background(), pod)
	if st.Code() != fwk.UnschedulableAndUnresolvable || !strings.Contains(st.Message(), "could not be reached") || !strings.Contains(st.Message(), "Strict") {
		t.Fatalf("Fail in PreEnqueue: %v", st)
	}
	// The pod kept out is re-activated once the host answers again.
	e.host.reset()
	e.host.start(t)
	if got := e.handle.waitActivated(); !slices.Equal(got, []string{"default/p"}) {
		t.Fatalf("activated %v, want [default/p]", got)
	}
}

// BenchmarkHookCallsPerPod is what the hooks add to one pod of a profile
// with two native plugins that have them, against the fake host over its
// unix socket: Reserve, Permit and PreBind (nothing to write), or Reserve
// and Unreserve. The patch PreBind makes is the API server's time.
func BenchmarkHookCallsPerPod(b *testing.B) {
	for _, bc := range []struct {
		name string
		run  func(e *hookEnv, state fwk.CycleState, pod *v1.Pod)
	}{
		{"reserve+permit+prebind", func(e *hookEnv, state fwk.CycleState, pod *v1.Pod) {
			e.reserve(state, pod, "n1")
			e.permit(state, pod, "n1")
			e.preBind(state, pod, "n1")
		}},
		{"reserve+unreserve", func(e *hookEnv, state fwk.CycleState, pod *v1.Pod) {
			e.reserve(state, pod, "n1")
			e.unreserve(state, pod, "n1")
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			pod := testPod("p", map[string]string{"nopatch": ""})
			e := newHookEnv(b, []*pb.PluginInfo{hookedPlugin("DeviceShare"), hookedPlugin("Quota")}, nil, pod)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				bc.run(e, framework.NewCycleState(), pod)
			}
		})
	}
}
