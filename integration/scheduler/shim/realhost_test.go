package shim

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/abi"
	"schedplug.dev/integration/scheduler/shim/internal/shimtest"
)

// TestAgainstRealHost runs scheduling cycles through the shim against a real
// schedplug-host that it starts (SCHEDPLUG_HOST_BIN, SCHEDPLUG_PLUGIN_DIR or
// their build/ defaults, as the e2e tests find them) with
// config/scheduler-config.yaml and the sample plugins. Without a built host
// it fails and says how to build one.
func TestAgainstRealHost(t *testing.T) {
	target := shimtest.StartRealHost(t)
	infos := []*pb.PluginInfo{{Name: "HwEncrypt"}, {Name: "DedicatedNodes"}, {Name: "NetworkLatency"}}
	m, err := NewManager(Config{Target: target, Profiles: []Profile{{SchedulerName: "schedplug-scheduler", Plugins: []string{"HwEncrypt", "DedicatedNodes", "NetworkLatency"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	h := &realHandle{}
	pls := map[string]*Plugin{}
	for _, i := range infos {
		pls[i.Name] = NewPlugin(m, i.Name, DefaultPolicy(), h)
	}
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	enc := testNode("enc", map[string]string{"node.kubernetes.io/hw-encrypt": "true"}, 1)
	plain := testNode("plain", nil, 0)
	nodes := asList(enc, plain)
	pod := testPod("p", nil)
	pod.Annotations = map[string]string{"myorg.io/require-hw-encrypt": "true"}
	state := framework.NewCycleState()
	for _, n := range []string{"HwEncrypt", "DedicatedNodes", "NetworkLatency"} {
		_, st := pls[n].PreFilter(context.Background(), state, pod, nodes)
		t.Logf("PreFilter %s: %v", n, st)
	}
	if st := pls["HwEncrypt"].Filter(context.Background(), state, pod, enc); !st.IsSuccess() {
		t.Errorf("HwEncrypt on enc: %v", st)
	}
	st := pls["HwEncrypt"].Filter(context.Background(), state, pod, plain)
	if st.Code() != fwk.UnschedulableAndUnresolvable || !strings.Contains(st.Message(), "encryption") {
		t.Errorf("HwEncrypt on plain: %v %q", st.Code(), st.Message())
	}
	t.Logf("HwEncrypt on plain: %v %q", st.Code(), st.Message())
	// The fallback path with a what-if copy.
	whatIf := enc.SnapshotConcrete()
	whatIf.AddPod(testPod("extra", nil))
	if st := pls["HwEncrypt"].Filter(context.Background(), state, pod, whatIf); !st.IsSuccess() {
		t.Errorf("HwEncrypt fallback on enc: %v", st)
	}
	// The sample filters read node labels and one pod annotation each,
	// never the pod's name, uid or other labels and annotations, and
	// promise so (SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS,
	// SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY,
	// SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS); NetworkLatency has no
	// filter and promises nothing.
	all := uint64(abi.HintFilterIgnoresNodePods | abi.HintFilterIgnoresPodIdentity | abi.HintFilterReadsDeclaredPodKeys)
	for name, want := range map[string]struct {
		hints uint64
		keys  string
	}{"HwEncrypt": {all, "myorg.io/require-hw-encrypt"}, "DedicatedNodes": {all, "schedplug.io/dedicated-ok"}, "NetworkLatency": {0, ""}} {
		info := m.pluginInfo(name)
		if got, keys := info.GetHints(), strings.Join(info.GetPodAnnotationKeys(), ","); got != want.hints || keys != want.keys || len(info.GetPodLabelKeys()) != 0 {
			t.Errorf("%s: the host reports hints %#x, pod annotation keys %q and label keys %q; want %#x, %q and none", name, got, keys, info.GetPodLabelKeys(), want.hints, want.keys)
		}
	}
	// With the snapshot known, the dry-run copies of both nodes are
	// answered from the PreFilter verdicts, without a call.
	h.setSnapshot(nodes)
	reusedBefore := metricValue(t, "schedplug_shim_filter_verdicts_reused_total")
	fallbacksBefore := metricValue(t, "schedplug_shim_filter_fallbacks_total")
	if st := pls["HwEncrypt"].Filter(context.Background(), state, pod, whatIf); !st.IsSuccess() {
		t.Errorf("HwEncrypt on a dry-run copy of enc: %v", st)
	}
	plainIf := plain.SnapshotConcrete()
	plainIf.AddPod(testPod("extra", nil))
	if st := pls["HwEncrypt"].Filter(context.Background(), state, pod, plainIf); st.Code() != fwk.UnschedulableAndUnresolvable {
		t.Errorf("HwEncrypt on a dry-run copy of plain: %v %q", st.Code(), st.Message())
	}
	reusedAfter := metricValue(t, "schedplug_shim_filter_verdicts_reused_total")
	fallbacksAfter := metricValue(t, "schedplug_shim_filter_fallbacks_total")
	if reusedAfter-reusedBefore != 2 || fallbacksAfter != fallbacksBefore {
		t.Errorf("dry-run copies: %v verdicts reused and %v fallbacks, want 2 and 0", reusedAfter-reusedBefore, fallbacksAfter-fallbacksBefore)
	}
	feasible := asList(enc)
	st = pls["NetworkLatency"].PreScore(context.Background(), state, pod, feasible)
	t.Logf("PreScore NetworkLatency: %v", st)
	if !st.IsSuccess() && !st.IsSkip() {
		t.Errorf("PreScore NetworkLatency: %v", st)
	}
	if st.IsSuccess() {
		s, sst := pls["NetworkLatency"].Score(context.Background(), state, pod, enc)
		t.Logf("Score enc: %d %v", s, sst)
		if !sst.IsSuccess() || s < fwk.MinNodeScore || s > fwk.MaxNodeScore {
			t.Errorf("Score NetworkLatency on enc: %d %v, want a success in [%d, %d]", s, sst, fwk.MinNodeScore, fwk.MaxNodeScore)
		}
	}
	evs, err := pls["HwEncrypt"].EventsToRegister(context.Background())
	if err != nil {
		t.Errorf("HwEncrypt EventsToRegister: %v", err)
	}
	t.Logf("HwEncrypt events: %+v", evs)
}

type realHandle struct{ fakeHandle }

func (h *realHandle) ProfileName() string { return "schedplug-scheduler" }

// TestFilterWindowAgainstRealHost: with a window in PreFilter and the
// FilterNodes calls of a cycle that goes beyond it (the next run of
// positions, then every node left), the real host's
// verdicts on every node are those of HwEncrypt (nodes without the
// hw-encrypt label fail a pod that requires it), over the fast path and
// over gRPC alike.
func TestFilterWindowAgainstRealHost(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(map[bool]string{true: "fast path", false: "gRPC"}[fast], func(t *testing.T) {
			target := shimtest.StartRealHost(t)
			names := []string{"HwEncrypt", "DedicatedNodes", "NetworkLatency"}
			m, err := NewManager(Config{Target: target, DisableFastPath: !fast, Profiles: []Profile{{SchedulerName: "schedplug-scheduler", Plugins: names}}})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			h := &realHandle{}
			hw := NewPlugin(m, "HwEncrypt", DefaultPolicy(), h)
			for _, n := range names[1:] {
				NewPlugin(m, n, DefaultPolicy(), h)
			}
			if err := m.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			var nodes []fwk.NodeInfo
			for i := 0; i < 1000; i++ {
				var labels map[string]string
				if i%3 == 0 {
					labels = map[string]string{"node.kubernetes.io/hw-encrypt": "true"}
				}
				nodes = append(nodes, testNode(fmt.Sprintf("n%04d", i), labels, 0))
			}
			h.setSnapshot(nodes)
			rpcCount := func(method string) float64 {
				v := metricValue(t, "schedplug_shim_rpcs_total", "method", method, "code", codes.OK.String())
				return v
			}
			windowsBefore := metricValue(t, "schedplug_shim_filter_windows_total")
			filterNodesBefore := rpcCount("FilterNodes")
			cycle := func(start, count int) {
				t.Helper()
				pod := testPod(fmt.Sprintf("p%d", start), nil)
				pod.Annotations = map[string]string{"myorg.io/require-hw-encrypt": "true"}
				state := framework.NewCycleState()
				if _, st := hw.PreFilter(context.Background(), state, pod, nodes); !st.IsSuccess() {
					t.Fatalf("PreFilter: %v", st)
				}
				for i := 0; i < count; i++ {
					pos := (start + i) % len(nodes)
					st := hw.Filter(context.Background(), state, pod, nodes[pos])
					if want := pos%3 == 0; st.IsSuccess() != want {
						t.Fatalf("HwEncrypt on %s: %v %q, want success %v", nodes[pos].Node().Name, st.Code(), st.Message(), want)
					}
				}
			}
			cycle(0, 120)   // every node: nothing to predict from
			cycle(120, 120) // a window
			if got := metricValue(t, "schedplug_shim_filter_windows_total"); got-windowsBefore != 1 {
				t.Fatalf("windowed PreFilter calls: %v, want 1", got-windowsBefore)
			}
			if got := rpcCount("FilterNodes") - filterNodesBefore; got != 0 {
				t.Fatalf("FilterNodes calls within the window: %v, want 0", got)
			}
			// Every node, beyond the window. The host takes a feasible
			// target: the window is the whole list from a margin before
			// position 240 (the step between the last two walks is known),
			// and the host stops once 40 + 5 + 2 margins of 47 nodes passed
			// (every third one passes), 417 positions in; the next run
			// after them, as long, and then every node left: two calls.
			cycle(240, 1000)
			if got := rpcCount("FilterNodes") - filterNodesBefore; got != 2 {
				t.Fatalf("FilterNodes calls for a cycle that visits every node: %v, want 2", got)
			}
		})
	}
}
