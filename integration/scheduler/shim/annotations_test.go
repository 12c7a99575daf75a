package shim

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/simannot"
)

// annotatingEnv is a profile of HwEncrypt (a Filter) and NetworkLatency
// (a Score, weight 5) whose plugins are made by the factory from these
// args, writing the simulator's annotations to a fake API server.
func annotatingEnv(t *testing.T, args map[string]string) (*env, *fake.Clientset, error) {
	t.Helper()
	infos := []*pb.PluginInfo{{Name: "HwEncrypt", HasFilter: true}, {Name: "NetworkLatency", HasScore: true}}
	host := newFakeHost(t, infos...)
	client := fake.NewClientset()
	m, err := NewManager(Config{
		Target: host.target(), ConnectTimeout: 300 * time.Millisecond, ResyncTimeout: 2 * time.Second,
		Profiles: []Profile{{SchedulerName: profileName, Plugins: []string{"HwEncrypt", "NetworkLatency"},
			Configs: []PluginConfig{{Name: "HwEncrypt"}, {Name: "NetworkLatency", Weight: 5}}}},
		AnnotationClient: client, SimulatorAnnotations: simannot.Options{QPS: 1000},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	e := &env{host: host, mgr: m, handle: &fakeHandle{}, plugins: map[string]*Plugin{}}
	for _, info := range infos {
		var a runtime.Object
		if raw, ok := args[info.Name]; ok {
			a = &runtime.Unknown{Raw: []byte(raw), ContentType: runtime.ContentTypeJSON}
		}
		p, err := FactoryFor(func() (*Manager, error) { return m, nil }, info.Name)(context.Background(), a, e.handle)
		if err != nil {
			return nil, nil, err
		}
		e.plugins[info.Name] = p.(*Plugin)
	}
	return e, client, nil
}

// schedule runs pod's cycle as kube-scheduler does: PreFilter, Filter on
// every node (stopping at a node's first rejection), PreScore, Score and
// NormalizeScore on the feasible ones, and Reserve on the best of them.
// It returns the reserved node ("" when none fits).
func (e *env) schedule(t *testing.T, pod *v1.Pod, nodes []fwk.NodeInfo) string {
	t.Helper()
	ctx := context.Background()
	state := framework.NewCycleState()
	hw, nl := e.plugins["HwEncrypt"], e.plugins["NetworkLatency"]
	for _, p := range []*Plugin{hw, nl} {
		if _, st := p.PreFilter(ctx, state, pod, nodes); !st.IsSuccess() && !st.IsSkip() {
			t.Fatalf("PreFilter %s: %v", p.name, st)
		}
	}
	var feasible []fwk.NodeInfo
	for _, ni := range nodes {
		if hw.Filter(ctx, state, pod, ni).IsSuccess() {
			feasible = append(feasible, ni)
		}
	}
	if len(feasible) == 0 {
		return ""
	}
	for _, p := range []*Plugin{hw, nl} {
		if st := p.PreScore(ctx, state, pod, feasible); !st.IsSuccess() && !st.IsSkip() {
			t.Fatalf("PreScore %s: %v", p.name, st)
		}
	}
	scores := fwk.NodeScoreList{}
	for _, ni := range feasible {
		s, _ := nl.Score(ctx, state, pod, ni)
		scores = append(scores, fwk.NodeScore{Name: ni.Node().Name, Score: s})
	}
	if st := nl.NormalizeScore(ctx, state, pod, scores); !st.IsSuccess() {
		t.Fatal(st)
	}
	best := scores[0]
	for _, s := range scores {
		if s.Score > best.Score {
			best = s
		}
	}
	for _, p := range []*Plugin{hw, nl} {
		p.Reserve(ctx, state, pod, best.Name)
	}
	return best.Name
}

func waitForAnnotation(t *testing.T, client *fake.Clientset, pod *v1.Pod) map[string]string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		got, err := client.CoreV1().Pods(pod.Namespace).Get(context.Background(), pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := got.Annotations[simannot.SelectedNodeKey]; ok {
			return got.Annotations
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s got no simulator annotations within 10s: %v", pod.Name, got.Annotations)
		}
	}
}

func decodeNodeMap(t *testing.T, annotations map[string]string, key string) map[string]map[string]string {
	t.Helper()
	var m map[string]map[string]string
	if err := json.Unmarshal([]byte(annotations[key]), &m); err != nil {
		t.Fatalf("%s = %q: %v", key, annotations[key], err)
	}
	return m
}

// A profile that opts in gets each pod's native results in the simulator's
// format: the Filter answers on the snapshot's nodes (not on a what-if
// copy), the plugins' raw scores and the weighted normalized ones, the
// node kube-scheduler reserved; a pod no node fits gets its rejections
// once the next cycle starts.
func TestSimulatorAnnotationsOfAScheduledAndAPendingPod(t *testing.T) {
	e, client, err := annotatingEnv(t, map[string]string{"NetworkLatency": `{"schedplug":{"simulatorAnnotations":true}}`})
	if err != nil {
		t.Fatal(err)
	}
	a := testNode("a", map[string]string{"score-NetworkLatency": "100", "raw-NetworkLatency": "5000"}, 0)
	b := testNode("b", map[string]string{"reject-HwEncrypt": ""}, 0)
	c := testNode("c", map[string]string{"score-NetworkLatency": "20", "raw-NetworkLatency": "42000"}, 0)
	nodes := asList(a, b, c)
	e.handle.setSnapshot(nodes)
	pod := testPod("placed", nil)
	if _, err := client.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := e.schedule(t, pod, nodes); got != "a" {
		t.Fatalf("scheduled on %q, want a", got)
	}
	if !e.host.lastPreScore.GetWantRawScores() {
		t.Error("PreScore did not ask for raw scores")
	}
	got := waitForAnnotation(t, client, pod)
	want := map[string]string{
		simannot.SelectedNodeKey:     "a",
		simannot.PreFilterStatusKey:  `{"HwEncrypt":"success"}`,
		simannot.PreFilterResultKey:  `{}`,
		simannot.FilterResultKey:     `{"a":{"HwEncrypt":"passed"},"b":{"HwEncrypt":"node(s) are marked reject-HwEncrypt"},"c":{"HwEncrypt":"passed"}}`,
		simannot.PreScoreResultKey:   `{"NetworkLatency":"success"}`,
		simannot.ScoreResultKey:      `{"a":{"NetworkLatency":"5000"},"c":{"NetworkLatency":"42000"}}`,
		simannot.FinalScoreResultKey: `{"a":{"NetworkLatency":"500"},"c":{"NetworkLatency":"100"}}`,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %s; want %s", k, got[k], w)
		}
	}

	// A pod no node fits; a Filter on a what-if node (not the snapshot's)
	// is not part of its answers. Its annotations come with the next cycle.
	pending := testPod("pending", nil)
	if _, err := client.CoreV1().Pods(pending.Namespace).Create(context.Background(), pending, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	allRejected := asList(b, testNode("d", map[string]string{"reject-HwEncrypt": ""}, 0))
	e.handle.setSnapshot(allRejected)
	ctx, hw := context.Background(), e.plugins["HwEncrypt"]
	state := framework.NewCycleState()
	hw.PreFilter(ctx, state, pending, allRejected)
	for _, ni := range allRejected {
		if hw.Filter(ctx, state, pending, ni).IsSuccess() {
			t.Fatalf("%s passed", ni.Node().Name)
		}
	}
	// Preemption's dry run filters a what-if copy.
	hw.Filter(ctx, state, pending, testNode("what-if", nil, 1))
	hw.PreFilter(ctx, framework.NewCycleState(), testPod("next", nil), allRejected)
	got = waitForAnnotation(t, client, pending)
	filter := decodeNodeMap(t, got, simannot.FilterResultKey)
	if got[simannot.SelectedNodeKey] != "" || len(filter) != 2 || filter["d"]["HwEncrypt"] != "node(s) are marked reject-HwEncrypt" {
		t.Errorf("pending pod: selected %q, filter-result %v; want no node and b and d rejected", got[simannot.SelectedNodeKey], filter)
	}
	if len(decodeNodeMap(t, got, simannot.ScoreResultKey)) != 0 {
		t.Errorf("pending pod: score-result %s; want {}", got[simannot.ScoreResultKey])
	}
}

// Without the setting, cycles note no answers, ask for no raw scores and
// patch nothing.
func TestNoSimulatorAnnotationsUnlessTheProfileOptsIn(t *testing.T) {
	e, client, err := annotatingEnv(t, map[string]string{"HwEncrypt": `{"schedplug":{"simulatorAnnotations":false}}`})
	if err != nil {
		t.Fatal(err)
	}
	a := testNode("a", map[string]string{"score-NetworkLatency": "100"}, 0)
	nodes := asList(a, testNode("c", nil, 0))
	e.handle.setSnapshot(nodes)
	e.schedule(t, testPod("p", nil), nodes)
	if e.host.lastPreScore.GetWantRawScores() {
		t.Error("PreScore asked for raw scores")
	}
	for _, a := range client.Actions() {
		t.Errorf("API call %s %s; want none", a.GetVerb(), a.GetResource().Resource)
	}
}

// One setting per profile: plugins saying true and false stop the start,
// with the words schedplug check uses.
func TestSimulatorAnnotationsConflictStopsTheScheduler(t *testing.T) {
	_, _, err := annotatingEnv(t, map[string]string{
		"HwEncrypt":      `{"schedplug":{"simulatorAnnotations":true}}`,
		"NetworkLatency": `{"schedplug":{"simulatorAnnotations":false}}`,
	})
	if err == nil || !strings.Contains(err.Error(), `profile "default-scheduler": pluginConfig "HwEncrypt" sets args.schedplug.simulatorAnnotations true but "NetworkLatency" sets it false; it is one setting for the whole profile`) {
		t.Fatalf("err %v; want the conflict named", err)
	}
}
