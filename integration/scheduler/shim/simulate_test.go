package shim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"schedplug.dev/integration/testbed/testenv"
)

// TestSimulateMatchesTheHost runs `schedplug simulate --native-only
// --explain '*'` (the host's chains in the CLI's own process) on
// the fixtures made by a real kube-apiserver (integration/testbed/testdata/
// simulate: 100 nodes, 500 pending pods) and replays every pod, in
// simulate's order and onto simulate's node, through this shim and a
// running schedplug-host: the pods and nodes decoded by Kubernetes' own
// code and converted by the shim, every native Filter verdict (with its
// reason) and every normalized score must be simulate's. Besides the
// sample plugins the profile has FreeCpu and GoodScorer, test plugins
// that read a node's requested cpu and pod count, and PodsOnNode, which
// reads the node's pods (their app labels) it declares, so the load and the
// pod lists simulate computes from the dumps are checked too.
func TestSimulateMatchesTheHost(t *testing.T) {
	fixtures, err := testenv.SimFixtureDir()
	if err != nil {
		t.Fatal(err)
	}
	samples, err := testenv.PluginDir()
	if err != nil {
		t.Fatal(err)
	}
	tests, err := testenv.SimTestPluginDir()
	if err != nil {
		t.Fatal(err)
	}
	hostBin, err := testenv.HostBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pluginDir := filepath.Join(dir, "plugins")
	if err := os.Mkdir(pluginDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, so := range []string{filepath.Join(samples, "hw_encrypt.so"), filepath.Join(samples, "dedicated_nodes.so"),
		filepath.Join(samples, "network_latency.so"), filepath.Join(tests, "free_cpu.so"), filepath.Join(tests, "good_scorer.so"),
		filepath.Join(tests, "pods_on_node.so")} {
		if err := os.Symlink(so, filepath.Join(pluginDir, filepath.Base(so))); err != nil {
			t.Fatal(err)
		}
	}
	names := []string{"HwEncrypt", "DedicatedNodes", "NetworkLatency", "FreeCpu", "GoodScorer", "PodsOnNode"}
	configFile := filepath.Join(dir, "scheduler-config.yaml")
	config := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: %s
    plugins:
      multiPoint:
        enabled:
          - name: HwEncrypt
          - name: DedicatedNodes
          - name: NetworkLatency
            weight: 5
          - name: FreeCpu
            weight: 2
          - name: GoodScorer
          - name: PodsOnNode
            weight: 3
    pluginConfig:
      - name: NetworkLatency
        args:
          latencyFile: %q
`, profileName, filepath.Join(fixtures, "latency.txt"))
	if err := os.WriteFile(configFile, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	sim, _, err := testenv.RunSimulate("--native-only", "--config", configFile, "--plugins", pluginDir,
		"--nodes", filepath.Join(fixtures, "nodes.yaml"), "--pods", filepath.Join(fixtures, "pods.yaml"), "--explain", "*")
	if err != nil {
		t.Fatal(err)
	}
	if len(sim.Pods) != testenv.SimPods || len(sim.Profiles) != 1 {
		t.Fatalf("simulate scheduled %d pods in %d profiles, want %d in 1", len(sim.Pods), len(sim.Profiles), testenv.SimPods)
	}
	filters := sim.Profiles[0].Filters
	var scorers []string
	for _, s := range sim.Profiles[0].Scores {
		scorers = append(scorers, s.Plugin)
	}

	sockDir, err := os.MkdirTemp("", "sp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	host := testenv.NewHost(hostBin, pluginDir, configFile, sockDir, filepath.Join(dir, "host.log"))
	if err := host.StartAndWait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Stop(10 * time.Second) })
	m, err := NewManager(Config{Target: host.Address, Profiles: []Profile{{SchedulerName: profileName, Plugins: names}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	h := &fakeHandle{}
	pls := map[string]*Plugin{}
	for _, n := range names {
		pls[n] = NewPlugin(m, n, Policy{FailurePolicy: FailurePolicyFail, Timeout: 30 * time.Second}, h)
	}
	ctx := context.Background()
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}

	nodeList, podList, err := testenv.LoadSimFixtures(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	// The scheduler's snapshot: every node with the pods bound to it.
	infos := map[string]*framework.NodeInfo{}
	var nodes []fwk.NodeInfo
	for i := range nodeList {
		ni := framework.NewNodeInfo()
		ni.SetNode(&nodeList[i])
		infos[nodeList[i].Name] = ni
		nodes = append(nodes, ni)
	}
	pods := map[string]*v1.Pod{}
	for i := range podList {
		p := &podList[i]
		pods[p.Namespace+"/"+p.Name] = p
		if p.Spec.NodeName != "" && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
			infos[p.Spec.NodeName].AddPod(p)
		}
	}
	h.snapshot = nodes

	verdicts, scores := 0, 0
	for _, r := range sim.Pods {
		pod := pods[r.Pod]
		if pod == nil || len(r.Explain) != len(nodes) {
			t.Fatalf("simulate's pod %q: not in the fixture, or explained on %d nodes instead of %d", r.Pod, len(r.Explain), len(nodes))
		}
		state := framework.NewCycleState()
		skipped := map[string]bool{}
		for _, n := range names {
			_, st := pls[n].PreFilter(ctx, state, pod, nodes)
			if !st.IsSuccess() && !st.IsSkip() {
				t.Fatalf("pod %s: PreFilter %s: %v", r.Pod, n, st)
			}
			skipped[n] = st.IsSkip()
		}
		var feasible []fwk.NodeInfo
		for k, ex := range r.Explain {
			ni := nodes[k]
			if ex.Node != ni.Node().Name {
				t.Fatalf("pod %s: simulate explains node %s at position %d, the fixture has %s", r.Pod, ex.Node, k, ni.Node().Name)
			}
			passed := true
			for f, name := range filters {
				want := ex.Filters[f]
				if !passed {
					if want.Verdict != "NotRun" {
						t.Errorf("pod %s node %s: simulate ran %s after a rejection", r.Pod, ex.Node, name)
					}
					continue
				}
				verdicts++
				if skipped[name] {
					if want.Verdict != "Skipped" {
						t.Errorf("pod %s node %s: the host skips %s (applies() said no), simulate says %s", r.Pod, ex.Node, name, want.Verdict)
					}
					continue
				}
				st := pls[name].Filter(ctx, state, pod, ni)
				got, reason := verdictName(st), st.Message()
				if got != want.Verdict || (got != "Success" && reason != want.Reason) {
					t.Errorf("pod %s node %s plugin %s: host %s %q, simulate %s %q", r.Pod, ex.Node, name, got, reason, want.Verdict, want.Reason)
				}
				passed = st.IsSuccess()
			}
			if passed != ex.Feasible {
				t.Errorf("pod %s node %s: feasible %v through the host, %v in simulate", r.Pod, ex.Node, passed, ex.Feasible)
			}
			if passed {
				feasible = append(feasible, ni)
			}
		}
		if r.Status != "placed" {
			if len(feasible) != 0 {
				t.Errorf("pod %s: simulate says %s (%s) but %d nodes pass the host's filters", r.Pod, r.Status, r.Reason, len(feasible))
			}
			continue
		}
		if r.Scored {
			byNode := map[string]int{}
			for k, ex := range r.Explain {
				byNode[ex.Node] = k
			}
			for s, name := range scorers {
				st := pls[name].PreScore(ctx, state, pod, feasible)
				if !st.IsSuccess() && !st.IsSkip() {
					t.Fatalf("pod %s: PreScore %s: %v", r.Pod, name, st)
				}
				for _, ni := range feasible {
					want := r.Explain[byNode[ni.Node().Name]].Scores[s]
					scores++
					if st.IsSkip() {
						if !want.Skipped {
							t.Errorf("pod %s node %s: the host skips %s, simulate scores it", r.Pod, ni.Node().Name, name)
						}
						continue
					}
					got, sst := pls[name].Score(ctx, state, pod, ni)
					if !sst.IsSuccess() || want.Skipped || got != want.Normalized {
						t.Errorf("pod %s node %s plugin %s: host score %d (%v), simulate %d (skipped %v, raw %d)", r.Pod, ni.Node().Name, name, got, sst, want.Normalized, want.Skipped, want.Raw)
					}
				}
			}
		}
		// The pod takes simulate's node, as in simulate.
		placed := pod.DeepCopy()
		placed.Spec.NodeName = r.Node
		infos[r.Node].AddPod(placed)
		if t.Failed() {
			t.Fatalf("stopping at pod %s (the first that differs)", r.Pod)
		}
	}
	t.Logf("%d pods on %d nodes: %d filter verdicts and %d scores of the host equal simulate's", len(sim.Pods), len(nodes), verdicts, scores)
}

func verdictName(st *fwk.Status) string {
	switch st.Code() {
	case fwk.Success:
		return "Success"
	case fwk.Unschedulable:
		return "Unschedulable"
	case fwk.UnschedulableAndUnresolvable:
		return "UnschedulableAndUnresolvable"
	case fwk.Error:
		return "Error"
	default:
		return st.Code().String()
	}
}

// TestSimulateShowsTheNativePluginsRawScores: with kube-scheduler deciding
// (no --native-only), what kube-scheduler keeps as a native plugin's raw
// score is the shim's Score, which schedplug-host (or the shim, for scores
// computed ahead) already normalized; `simulate --explain` must show the
// plugin's own raw score under "raw" all the same. NetworkLatency's raw
// score is the node's latency in microseconds, the same for every pod, so
// each explained node's must be what --native-only (the host's chain in
// simulate's own process) shows for that node.
func TestSimulateShowsTheNativePluginsRawScores(t *testing.T) {
	fixtures, err := testenv.SimFixtureDir()
	if err != nil {
		t.Fatal(err)
	}
	plugins, err := testenv.PluginDir()
	if err != nil {
		t.Fatal(err)
	}
	configFile := filepath.Join(t.TempDir(), "scheduler-config.yaml")
	config := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: %s
    percentageOfNodesToScore: 100
    plugins:
      multiPoint:
        enabled:
          - name: HwEncrypt
          - name: DedicatedNodes
          - name: NetworkLatency
            weight: 5
    pluginConfig:
      - name: NetworkLatency
        args:
          latencyFile: %q
          defaultLatencyMs: 100
`, profileName, filepath.Join(fixtures, "latency.txt"))
	if err := os.WriteFile(configFile, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--config", configFile, "--plugins", plugins,
		"--nodes", filepath.Join(fixtures, "nodes.yaml"), "--pods", filepath.Join(fixtures, "pods.yaml")}
	native, _, err := testenv.RunSimulate(append([]string{"--native-only", "--explain", "*"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	latency := map[string]int64{}
	var explain []string
	for _, p := range native.Pods {
		for _, n := range p.Explain {
			for _, s := range n.Scores {
				if s.Plugin == "NetworkLatency" && !s.Skipped {
					latency[n.Node] = s.Raw
				}
			}
		}
		if p.Scored && len(explain) < 5 {
			explain = append(explain, "--explain", p.Pod)
		}
	}
	sim, _, err := testenv.RunSimulate(append(explain, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	compared, differs := 0, 0
	for _, p := range sim.Pods {
		for _, n := range p.Explain {
			for _, s := range n.Scores {
				if s.Plugin != "NetworkLatency" || s.Skipped {
					continue
				}
				want, ok := latency[n.Node]
				if !ok {
					t.Fatalf("pod %s node %s: --native-only never scored the node", p.Pod, n.Node)
				}
				compared++
				if s.Raw != want {
					t.Errorf("pod %s node %s: simulate shows NetworkLatency's raw score %d (normalized %d), its latency is %d", p.Pod, n.Node, s.Raw, s.Normalized, want)
				}
				if s.Raw != s.Normalized {
					differs++
				}
			}
		}
	}
	if compared == 0 || differs == 0 {
		t.Fatalf("compared %d raw scores, %d of them unlike the normalized one; the explained pods %v should have been scored on latencies in microseconds", compared, differs, explain)
	}
	t.Logf("%d raw scores of NetworkLatency as the plugin gave them", compared)
}
