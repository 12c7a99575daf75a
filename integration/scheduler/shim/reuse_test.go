package shim

import (
	"context"
	"fmt"
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/abi"
	"schedplug.dev/integration/scheduler/shim/cycle"
)

// newReuseEnv is newWindowEnv with Filter-only plugins that made the given
// promises.
func newReuseEnv(t *testing.T, n int, hints uint64, allNodes bool) *windowEnv {
	t.Helper()
	return newReuseEnvWith(t, n, []*pb.PluginInfo{
		{Name: "HwEncrypt", HasFilter: true, Hints: hints},
		{Name: "NetworkLatency", HasFilter: true, Hints: hints},
	}, allNodes)
}

func newReuseEnvWith(t *testing.T, n int, infos []*pb.PluginInfo, allNodes bool) *windowEnv {
	t.Helper()
	e := newEnv(t, infos, nil)
	e.mgr.tracker.SetOptions(cycle.Options{EvaluateAllNodes: allNodes})
	waitWatched(t, e)
	return withWindowNodes(e, n)
}

// waitWatched waits for the session's watch stream. Verdicts are kept
// only in a session whose watch stream is open, which the manager opens
// after its handshake: on a loaded machine a test's first cycles could
// otherwise run before it and make calls the test does not count on.
func waitWatched(t *testing.T, e *env) {
	t.Helper()
	waitFor(t, "the session's watch stream is open", func() bool { return e.mgr.client.Current().Trusted() })
}

// replaceNode gives the snapshot's NodeInfo at pos a new node object (an
// update from the API server), with the labels given.
func (w *windowEnv) replaceNode(pos int, labels map[string]string) {
	ni := w.nodes[pos].(*framework.NodeInfo)
	n := ni.Node().DeepCopy()
	n.Labels = labels
	n.ResourceVersion += "1"
	ni.SetNode(n)
}

func TestReplicasReuseVerdicts(t *testing.T) {
	w := newReuseEnv(t, 500, abi.HintFilterIgnoresNodePods|abi.HintFilterIgnoresPodIdentity, true)
	reused := metricValue(t, "schedplug_shim_verdict_reuse_cycles_total")

	// The first pod of a kind calls; so does the second, after which the
	// kind has been seen twice in a row and its verdicts are kept.
	w.cycle(t, 0, 120, 4)
	w.cycle(t, 120, 120, 4)
	if got := w.host.count("PreFilter"); got != 2 {
		t.Fatalf("PreFilter calls = %d for the first two replicas, want 2", got)
	}
	// The next replicas (other names and uids, cycle() names each pod by
	// its cycle) make no call, and every verdict is the host's.
	for i := 2; i < 6; i++ {
		w.cycle(t, i*120, 120, 8)
	}
	if got := w.host.count("PreFilter"); got != 2 {
		t.Fatalf("PreFilter calls = %d after four more replicas, want still 2", got)
	}
	if got := metricValue(t, "schedplug_shim_verdict_reuse_cycles_total") - reused; got != 4 {
		t.Fatalf("verdict_reuse_cycles_total went up by %v, want 4", got)
	}
	if got := w.host.count("Filter") + w.host.count("FilterNodes"); got != 0 {
		t.Fatalf("Filter and FilterNodes calls = %d, want 0", got)
	}

	// Pods added to nodes change nothing for plugins that ignore them.
	for pos := 0; pos < 500; pos += 7 {
		w.nodes[pos].(*framework.NodeInfo).AddPod(testPod(fmt.Sprintf("bound-%d", pos), nil))
	}
	w.cycle(t, 0, 500, 16)
	if got := w.host.count("PreFilter"); got != 2 {
		t.Fatalf("PreFilter calls = %d after pods were bound, want still 2", got)
	}
}

