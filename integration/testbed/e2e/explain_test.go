package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"schedplug.dev/integration/testbed/testenv"
)

// runExplain runs `schedplug explain --json` against the stack's host.
func runExplain(t *testing.T, s *stack, pod string) (*testenv.Explain, int) {
	t.Helper()
	out, code, err := testenv.RunExplain(s.host.Address, pod)
	if err != nil {
		t.Fatal(err)
	}
	return out, code
}

// TestExplainAsksTheRunningHost: a pod HwEncrypt leaves Pending and a pod
// it lets through, which NetworkLatency scores, on the real scheduler and
// host. `schedplug explain` on each prints the verdicts and reasons the
// plugins gave, the scores, and the node kube-scheduler chose, which is
// the pod's spec.nodeName. The profile writes the simulator annotations
// too, and each pod's say the same as the host's recent cycles
// (simannot_test.go).
func TestExplainAsksTheRunningHost(t *testing.T) {
	latencyFile := filepath.Join(t.TempDir(), "latency.txt")
	if err := os.WriteFile(latencyFile, []byte("# node latency-ms\nenc-1 5\nenc-2 40\nplain-1 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startStack(t, []testenv.NativePlugin{
		{Name: "HwEncrypt", FailurePolicy: "Fail", Timeout: "500ms"},
		{Name: "NetworkLatency", Weight: 5, Args: map[string]any{"latencyFile": latencyFile}, FailurePolicy: "Ignore", Timeout: "500ms", SimulatorAnnotations: true},
	})
	ctx := s.ctx()
	ns := s.namespace("explain")

	// 1. Only a node without encryption: the pod stays Pending.
	s.createNodes(ctx, testenv.MakeNode("plain-1", bigNode, nil))
	s.must(testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, testenv.PodSpec{Name: "waiting", Annotations: needsHw, CPU: "100m"})))
	_, err := testenv.WaitForFailedScheduling(ctx, s.client, ns, "waiting", hwReason, 60*time.Second)
	s.must(err)
	got, code := runExplain(t, s, ns+"/waiting")
	if code != 0 || len(got.Cycles) == 0 {
		t.Fatalf("explain %s/waiting: exit %d, %d cycles (%s); want its cycles", ns, code, len(got.Cycles), got.NotHeld)
	}
	last := got.Cycles[len(got.Cycles)-1]
	if last.ChosenNode != "" {
		t.Errorf("the Pending pod's cycle names chosen node %q", last.ChosenNode)
	}
	if len(last.Explain) != 1 || last.Explain[0].Node != "plain-1" || last.Explain[0].Feasible ||
		len(last.Explain[0].Filters) == 0 || last.Explain[0].Filters[0].Plugin != "HwEncrypt" ||
		last.Explain[0].Filters[0].Verdict != "UnschedulableAndUnresolvable" && last.Explain[0].Filters[0].Verdict != "Unschedulable" ||
		last.Explain[0].Filters[0].Reason != hwReason {
		t.Errorf("explain of the Pending pod = %+v; want plain-1 rejected by HwEncrypt with %q", last.Explain, hwReason)
	}
	// A failed cycle's annotations are written when the next cycle starts:
	// a plain pod's.
	s.must(testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, testenv.PodSpec{Name: "nudge", CPU: "100m"})))
	rejected := func(r *testenv.SimulatorResult) bool { return len(r.Filter) > 0 }
	if r := simulatorResultOnce(t, s, ns, "waiting", rejected); r.SelectedNode != "" || len(r.Filter) != 1 || r.Filter["plain-1"]["HwEncrypt"] != hwReason {
		t.Errorf("simulator annotations of the Pending pod: selected-node %q, filter-result %v; want none and plain-1 rejected by HwEncrypt", r.SelectedNode, r.Filter)
	}

	// 2. Two encrypting nodes arrive: the waiting pod and a new one go to
	// the one with the lower latency; a third pod follows.
	s.createNodes(ctx,
		testenv.MakeNode("enc-1", bigNode, hwNode), testenv.MakeNode("enc-2", bigNode, hwNode))
	s.must(testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, testenv.PodSpec{Name: "placed", Annotations: needsHw, CPU: "100m"})))
	placed, err := testenv.WaitForBound(ctx, s.client, ns, []string{"waiting", "placed"}, 60*time.Second)
	s.must(err)
	s.must(testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, testenv.PodSpec{Name: "next", Annotations: needsHw, CPU: "100m"})))
	_, err = testenv.WaitForBound(ctx, s.client, ns, []string{"next"}, 60*time.Second)
	s.must(err)

	pod, err := s.client.CoreV1().Pods(ns).Get(context.Background(), "placed", metav1.GetOptions{})
	s.must(err)
	for _, ask := range []string{ns + "/placed", string(pod.UID)} {
		got, code = runExplain(t, s, ask)
		if code != 0 || len(got.Cycles) == 0 {
			t.Fatalf("explain %s: exit %d, %d cycles (%s)", ask, code, len(got.Cycles), got.NotHeld)
		}
		c := got.Cycles[len(got.Cycles)-1]
		if c.ChosenNode != placed["placed"] || c.PodUID != string(pod.UID) {
			t.Errorf("explain %s: chosen node %q, uid %s; the pod is on %q with uid %s", ask, c.ChosenNode, c.PodUID, placed["placed"], pod.UID)
		}
		scores := map[string]int64{}
		for _, n := range c.Explain {
			switch {
			case n.Node == "plain-1":
				if n.Feasible || n.Filters[0].Reason != hwReason {
					t.Errorf("explain %s: plain-1 = %+v; want rejected by HwEncrypt", ask, n)
				}
			case len(n.Scores) == 1 && n.Scores[0].Plugin == "NetworkLatency":
				scores[n.Node] = n.Scores[0].Normalized
				if n.Chosen != (n.Node == placed["placed"]) {
					t.Errorf("explain %s: node %s marked chosen=%v", ask, n.Node, n.Chosen)
				}
			}
		}
		// NetworkLatency's own rule: the lowest latency gets the most.
		if len(scores) != 2 || scores["enc-1"] <= scores["enc-2"] {
			t.Errorf("explain %s: NetworkLatency scores %v; want enc-1 (5 ms) above enc-2 (40 ms)", ask, scores)
		}
		checkSimulatorAnnotations(t, s, ns, "placed", placed["placed"], c)
		timed := false
		for _, tm := range c.Timings {
			timed = timed || tm.Plugin == "HwEncrypt" && tm.Hook == "filter"
		}
		if !timed {
			t.Errorf("explain %s: no HwEncrypt filter time in %+v", ask, c.Timings)
		}
	}

	// The same plugin files, run apart from the scheduler on the same
	// objects (schedplug simulate --native-only: the plugin runtime the
	// SDK's test kit shares), give the verdicts, reasons and scores the
	// host's recent cycles hold.
	checkExplainAgainstSimulate(t, s, pod, got.Cycles[len(got.Cycles)-1])

	// The text layout, as an operator reads it.
	bin, err := testenv.CLIBinary()
	s.must(err)
	text, err := exec.Command(bin, "explain", ns+"/placed", "--listen", s.host.Address).CombinedOutput()
	if err != nil || !strings.Contains(string(text), "<- chosen") || !strings.Contains(string(text), "outcome: placed on "+placed["placed"]) {
		t.Errorf("schedplug explain %s/placed (text): %v\n%s", ns, err, text)
	}
	t.Logf("schedplug explain %s/placed:\n%s", ns, text)

	logSimulatorAnnotationCost(t, s, 4)

	// 3. A pod the host never saw.
	got, code = runExplain(t, s, ns+"/nobody")
	if code != 1 || !strings.Contains(got.NotHeld, "holds no cycle") {
		t.Errorf("explain of an unknown pod: exit %d, %q; want exit 1 saying the host holds no cycle of it", code, got.NotHeld)
	}
}

