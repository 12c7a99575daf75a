package shim

import (
	"context"
	"os"
	"strings"
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/gen/schedplugv1"
)

// TestAgainstRealHost runs one cycle against a running schedplug-host that
// serves config/scheduler-config.yaml with the sample plugins. It needs
// SCHEDPLUG_SHIM_TEST_HOST (e.g. unix:///tmp/x/host.sock) and is skipped
// without it; the e2e tests cover the same ground with a real cluster.
func TestAgainstRealHost(t *testing.T) {
	target := os.Getenv("SCHEDPLUG_SHIM_TEST_HOST")
	if target == "" {
		t.Skip("SCHEDPLUG_SHIM_TEST_HOST is not set")
	}
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
	feasible := asList(enc)
	st = pls["NetworkLatency"].PreScore(context.Background(), state, pod, feasible)
	t.Logf("PreScore NetworkLatency: %v", st)
	if st.IsSuccess() {
		s, sst := pls["NetworkLatency"].Score(context.Background(), state, pod, enc)
		t.Logf("Score enc: %d %v", s, sst)
	}
	evs, _ := pls["HwEncrypt"].EventsToRegister(context.Background())
	t.Logf("HwEncrypt events: %+v", evs)
}

type realHandle struct{ fakeHandle }

func (h *realHandle) ProfileName() string { return "schedplug-scheduler" }
