// The cluster behind `schedplug simulate`'s fixtures: its recipe, the dump
// trimmed into fixture files, and RunSimulate over them. One file: the recipe's
// names and counts are what the fixtures and results are checked against.

package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// The cluster behind `schedplug simulate`'s fixtures
// (integration/testbed/testdata/simulate): SimNodes nodes and SimPods pending pods,
// plus SimBoundPods pods already bound and SimFinishedPods that have
// finished, made by a real kube-apiserver from the recipe below.
const (
	SimNamespace     = "sim"
	SimNodes         = 100
	SimPods          = 500
	SimBoundPods     = 100
	SimFinishedPods  = 5
	SimPriorityClass = "sim-high"
)

// SimFixtureDir is integration/testbed/testdata/simulate.
func SimFixtureDir() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "integration", "testbed", "testdata", "simulate"), nil
}

// SimInTreeFixtureDir is integration/testbed/testdata/simulate-in-tree:
// the in-tree cluster, where kube-scheduler's in-tree filters decide.
func SimInTreeFixtureDir() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "integration", "testbed", "testdata", "simulate-in-tree"), nil
}

// CLIBinary is the schedplug CLI: $SCHEDPLUG_CLI_BIN, or
// build/tools/schedplug/schedplug.
func CLIBinary() (string, error) {
	return binaryFromEnv("SCHEDPLUG_CLI_BIN", filepath.Join("build", "tools", "schedplug", "schedplug"), "the schedplug CLI")
}

// SimTestPluginDir holds the test plugins of `schedplug simulate`'s tests
// (FreeCpu reads a node's free cpu, GoodScorer its pod count, PodsOnNode
// its pods):
// $SCHEDPLUG_SIM_PLUGIN_DIR, or build/tools/schedplug/tests/sim.d.
func SimTestPluginDir() (string, error) {
	dir := os.Getenv("SCHEDPLUG_SIM_PLUGIN_DIR")
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "build", "tools", "schedplug", "tests", "sim.d")
	}
	for _, so := range []string{"free_cpu.so", "good_scorer.so"} {
		if _, err := os.Stat(filepath.Join(dir, so)); err != nil {
			return "", fmt.Errorf("test plugin %s is missing from %s: %s", so, dir, BuildHint)
		}
	}
	return filepath.Abs(dir)
}

// SimLatency is the recipe's network latency of node i in milliseconds
// (integration/testbed/testdata/simulate/latency.txt): 1 to 34 ms, most figures
// shared by two or three nodes, so some pods have one best node and others
// a tie.
func SimLatency(i int) int {
	return 1 + ((i*37)%100)/3
}

// SimNodeName is the name of the recipe's node i.
func SimNodeName(i int) string { return fmt.Sprintf("node-%03d", i) }

// SimLatencyFile is latency.txt for the recipe's nodes.
func SimLatencyFile() []byte {
	var b bytes.Buffer
	b.WriteString("# network latency of the simulate fixture's nodes, in milliseconds\n")
	for i := 0; i < SimNodes; i++ {
		fmt.Fprintf(&b, "%s %d\n", SimNodeName(i), SimLatency(i))
	}
	return b.Bytes()
}

func simNode(i int) *corev1.Node {
	labels := map[string]string{"topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%3)}
	if i%4 == 0 {
		labels["node.kubernetes.io/hw-encrypt"] = "true"
	}
	if i%10 == 5 {
		labels["schedplug.io/dedicated"] = "true"
	}
	// Large enough that kube-scheduler's in-tree NodeResourcesFit never
	// turns a pod away even when the latency sends many to one node.
	cpu := "256"
	if i%2 == 1 {
		cpu = "512"
	}
	n := MakeNode(SimNodeName(i), NodeResources{CPU: cpu, Memory: "256Gi", Pods: 500}, labels)
	if i%5 == 0 {
		q := resource.MustParse("4")
		n.Status.Capacity["example.com/gpu"] = q
		n.Status.Allocatable["example.com/gpu"] = q
	}
	if i%7 == 3 {
		n.Spec.Taints = []corev1.Taint{{Key: "example.com/slow", Effect: corev1.TaintEffectPreferNoSchedule}}
	}
	n.Annotations = map[string]string{"example.com/rack": fmt.Sprintf("r%d", i/10)}
	return n
}

func simPod(name string, i int, bound bool) *corev1.Pod {
	zero := int64(0)
	requests := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(fmt.Sprintf("%dm", 50*(1+i%10))),
		corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", 64*(1+i%4))),
	}
	var limits corev1.ResourceList
	if bound && i%11 == 0 {
		// Extended resources need requests equal to limits. Only on bound
		// pods: kube-scheduler's in-tree NodeResourcesFit would keep a
		// pending one off the nodes without it, which the native plugins
		// do not see.
		requests["example.com/gpu"] = resource.MustParse("1")
		limits = corev1.ResourceList{"example.com/gpu": resource.MustParse("1")}
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: SimNamespace, Name: name, Labels: map[string]string{"app": fmt.Sprintf("app-%d", i%7)}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: &zero,
			Containers: []corev1.Container{{
				Name: "app", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits},
			}},
		},
	}
	annotations := map[string]string{}
	if i%5 == 0 {
		annotations["myorg.io/require-hw-encrypt"] = "true"
	}
	if i%8 == 0 {
		annotations["schedplug.io/dedicated-ok"] = "true"
	}
	if len(annotations) > 0 {
		p.Annotations = annotations
	}
	always := corev1.ContainerRestartPolicyAlways
	if i%9 == 0 {
		p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{
			Name: "sidecar", Image: "registry.k8s.io/pause:3.10", RestartPolicy: &always,
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
		})
	}
	if i%6 == 0 {
		p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{
			Name: "init", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		})
	}
	if i%7 == 0 {
		p.Spec.Tolerations = []corev1.Toleration{{Key: "example.com/slow", Operator: corev1.TolerationOpExists}}
	}
	if i%13 == 0 {
		p.Spec.PriorityClassName = SimPriorityClass
	}
	return p
}

