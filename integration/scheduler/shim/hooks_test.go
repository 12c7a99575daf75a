package shim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

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
		const setBy = "(DeviceShare set annotation DeviceShare.example/node, label DeviceShare.example/bound; Quota set annotation Quota.example/node, label Quota.example/bound)"
		if st.Code() != fwk.Error || !strings.Contains(st.Message(), "DeviceShare, Quota") || !strings.Contains(st.Message(), setBy) || !strings.Contains(st.Message(), "may not patch pods") {
			t.Fatalf("DeviceShare: %v %q, want an Error naming the plugins, which set which key, and the API error", st.Code(), st.Message())
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

func TestKeysSetByNamesEachPluginsKeys(t *testing.T) {
	kv := func(keys ...string) (out []*pb.KeyValue) {
		for _, k := range keys {
			out = append(out, &pb.KeyValue{Key: k, Value: "v"})
		}
		return out
	}
	many := make([]string, 10)
	for i := range many {
		many[i] = fmt.Sprintf("k%d", i)
	}
	for _, c := range []struct {
		name string
		resp *pb.PreBindResponse
		want string
	}{
		{"an older host says nothing", &pb.PreBindResponse{Annotations: kv("a")}, ""},
		{"nothing set", &pb.PreBindResponse{}, ""},
		{"by plugin, in the answer's order",
			&pb.PreBindResponse{Annotations: kv("a", "b"), AnnotationsSetBy: []string{"Quota", "DeviceShare"}, Labels: kv("l"), LabelsSetBy: []string{"Quota"}},
			" (Quota set annotation a, label l; DeviceShare set annotation b)"},
		{"after eight keys the rest are counted",
			&pb.PreBindResponse{Labels: kv(many...), LabelsSetBy: slices.Repeat([]string{"DeviceShare"}, 10)},
			" (DeviceShare set label k0, label k1, label k2, label k3, label k4, label k5, label k6, label k7; 2 more)"},
	} {
		if got := keysSetBy(c.resp); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
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