func TestReuseAsksTheHostAboutAChangedNode(t *testing.T) {
	w := newReuseEnv(t, 500, abi.HintFilterIgnoresNodePods|abi.HintFilterIgnoresPodIdentity, true)
	w.cycle(t, 0, 120, 4)
	w.cycle(t, 120, 120, 4)
	misses := metricValue(t, "schedplug_shim_verdict_reuse_misses_total")

	// Node 251 becomes one HwEncrypt rejects, node 253 one it accepts
	// again (its object changes, with the same labels).
	w.replaceNode(251, map[string]string{"reject-HwEncrypt": ""})
	w.replaceNode(253, nil)
	state := framework.NewCycleState()
	pod := testPod("replica-x", nil)
	w.runPreFilter(t, []string{"HwEncrypt", "NetworkLatency"}, state, pod, w.nodes)
	if got := w.host.count("PreFilter"); got != 2 {
		t.Fatalf("PreFilter calls = %d at PreFilter of a replica, want 2 (none made)", got)
	}
	if st := w.plugins["HwEncrypt"].Filter(context.Background(), state, pod, w.nodes[252]); !st.IsSuccess() {
		t.Fatalf("unchanged node 252: %v", st)
	}
	if got := w.host.count("PreFilter"); got != 2 {
		t.Fatalf("PreFilter calls = %d after a kept verdict, want 2", got)
	}
	errs := make(chan *fwk.Status, 16)
	for k := 0; k < 16; k++ {
		go func() { errs <- w.plugins["HwEncrypt"].Filter(context.Background(), state, pod, w.nodes[251]) }()
	}
	for k := 0; k < 16; k++ {
		if st := <-errs; st.IsSuccess() || st.Code() != fwk.Unschedulable {
			t.Fatalf("node 251, now labelled reject-HwEncrypt: %v, want Unschedulable", st)
		}
	}
	if got := w.host.count("PreFilter"); got != 3 {
		t.Fatalf("PreFilter calls = %d after 16 workers reached a changed node, want 3 (one call)", got)
	}
	if got := metricValue(t, "schedplug_shim_verdict_reuse_misses_total") - misses; got != 1 {
		t.Fatalf("verdict_reuse_misses_total went up by %v, want 1", got)
	}
	// The call brought the host's table up to date: both changed nodes
	// were in its delta.
	sent := map[string]bool{}
	for _, n := range w.host.lastDelta().GetUpserts() {
		sent[n.GetName()] = true
	}
	if !sent["n0251"] || !sent["n0253"] {
		t.Fatalf("the call's delta sent %v, want n0251 and n0253 among them", sent)
	}
	if st := w.plugins["HwEncrypt"].Filter(context.Background(), state, pod, w.nodes[253]); !st.IsSuccess() {
		t.Fatalf("node 253: %v", st)
	}
	if st := w.plugins["NetworkLatency"].Filter(context.Background(), state, pod, w.nodes[255]); st.IsSuccess() {
		t.Fatalf("NetworkLatency on node 255 (reject-NetworkLatency): success, want rejected")
	}

	// The next replica reuses again, the changed nodes' new verdicts
	// included.
	w.cycle(t, 300, 120, 4)
	st := w.plugins["HwEncrypt"]
	state = framework.NewCycleState()
	pod = testPod("replica-y", nil)
	w.runPreFilter(t, []string{"HwEncrypt", "NetworkLatency"}, state, pod, w.nodes)
	if got := st.Filter(context.Background(), state, pod, w.nodes[251]); got.IsSuccess() {
		t.Fatalf("node 251 for the next replica: success, want rejected")
	}
	if got := w.host.count("PreFilter"); got != 3 {
		t.Fatalf("PreFilter calls = %d, want still 3", got)
	}
}

func TestReuseNeedsTheSameSignatureAndThePromises(t *testing.T) {
	both := uint64(abi.HintFilterIgnoresNodePods | abi.HintFilterIgnoresPodIdentity)
	all := both | abi.HintFilterReadsDeclaredPodKeys
	fixed := func(int) map[string]string { return nil }
	byCycle := func(key string) func(int) map[string]string {
		return func(i int) map[string]string { return map[string]string{key: fmt.Sprint(i)} }
	}
	for _, tc := range []struct {
		name        string
		hints       uint64
		annotations []string // declared pod annotation keys
		score       bool
		off         bool
		newList     bool
		labels      func(i int) map[string]string
		annots      func(i int) map[string]string
		want        int // PreFilter calls for five cycles
	}{
		{name: "both promises", hints: both, want: 2},
		{name: "pods on nodes only", hints: abi.HintFilterIgnoresNodePods, want: 5},
		{name: "identity only", hints: abi.HintFilterIgnoresPodIdentity, want: 5},
		{name: "a Score plugin in the profile", hints: both, score: true, want: 5},
		{name: "reuse turned off", hints: both, off: true, want: 5},
		{name: "pods whose labels differ", hints: both, labels: byCycle("kind"), want: 5},
		{name: "a new node list each cycle", hints: both, newList: true, want: 5},
		// Labels come from a map: the signature must not depend on its order.
		{name: "many labels in map order", hints: both, labels: func(int) map[string]string {
			return map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6"}
		}, want: 2},
		{name: "pods whose undeclared labels differ", hints: all, annotations: []string{"wants"}, labels: byCycle("signature"), want: 2},
		{name: "pods whose undeclared annotations differ", hints: all, annotations: []string{"wants"}, annots: byCycle("note"), want: 2},
		{name: "pods whose declared annotation differs", hints: all, annotations: []string{"wants"}, annots: byCycle("wants"), want: 5},
		{name: "keys without the third promise", hints: both, annotations: []string{"wants"}, labels: byCycle("signature"), want: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newReuseEnvWith(t, 100, []*pb.PluginInfo{
				{Name: "HwEncrypt", HasFilter: true, Hints: tc.hints, PodAnnotationKeys: tc.annotations},
				{Name: "NetworkLatency", HasFilter: true, HasScore: tc.score, Hints: tc.hints, PodAnnotationKeys: tc.annotations},
			}, true)
			w.mgr.tracker.SetOptions(cycle.Options{EvaluateAllNodes: true, NoVerdictReuse: tc.off})
			labels, annots := tc.labels, tc.annots
			if labels == nil {
				labels = fixed
			}
			if annots == nil {
				annots = fixed
			}
			for i := 0; i < 5; i++ {
				if tc.newList {
					w.nodes = append([]fwk.NodeInfo(nil), w.nodes...)
					w.handle.setSnapshot(w.nodes)
				}
				state := framework.NewCycleState()
				pod := testPod(fmt.Sprintf("p%d", i), labels(i))
				pod.Annotations = annots(i)
				w.runPreFilter(t, []string{"HwEncrypt", "NetworkLatency"}, state, pod, w.nodes)
				for pos := 0; pos < 100; pos++ {
					st := w.plugins["HwEncrypt"].Filter(context.Background(), state, pod, w.nodes[pos])
					if want := pos%10 == 0; st.IsSuccess() == want {
						t.Fatalf("cycle %d, node %d: %v, want rejected %v", i, pos, st, want)
					}
				}
			}
			if got := w.host.count("PreFilter"); got != tc.want {
				t.Fatalf("PreFilter calls = %d for five cycles, want %d", got, tc.want)
			}
		})
	}
}

