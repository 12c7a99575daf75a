package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
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

// TestSimulateAgreesWithKubeScheduler loads the fixtures into a real
// apiserver, lets kube-scheduler (with the shim and schedplug-host) place
// the 500 pending pods, and checks that every pod went to one of the nodes
// `schedplug simulate` reports as best for it on the same dumps (the node,
// or one of a tie). The sample plugins' verdicts and scores do not depend
// on the load, so the order in which kube-scheduler takes the pods does
// not matter.
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
	sim, code, err := testenv.RunSimulate("--config", simConfig, "--plugins", pluginDir,
		"--nodes", filepath.Join(fixtures, "nodes.yaml"), "--pods", filepath.Join(fixtures, "pods.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || len(sim.Pods) != testenv.SimPods {
		t.Fatalf("simulate: exit %d, %d pods (summary %v); want exit 0 and %d placed pods", code, len(sim.Pods), sim.Summary, testenv.SimPods)
	}

	nodes, pods, err := testenv.LoadSimFixtures(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	s := startStackWith(t, stackOptions{ConfigYAML: func(kubeconfig string) string { return simulateConfig(kubeconfig, latency) }})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := testenv.CreatePriorityClasses(ctx, s.client, map[string]int32{testenv.SimPriorityClass: 1000}); err != nil {
		t.Fatal(err)
	}
	if err := testenv.CreateNamespace(ctx, s.client, testenv.SimNamespace); err != nil {
		t.Fatal(err)
	}
	for i := range nodes {
		n := nodes[i].DeepCopy()
		cleanMeta(&n.ObjectMeta)
		if err := testenv.CreateNodes(ctx, s.client, n); err != nil {
			t.Fatal(err)
		}
	}
	// Bound and finished pods first (the scheduler's cache sees them
	// before any pending pod), then the pending ones.
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
	var names []string
	for _, p := range pending {
		if err := testenv.CreatePods(ctx, s.client, p); err != nil {
			t.Fatal(err)
		}
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
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
