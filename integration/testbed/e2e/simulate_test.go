package e2e

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"schedplug.dev/integration/testbed/testenv"
)

var updateSimFixtures = flag.Bool("update-simulate-fixtures", false,
	"write the cluster TestSimulateFixturesComeFromTheRecipe makes into integration/testbed/testdata/simulate")

// TestSimulateFixturesComeFromTheRecipe makes the cluster of `schedplug
// simulate`'s fixtures (testenv.CreateSimCluster: 100 nodes, 100 bound
// pods, 5 finished ones, 500 pending) in a real kube-apiserver, dumps it
// as kubectl would, and checks that integration/testbed/testdata/simulate holds
// exactly that (up to uids and timestamps). With
// -args -update-simulate-fixtures it writes the dumps there instead.
func TestSimulateFixturesComeFromTheRecipe(t *testing.T) {
	dir := t.TempDir()
	cp, err := testenv.StartControlPlane(t, shared.etcd, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := testenv.CreateSimCluster(ctx, cp.Client, true); err != nil {
		t.Fatal(err)
	}
	nodes, pods, err := testenv.DumpSimCluster(ctx, cp.Client)
	if err != nil {
		t.Fatal(err)
	}
	fixtures, err := testenv.SimFixtureDir()
	if err != nil {
		t.Fatal(err)
	}
	made := map[string][]byte{"nodes.yaml": nodes, "pods.yaml": pods, "latency.txt": testenv.SimLatencyFile()}
	if *updateSimFixtures {
		if err := os.MkdirAll(fixtures, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range made {
			if err := os.WriteFile(filepath.Join(fixtures, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("wrote %s (nodes.yaml %d bytes, pods.yaml %d bytes)", fixtures, len(nodes), len(pods))
		return
	}
	const regenerate = "regenerate them with `cd integration && go test ./testbed/e2e -run TestSimulateFixturesComeFromTheRecipe -args -update-simulate-fixtures`"
	for name, data := range made {
		stored, err := os.ReadFile(filepath.Join(fixtures, name))
		if err != nil {
			t.Fatalf("reading the simulate fixture: %v; %s", err, regenerate)
		}
		if name == "latency.txt" {
			if string(stored) != string(data) {
				t.Errorf("%s differs from the recipe's latency figures; %s", name, regenerate)
			}
			continue
		}
		want, got := withoutRunFields(t, data), withoutRunFields(t, stored)
		if len(want) != len(got) {
			t.Errorf("%s holds %d objects, the recipe makes %d; %s", name, len(got), len(want), regenerate)
			continue
		}
		for i := range want {
			if !reflect.DeepEqual(want[i], got[i]) {
				t.Errorf("%s item %d differs from what the apiserver made:\nstored: %v\nmade:   %v\n%s", name, i, got[i], want[i], regenerate)
				break
			}
		}
	}
}

// withoutRunFields decodes a List dump and drops what differs from run to
// run (uids, timestamps).
func withoutRunFields(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := yaml.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	for _, item := range list.Items {
		if meta, ok := item["metadata"].(map[string]any); ok {
			delete(meta, "uid")
			delete(meta, "creationTimestamp")
		}
	}
	return list.Items
}

// simulateConfig is the profile both tests below give kube-scheduler,
// schedplug-host and simulate: the three sample plugins, the in-tree Score
// plugins off and every node scored, so the nodes kube-scheduler picks from
// are exactly simulate's top nodes.
func simulateConfig(kubeconfig, latencyFile string) string {
	return fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: 200
  burst: 400
leaderElection:
  leaderElect: false
profiles:
  - schedulerName: default-scheduler
    percentageOfNodesToScore: 100
    plugins:
      multiPoint:
        enabled:
          - name: HwEncrypt
          - name: DedicatedNodes
          - name: NetworkLatency
            weight: 5
      score:
        disabled:
          - name: "*"
        enabled:
          - name: NetworkLatency
            weight: 5
    pluginConfig:
      - name: NetworkLatency
        args:
          latencyFile: %q
          defaultLatencyMs: 100
`, kubeconfig, latencyFile)
}

// cleanMeta prepares a fixture object to be created again.
func cleanMeta(m *metav1.ObjectMeta) {
	m.UID = ""
	m.ResourceVersion = ""
	m.CreationTimestamp = metav1.Time{}
}

// TestSimulateAgreesWithKubeScheduler runs one apiserver with
// kube-scheduler, the shim and schedplug-host (simulateConfig: the in-tree
// filters on, the in-tree Score plugins off, every node scored) and checks
// that `schedplug simulate`, which runs kube-scheduler itself on the
// dumps, predicts what it does with the same dumps:
//
//   - InTreePluginsDecide: the in-tree cluster
//     (integration/testbed/testdata/simulate-in-tree), where the CPU left on
//     a node and a taint decide: every placement and every FailedScheduling
//     message must be kube-scheduler's own. `--native-only` still gives the
//     answer the issue reported (vault-big on enc-1).
//   - FiveHundredPods: the 500 pending pods of the simulate fixture land
//     each on one of the nodes simulate reports as best for it (the node,
//     or one of a tie: kube-scheduler picks among a tie at random). The
//     sample plugins' verdicts and scores do not depend on the load, and
//     the nodes are large, so the order of the ties does not matter.
func TestSimulateAgreesWithKubeScheduler(t *testing.T) {
	fixtures, err := testenv.SimFixtureDir()
	if err != nil {
		t.Fatal(err)
	}
	pluginDir, err := testenv.PluginDir()
	if err != nil {
		t.Fatal(err)
	}
	latency := filepath.Join(fixtures, "latency.txt")
	simConfig := filepath.Join(t.TempDir(), "scheduler-config.yaml")
	if err := os.WriteFile(simConfig, []byte(simulateConfig("/dev/null", latency)), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startStackWith(t, stackOptions{ConfigYAML: func(kubeconfig string) string { return simulateConfig(kubeconfig, latency) }})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	simulate := func(dir string, more ...string) *testenv.SimResult {
		t.Helper()
		args := append([]string{"--config", simConfig, "--plugins", pluginDir,
			"--nodes", filepath.Join(dir, "nodes.yaml"), "--pods", filepath.Join(dir, "pods.yaml")}, more...)
		sim, _, err := testenv.RunSimulate(args...)
		if err != nil {
			t.Fatal(err)
		}
		return sim
	}

	t.Run("InTreePluginsDecide", func(t *testing.T) {
		dir, err := testenv.SimInTreeFixtureDir()
		if err != nil {
			t.Fatal(err)
		}
		if native := simulate(dir, "--native-only"); native.Pod("in-tree/vault-big").Node != "enc-1" {
			t.Errorf("--native-only: vault-big %+v; the native plugins alone put it on enc-1", native.Pod("in-tree/vault-big"))
		}
		sim := simulate(dir)
		if p := sim.Pod("in-tree/vault-big"); p.Status != "unschedulable" || !strings.Contains(p.Reason, "Insufficient cpu") {
			t.Errorf("vault-big: %+v; kube-scheduler keeps it Pending for want of CPU on enc-1", p)
		}
		checkDocExample(t, dir, pluginDir)
		nodes, pods, err := testenv.LoadSimFixtures(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := testenv.CreateNamespace(ctx, s.client, "in-tree"); err != nil {
			t.Fatal(err)
		}
		pending := createDump(ctx, t, s, nodes, pods)
		defer deleteDump(ctx, t, s, nodes, pods)
		// The placements first: once they are bound, no later event can
		// change the Pending pods' messages.
		placed := map[string]string{}
		for _, r := range sim.Pods {
			if r.Status == "placed" {
				placed[r.Pod[len("in-tree/"):]] = r.Node
			}
		}
		got, err := testenv.WaitForBound(ctx, s.client, "in-tree", slices.Collect(maps.Keys(placed)), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		for name, node := range placed {
			if got[name] != node {
				t.Errorf("pod in-tree/%s: kube-scheduler bound it to %q, simulate said %q", name, got[name], node)
			}
		}
		for _, r := range sim.Pods {
			switch r.Status {
			case "placed":
			case "unschedulable":
				// Waiting for simulate's words: a first attempt made before
				// kube-scheduler's cache held every node reads differently.
				if _, err := testenv.WaitForFailedScheduling(ctx, s.client, "in-tree", r.Pod[len("in-tree/"):], r.Reason, 30*time.Second); err != nil {
					t.Errorf("pod %s: kube-scheduler never said what simulate said: %v", r.Pod, err)
				}
			default:
				t.Errorf("pod %s: simulate says %s (%s)", r.Pod, r.Status, r.Reason)
			}
		}
		if len(placed) != 3 || len(sim.Pods) != len(pending) {
			t.Errorf("simulate placed %d of %d pods (summary %v); the fixture has 3 that fit of %d", len(placed), len(sim.Pods), sim.Summary, len(pending))
		}
	})

	t.Run("FiveHundredPods", func(t *testing.T) {
		sim := simulate(fixtures)
		if len(sim.Pods) != testenv.SimPods || sim.Summary["placed"] != testenv.SimPods {
			t.Fatalf("simulate: %d pods (summary %v); want %d placed pods", len(sim.Pods), sim.Summary, testenv.SimPods)
		}
		nodes, pods, err := testenv.LoadSimFixtures(fixtures)
		if err != nil {
			t.Fatal(err)
		}
		if err := testenv.CreatePriorityClasses(ctx, s.client, map[string]int32{testenv.SimPriorityClass: 1000}); err != nil {
			t.Fatal(err)
		}
		if err := testenv.CreateNamespace(ctx, s.client, testenv.SimNamespace); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range createDump(ctx, t, s, nodes, pods) {
			names = append(names, p.Name)
		}
		placed, err := testenv.WaitForBound(ctx, s.client, testenv.SimNamespace, names, 8*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		ties, mismatches := 0, 0
		for _, r := range sim.Pods {
			best := map[string]bool{r.Node: true}
			for _, n := range r.Tie {
				best[n] = true
			}
			if len(best) > 1 {
				ties++
			}
			name := r.Pod[len(testenv.SimNamespace)+1:]
			if got := placed[name]; !best[got] {
				mismatches++
				if mismatches <= 10 {
					t.Errorf("pod %s: kube-scheduler bound it to %q, but simulate's best nodes are %v (score %d)", r.Pod, got, keys(best), r.Score)
				}
			}
		}
		t.Logf("%d pods: kube-scheduler placed each on one of simulate's best nodes (%d of them ties), %d mismatches", len(sim.Pods), ties, mismatches)
	})
}

// checkDocExample runs docs/simulate.md's example (the fixture's own
// configuration, kube-scheduler deciding) and finds its output there.
func checkDocExample(t *testing.T, dir, pluginDir string) {
	t.Helper()
	out, code, err := testenv.RunSimulateText("--config", filepath.Join(dir, "scheduler-config.yaml"), "--plugins", pluginDir,
		"--nodes", filepath.Join(dir, "nodes.yaml"), "--pods", filepath.Join(dir, "pods.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "simulate.md"))
	if err != nil {
		t.Fatal(err)
	}
	if code != 1 || !strings.Contains(string(doc), "```\n"+out+"```") {
		t.Errorf("docs/simulate.md's kube-scheduler example differs from this run (exit %d):\n%s", code, out)
	}
}

// createDump creates a dump's nodes and its bound and finished pods (the
// scheduler's cache sees them before any pending pod), then its pending
// pods in the dump's order, which it returns.
func createDump(ctx context.Context, t *testing.T, s *stack, nodes []corev1.Node, pods []corev1.Pod) []*corev1.Pod {
	t.Helper()
	fresh := make([]*corev1.Node, len(nodes))
	for i := range nodes {
		fresh[i] = nodes[i].DeepCopy()
		cleanMeta(&fresh[i].ObjectMeta)
	}
	s.createNodes(ctx, fresh...)
	var pending []*corev1.Pod
	for i := range pods {
		p := pods[i].DeepCopy()
		cleanMeta(&p.ObjectMeta)
		if p.Spec.NodeName == "" {
			pending = append(pending, p)
			continue
		}
		phase := p.Status.Phase
		created, err := s.client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if phase == corev1.PodSucceeded || phase == corev1.PodFailed {
			created.Status.Phase = phase
			if _, err := s.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, p := range pending {
		if err := testenv.CreatePods(ctx, s.client, p); err != nil {
			t.Fatal(err)
		}
	}
	return pending
}

// deleteDump removes what createDump made, so the next part of a test
// starts from an empty cluster.
func deleteDump(ctx context.Context, t *testing.T, s *stack, nodes []corev1.Node, pods []corev1.Pod) {
	t.Helper()
	now := metav1.DeleteOptions{GracePeriodSeconds: new(int64)}
	for _, p := range pods {
		if err := s.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, now); err != nil {
			t.Errorf("deleting pod %s/%s: %v", p.Namespace, p.Name, err)
		}
	}
	for _, n := range nodes {
		if err := s.client.CoreV1().Nodes().Delete(ctx, n.Name, now); err != nil {
			t.Errorf("deleting node %s: %v", n.Name, err)
		}
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