// A preemption dry run in a reusing cycle (a pod that fits nowhere): the
// copies of snapshot nodes keep their Node objects and differ only in
// pods, which the plugins promised to ignore, so the kept verdicts answer
// them; a NodeInfo with another Node object makes the cycle's call.
func TestReuseCycleAnswersDryRuns(t *testing.T) {
	w := newReuseEnv(t, 100, abi.HintFilterIgnoresNodePods|abi.HintFilterIgnoresPodIdentity, true)
	w.cycle(t, 0, 100, 4)
	w.cycle(t, 0, 100, 4)
	state := framework.NewCycleState()
	pod := testPod("preemptor", nil)
	w.runPreFilter(t, []string{"HwEncrypt", "NetworkLatency"}, state, pod, w.nodes)
	for _, pos := range []int{40, 41} {
		copyOf := w.nodes[pos].(*framework.NodeInfo).SnapshotConcrete()
		copyOf.AddPod(testPod(fmt.Sprintf("victim-%d", pos), nil))
		st := w.plugins["HwEncrypt"].Filter(context.Background(), state.Clone(), pod, copyOf)
		if want := pos%10 == 0; st.IsSuccess() == want {
			t.Errorf("dry-run copy of node %d: %v, want rejected %v", pos, st, want)
		}
	}
	if got := w.host.count("PreFilter") + w.host.count("Filter"); got != 2 {
		t.Errorf("PreFilter and Filter calls = %d, want 2 (none for the reusing cycle's dry runs)", got)
	}
	// A node whose object changed since (relabelled), copied by a dry run:
	// no kept verdict holds for it, so the cycle calls.
	w.replaceNode(42, map[string]string{"reject-HwEncrypt": ""})
	changed := w.nodes[42].(*framework.NodeInfo).SnapshotConcrete()
	changed.AddPod(testPod("victim-42", nil))
	if st := w.plugins["HwEncrypt"].Filter(context.Background(), state.Clone(), pod, changed); st.IsSuccess() {
		t.Errorf("dry-run copy of relabelled node 42: success, want rejected")
	}
	if got := w.host.count("PreFilter"); got != 3 {
		t.Errorf("PreFilter calls = %d, want 3: the changed node made the reusing cycle's call", got)
	}
}

// With the filter window (a large cluster), verdicts are kept for the
// nodes each call evaluated; once the framework's walk has gone round the
// node list, replicas make no calls.
func TestReuseWithTheFilterWindowCoversTheListInTime(t *testing.T) {
	w := newReuseEnv(t, 1000, abi.HintFilterIgnoresNodePods|abi.HintFilterIgnoresPodIdentity, false)
	start := 0
	var calls []int
	for i := 0; i < 24; i++ {
		before := w.host.count("PreFilter") + w.host.count("FilterNodes")
		w.cycle(t, start, 120, 8)
		calls = append(calls, w.host.count("PreFilter")+w.host.count("FilterNodes")-before)
		start = (start + 120) % 1000
	}
	for i, c := range calls[12:] {
		if c != 0 {
			t.Fatalf("calls per cycle %v: cycle %d made %d, want none once the list was covered", calls, 12+i, c)
		}
	}
	if got := w.host.count("Filter"); got != 0 {
		t.Fatalf("single-node Filter calls = %d, want 0", got)
	}
}

func TestVerdictReuseSwitchFromEnv(t *testing.T) {
	t.Setenv(EnvHost, "unix:///tmp/x.sock")
	t.Setenv(EnvVerdictReuse, "off")
	cfg, err := ConfigFromEnv()
	if err != nil || !cfg.NoVerdictReuse {
		t.Fatalf("%s=off: NoVerdictReuse %v, err %v", EnvVerdictReuse, cfg.NoVerdictReuse, err)
	}
	t.Setenv(EnvVerdictReuse, "sometimes")
	if _, err := ConfigFromEnv(); err == nil {
		t.Fatalf("%s=sometimes: no error", EnvVerdictReuse)
	}
}
