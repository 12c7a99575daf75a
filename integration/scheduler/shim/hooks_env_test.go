package shim

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"

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

// fakeWaitingPod keeps what the shim decided (Reject is in
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
	return newHookEnvOn(t, newFakeHost(t, infos...), infos, args, objects...)
}

// newHookEnvOn is newHookEnv on a fake host set up by the caller.
func newHookEnvOn(t testing.TB, host *fakeHost, infos []*pb.PluginInfo, args map[string]string, objects ...runtime.Object) *hookEnv {
	t.Helper()
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