// explainOutcome asks `schedplug explain` about pod until its latest
// cycle's outcome is `want` (what became of a cycle reaches the host off
// the scheduling cycle, a moment after kube-scheduler decides it), for at
// most 10 s, and returns that cycle; on time-out it reports the last
// answer as an error and returns it.
func explainOutcome(t *testing.T, s *stack, pod, want string) testenv.ExplainCycle {
	t.Helper()
	var last testenv.ExplainCycle
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		got, code := runExplain(t, s, pod)
		if code == 0 && len(got.Cycles) > 0 {
			last = got.Cycles[len(got.Cycles)-1]
			if last.Outcome == want {
				return last
			}
		}
		if time.Now().After(deadline) {
			t.Errorf("explain %s: the latest cycle's outcome is %q after 10s, want %q: %+v", pod, last.Outcome, want, last)
			return last
		}
	}
}

// explainText is `schedplug explain` as an operator reads it.
func explainText(t *testing.T, s *stack, args ...string) string {
	t.Helper()
	bin, err := testenv.CLIBinary()
	s.must(err)
	out, err := exec.Command(bin, append([]string{"explain", "--listen", s.host.Address}, args...)...).CombinedOutput()
	if err != nil {
		t.Errorf("schedplug explain %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// In a quiet cluster, nothing follows the last pod placed: explain says
// where it went and shows its scores all the same (the shim tells the host
// at kube-scheduler's Reserve, not with the next pod's call). A pod no
// node fits is explained whole: what kube-scheduler said of its in-tree
// and native filters, the native rejections counted by reason (their
// nodes on request), and the nodes that passed every native filter, which
// only in-tree filters can have turned down.
func TestExplainTheLastPodAndAPendingPodWhole(t *testing.T) {
	latencyFile := filepath.Join(t.TempDir(), "latency.txt")
	if err := os.WriteFile(latencyFile, []byte("# node latency-ms\nenc-1 5\nenc-2 40\nenc-3 20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startStack(t, []testenv.NativePlugin{
		{Name: "HwEncrypt", FailurePolicy: "Fail", Timeout: "500ms"},
		{Name: "NetworkLatency", Weight: 5, Args: map[string]any{"latencyFile": latencyFile}, FailurePolicy: "Ignore", Timeout: "500ms"},
	})
	ctx := s.ctx()
	ns := s.namespace("quiet")
	smallNode := testenv.NodeResources{CPU: "2", Memory: "8Gi", Pods: 110}
	s.createNodes(ctx,
		testenv.MakeNode("plain-1", bigNode, nil), testenv.MakeNode("plain-2", bigNode, nil),
		testenv.MakeNode("enc-1", smallNode, hwNode), testenv.MakeNode("enc-2", smallNode, hwNode), testenv.MakeNode("enc-3", smallNode, hwNode))
	wantRejections := func(c testenv.ExplainCycle) {
		t.Helper()
		if len(c.Rejections) != 1 || c.Rejections[0].Plugin != "HwEncrypt" || c.Rejections[0].Reason != hwReason ||
			strings.Join(c.Rejections[0].Nodes, ",") != "plain-1,plain-2" || c.NodesRejected != 2 || c.NodesPassed != 3 {
			t.Errorf("native rejections %+v, %d rejected, %d passed; want plain-1 and plain-2 rejected by HwEncrypt with %q, 3 passed", c.Rejections, c.NodesRejected, c.NodesPassed, hwReason)
		}
	}

	// 1. The last pod: nothing is scheduled after it.
	s.must(testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, testenv.PodSpec{Name: "last", Annotations: needsHw, CPU: "100m"})))
	bound, err := testenv.WaitForBound(ctx, s.client, ns, []string{"last"}, 60*time.Second)
	s.must(err)
	c := explainOutcome(t, s, ns+"/last", "placed")
	if c.ChosenNode != bound["last"] || bound["last"] != "enc-1" {
		t.Errorf("explain of the last pod: chosen node %q; the pod is on %q, want enc-1 (the lowest latency)", c.ChosenNode, bound["last"])
	}
	scored := map[string]int64{}
	for _, n := range c.Explain {
		if len(n.Scores) == 1 {
			scored[n.Node] = n.Total
		}
	}
	if len(scored) != 3 || scored["enc-1"] != 500 || scored["enc-2"] != 0 {
		t.Errorf("explain of the last pod: native totals %v; want enc-1 500, enc-2 0 and enc-3 between", scored)
	}
	wantRejections(c)
	text := explainText(t, s, ns+"/last")
	for _, want := range []string{"outcome: placed on enc-1", "2 rejected by HwEncrypt (UnschedulableAndUnresolvable): " + hwReason, "3 passed every native filter", "<- chosen", "<- runner-up"} {
		if !strings.Contains(text, want) {
			t.Errorf("schedplug explain %s/last does not say %q", ns, want)
		}
	}
	t.Logf("schedplug explain %s/last:\n%s", ns, text)

	// 2. A pod too big for every encrypting node: kube-scheduler's
	// NodeResourcesFit turns them down before HwEncrypt is asked, which
	// turns down the others.
	s.must(testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, testenv.PodSpec{Name: "hungry", Annotations: needsHw, CPU: "4"})))
	event, err := testenv.WaitForFailedScheduling(ctx, s.client, ns, "hungry", "Insufficient cpu", 60*time.Second)
	s.must(err)
	c = explainOutcome(t, s, ns+"/hungry", "unschedulable")
	want := "0/5 nodes are available: 2 " + hwReason + ", 3 Insufficient cpu."
	if c.UnschedulableMessage != want || !strings.HasPrefix(event, want) {
		t.Errorf("explain of the Pending pod: kube-scheduler said %q; want %q, as its event begins: %q", c.UnschedulableMessage, want, event)
	}
	if c.ChosenNode != "" {
		t.Errorf("explain of the Pending pod: chosen node %q", c.ChosenNode)
	}
	wantRejections(c)
	text = explainText(t, s, ns+"/hungry")
	for _, want := range []string{"outcome: no node; kube-scheduler said: " + want,
		"2 rejected by HwEncrypt (UnschedulableAndUnresolvable): " + hwReason,
		"3 passed every native filter; kube-scheduler's in-tree filters rejected them"} {
		if !strings.Contains(text, want) {
			t.Errorf("schedplug explain %s/hungry does not say %q", ns, want)
		}
	}
	if strings.Contains(text, "plain-1") {
		t.Errorf("schedplug explain %s/hungry lists nodes without --nodes", ns)
	}
	t.Logf("schedplug explain %s/hungry:\n%s", ns, text)
	text = explainText(t, s, ns+"/hungry", "--nodes")
	if !strings.Contains(text, "      plain-1, plain-2\n") || strings.Contains(text, "not run") {
		t.Errorf("schedplug explain --nodes %s/hungry lists neither HwEncrypt's nodes under its reason nor each node without the filters that did not run", ns)
	}
	t.Logf("schedplug explain --nodes %s/hungry:\n%s", ns, text)
}

