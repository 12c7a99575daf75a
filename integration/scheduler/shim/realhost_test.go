package shim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"k8s.io/component-base/metrics/testutil"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/testbed/testenv"
)

// TestAgainstRealHost runs scheduling cycles through the shim against a real
// schedplug-host that it starts (SCHEDPLUG_HOST_BIN, SCHEDPLUG_PLUGIN_DIR or
// their build/ defaults, as the e2e tests find them) with
// config/scheduler-config.yaml and the sample plugins. Without a built host
// it fails and says how to build one.
func TestAgainstRealHost(t *testing.T) {
	target := startRealHost(t)
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
	all := uint64(reuseHints | hintFilterReadsDeclaredPodKeys)
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
	reusedBefore, _ := testutil.GetCounterMetricValue(filterVerdictsReused)
	fallbacksBefore, _ := testutil.GetCounterMetricValue(filterFallbacks)
	if st := pls["HwEncrypt"].Filter(context.Background(), state, pod, whatIf); !st.IsSuccess() {
		t.Errorf("HwEncrypt on a dry-run copy of enc: %v", st)
	}
	plainIf := plain.SnapshotConcrete()
	plainIf.AddPod(testPod("extra", nil))
	if st := pls["HwEncrypt"].Filter(context.Background(), state, pod, plainIf); st.Code() != fwk.UnschedulableAndUnresolvable {
		t.Errorf("HwEncrypt on a dry-run copy of plain: %v %q", st.Code(), st.Message())
	}
	reusedAfter, _ := testutil.GetCounterMetricValue(filterVerdictsReused)
	fallbacksAfter, _ := testutil.GetCounterMetricValue(filterFallbacks)
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

// startRealHost starts schedplug-host for this test with the repository's
// scheduler configuration, its latency file replaced by a temporary one, and
// returns the address the shim dials. The host stops when the test ends.
func startRealHost(t testing.TB) string {
	t.Helper()
	target, _ := startRealHostWithConfig(t)
	return target
}

// startRealHostWithConfig is startRealHost that also returns the
// configuration file the host read.
func startRealHostWithConfig(t testing.TB) (target, configFile string) {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	hostBin, err := testenv.HostBinary()
	if err != nil {
		t.Fatal(err)
	}
	pluginDir, err := testenv.PluginDir()
	if err != nil {
		t.Fatal(err)
	}
	// Unix socket paths are limited to 107 bytes; t.TempDir() can be longer.
	sockDir, err := os.MkdirTemp("", "sp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	dir := t.TempDir()
	latency := filepath.Join(dir, "latency.txt")
	if err := os.WriteFile(latency, []byte("enc 1\nplain 50\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const shipped = "latencyFile: /etc/schedplug/latency/latency.txt"
	cfg, err := os.ReadFile(filepath.Join(root, "config", "scheduler-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cfg), shipped) {
		t.Fatalf("config/scheduler-config.yaml no longer contains %q; update this test", shipped)
	}
	configFile = filepath.Join(dir, "scheduler-config.yaml")
	if err := os.WriteFile(configFile, []byte(strings.Replace(string(cfg), shipped, "latencyFile: "+latency, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	host := testenv.NewHost(hostBin, pluginDir, configFile, sockDir, filepath.Join(dir, "host.log"))
	if err := host.StartAndWait(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !host.Stop(10 * time.Second) {
			t.Errorf("schedplug-host did not exit within 10s of SIGTERM; its log:\n%s", host.LogTail(30))
		}
	})
	return host.Address, configFile
}

type realHandle struct{ fakeHandle }

func (h *realHandle) ProfileName() string { return "schedplug-scheduler" }

// TestFilterWindowAgainstRealHost: with a window in PreFilter and one
// FilterNodes call for a cycle that goes beyond it, the real host's
// verdicts on every node are those of HwEncrypt (nodes without the
// hw-encrypt label fail a pod that requires it), over the fast path and
// over gRPC alike.
func TestFilterWindowAgainstRealHost(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(map[bool]string{true: "fast path", false: "gRPC"}[fast], func(t *testing.T) {
			target := startRealHost(t)
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
				v, _ := testutil.GetCounterMetricValue(rpcs.WithLabelValues(method, codes.OK.String()))
				return v
			}
			windowsBefore, _ := testutil.GetCounterMetricValue(filterWindows)
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
			if got, _ := testutil.GetCounterMetricValue(filterWindows); got-windowsBefore != 1 {
				t.Fatalf("windowed PreFilter calls: %v, want 1", got-windowsBefore)
			}
			if got := rpcCount("FilterNodes") - filterNodesBefore; got != 0 {
				t.Fatalf("FilterNodes calls within the window: %v, want 0", got)
			}
			cycle(240, 1000) // every node, beyond the window
			if got := rpcCount("FilterNodes") - filterNodesBefore; got != 1 {
				t.Fatalf("FilterNodes calls for a cycle beyond its window: %v, want 1", got)
			}
		})
	}
}