// CreateSimCluster creates the recipe's priority class, namespace, nodes,
// bound pods and finished pods, and, when pending is true, its pending
// pods (in order).
func CreateSimCluster(ctx context.Context, c kubernetes.Interface, pending bool) error {
	if err := CreatePriorityClasses(ctx, c, map[string]int32{SimPriorityClass: 1000}); err != nil {
		return err
	}
	if err := CreateNamespace(ctx, c, SimNamespace); err != nil {
		return err
	}
	for i := 0; i < SimNodes; i++ {
		if err := CreateNodes(ctx, c, simNode(i)); err != nil {
			return err
		}
	}
	for i := 0; i < SimBoundPods+SimFinishedPods; i++ {
		name := fmt.Sprintf("bound-%03d", i)
		if i >= SimBoundPods {
			name = fmt.Sprintf("done-%03d", i-SimBoundPods)
		}
		p := simPod(name, i*3+1, true)
		p.Spec.NodeName = SimNodeName((i * 37) % SimNodes)
		created, err := c.CoreV1().Pods(SimNamespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating pod %s/%s: %w", SimNamespace, name, err)
		}
		if i >= SimBoundPods {
			created.Status.Phase = corev1.PodSucceeded
			if _, err := c.CoreV1().Pods(SimNamespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("marking pod %s/%s Succeeded: %w", SimNamespace, name, err)
			}
		}
	}
	if !pending {
		return nil
	}
	for i := 0; i < SimPods; i++ {
		if err := CreatePods(ctx, c, simPod(fmt.Sprintf("pod-%03d", i), i, false)); err != nil {
			return err
		}
	}
	return nil
}

// dropPaths removes the listed keys (dotted paths) from obj.
func dropPaths(obj map[string]any, paths ...string) {
	for _, p := range paths {
		parts := strings.Split(p, ".")
		m := obj
		for i, part := range parts {
			if i == len(parts)-1 {
				delete(m, part)
				break
			}
			next, ok := m[part].(map[string]any)
			if !ok {
				break
			}
			m = next
		}
	}
}

// trimForFixture keeps what a scheduler reads and drops the bulk kubectl
// prints besides (managed fields, node images and conditions, defaulted
// container fields, service-account volumes).
func trimForFixture(obj map[string]any) {
	dropPaths(obj, "metadata.managedFields", "metadata.resourceVersion", "metadata.generation",
		"status.conditions", "status.images", "status.nodeInfo", "status.daemonEndpoints", "status.addresses",
		"status.qosClass", "status.startTime", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs",
		"status.containerStatuses",
		"spec.volumes", "spec.dnsPolicy", "spec.restartPolicy", "spec.securityContext", "spec.enableServiceLinks",
		"spec.serviceAccount", "spec.serviceAccountName", "spec.terminationGracePeriodSeconds",
		"spec.preemptionPolicy")
	spec, _ := obj["spec"].(map[string]any)
	for _, key := range []string{"containers", "initContainers"} {
		list, _ := spec[key].([]any)
		for _, c := range list {
			if cm, ok := c.(map[string]any); ok {
				dropPaths(cm, "volumeMounts", "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy")
			}
		}
	}
}

// kubectlList renders objects the way `kubectl get ... -o yaml` does: a v1
// List with each item's apiVersion and kind, keys sorted.
func kubectlList(kind string, objects []any) ([]byte, error) {
	var items []any
	for _, o := range objects {
		data, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, err
		}
		m["apiVersion"] = "v1"
		m["kind"] = kind
		trimForFixture(m)
		items = append(items, m)
	}
	return yaml.Marshal(map[string]any{
		"apiVersion": "v1",
		"kind":       "List",
		"items":      items,
		"metadata":   map[string]any{"resourceVersion": ""},
	})
}