// checkExplainAgainstSimulate dumps the cluster's nodes and `placed` (as
// still pending) and compares `schedplug simulate --native-only --explain`
// of it, node by node, with the cycle the running host kept.
func checkExplainAgainstSimulate(t *testing.T, s *stack, placed *corev1.Pod, kept testenv.ExplainCycle) {
	t.Helper()
	nodes, err := s.client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	s.must(err)
	pending := placed.DeepCopy()
	pending.Spec.NodeName = ""
	nodesYAML, podsYAML, err := testenv.DumpObjects(nodes.Items, []corev1.Pod{*pending})
	s.must(err)
	dir := t.TempDir()
	s.must(os.WriteFile(filepath.Join(dir, "nodes.yaml"), nodesYAML, 0o644))
	s.must(os.WriteFile(filepath.Join(dir, "pods.yaml"), podsYAML, 0o644))
	pluginDir, err := testenv.PluginDir()
	s.must(err)
	key := placed.Namespace + "/" + placed.Name
	sim, code, err := testenv.RunSimulate("--native-only", "--config", s.configFile, "--plugins", pluginDir,
		"--nodes", filepath.Join(dir, "nodes.yaml"), "--pods", filepath.Join(dir, "pods.yaml"), "--explain", key)
	s.must(err)
	want := sim.Pod(key).Explain
	if code != 0 || len(want) == 0 {
		t.Fatalf("simulate --native-only --explain %s: exit %d, rows %+v", key, code, want)
	}
	byNode := map[string]testenv.ExplainNode{}
	for _, n := range kept.Explain {
		byNode[n.Node] = n
	}
	for _, w := range want {
		g, ok := byNode[w.Node]
		if !ok {
			t.Errorf("explain has no row for %s; simulate gives %+v", w.Node, w)
			continue
		}
		if g.Feasible != w.Feasible || len(g.Filters) != len(w.Filters) || len(g.Scores) != len(w.Scores) {
			t.Errorf("node %s: explain %+v, simulate %+v", w.Node, g, w)
			continue
		}
		for i := range w.Filters {
			if g.Filters[i] != w.Filters[i] {
				t.Errorf("node %s: explain's %s filter %+v, simulate's %+v", w.Node, w.Filters[i].Plugin, g.Filters[i], w.Filters[i])
			}
		}
		for i := range w.Scores {
			if g.Scores[i].Raw != w.Scores[i].Raw || g.Scores[i].Normalized != w.Scores[i].Normalized {
				t.Errorf("node %s: explain's %s score %+v, simulate's %+v", w.Node, w.Scores[i].Plugin, g.Scores[i], w.Scores[i])
			}
		}
	}
}