// DumpSimCluster lists the nodes and the sim namespace's pods (sorted by
// name, as kubectl prints them) as `kubectl get nodes -o yaml` and
// `kubectl get pods -n sim -o yaml` would, trimmed.
func DumpSimCluster(ctx context.Context, c kubernetes.Interface) (nodes, pods []byte, err error) {
	nl, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("listing nodes: %w", err)
	}
	pl, err := c.CoreV1().Pods(SimNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("listing pods: %w", err)
	}
	return DumpObjects(nl.Items, pl.Items)
}

// DumpObjects renders nodes and pods (sorted by name, as kubectl prints
// them) as `kubectl get nodes -o yaml` and `kubectl get pods -o yaml`
// would, trimmed: what `schedplug simulate` reads.
func DumpObjects(nodeList []corev1.Node, podList []corev1.Pod) (nodes, pods []byte, err error) {
	sort.Slice(nodeList, func(i, j int) bool { return nodeList[i].Name < nodeList[j].Name })
	var objs []any
	for i := range nodeList {
		objs = append(objs, &nodeList[i])
	}
	if nodes, err = kubectlList("Node", objs); err != nil {
		return nil, nil, err
	}
	sort.Slice(podList, func(i, j int) bool { return podList[i].Name < podList[j].Name })
	objs = nil
	for i := range podList {
		objs = append(objs, &podList[i])
	}
	if pods, err = kubectlList("Pod", objs); err != nil {
		return nil, nil, err
	}
	return nodes, pods, nil
}

// LoadSimFixtures reads nodes.yaml and pods.yaml of dir into API objects.
func LoadSimFixtures(dir string) ([]corev1.Node, []corev1.Pod, error) {
	var nl corev1.NodeList
	var pl corev1.PodList
	for file, into := range map[string]any{"nodes.yaml": &nl, "pods.yaml": &pl} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return nil, nil, fmt.Errorf("reading the simulate fixture: %w", err)
		}
		if err := yaml.Unmarshal(data, into); err != nil {
			return nil, nil, fmt.Errorf("decoding %s: %w", filepath.Join(dir, file), err)
		}
	}
	return nl.Items, pl.Items, nil
}

// SimResult is `schedplug simulate --json` output (docs/simulate.md).
type SimResult struct {
	Scheduler string `json:"scheduler"`
	Profiles  []struct {
		Name    string   `json:"name"`
		Filters []string `json:"filters"`
		Scores  []struct {
			Plugin string `json:"plugin"`
			Weight int64  `json:"weight"`
		} `json:"scores"`
	} `json:"profiles"`
	Pods    []SimPod `json:"pods"`
	Evicted []struct {
		Pod  string `json:"pod"`
		Node string `json:"node"`
		By   string `json:"by"`
	} `json:"evicted"`
	Summary map[string]int `json:"summary"`
}

// SimPod is one pending pod of SimResult.
type SimPod struct {
	Pod           string   `json:"pod"`
	Status        string   `json:"status"`
	Node          string   `json:"node"`
	Tie           []string `json:"tie"`
	Score         int64    `json:"score"`
	Scored        bool     `json:"scored"`
	FeasibleNodes int      `json:"feasible_nodes"`
	Reason        string   `json:"reason"`
	NominatedNode string   `json:"nominated_node"`
	// The same rows as `schedplug explain` prints (ExplainNode).
	Explain []ExplainNode `json:"explain"`
}

// Pod is the result for the pod "namespace/name" (zero if none).
func (r *SimResult) Pod(key string) SimPod {
	for _, p := range r.Pods {
		if p.Pod == key {
			return p
		}
	}
	return SimPod{}
}

// RunSimulate runs `schedplug simulate --json` with args and decodes its
// output; exit status 0 and 1 are results, anything else an error.
func RunSimulate(args ...string) (*SimResult, int, error) {
	out, code, err := RunSimulateText(append([]string{"--json"}, args...)...)
	if err != nil {
		return nil, code, err
	}
	var r SimResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		return nil, code, fmt.Errorf("decoding schedplug simulate's JSON: %w", err)
	}
	return &r, code, nil
}

// RunSimulateText runs `schedplug simulate` with args and returns what it
// printed; exit status 0 and 1 are results, anything else an error with
// its stderr.
func RunSimulateText(args ...string) (string, int, error) {
	bin, err := CLIBinary()
	if err != nil {
		return "", 0, err
	}
	cmd := exec.Command(bin, append([]string{"simulate"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return "", 0, fmt.Errorf("running %s: %w", bin, err)
	}
	if code != 0 && code != 1 {
		return "", code, fmt.Errorf("schedplug simulate exited %d: %s", code, stderr.String())
	}
	return stdout.String(), code, nil
}
