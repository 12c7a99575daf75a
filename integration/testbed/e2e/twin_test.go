// TestGoTwinDifferential: native plugins and their Go twins on one random
// cluster that twinWorkload grows and changes while pods are scheduled. One
// file: the workload's steps are the test's own and share its random source and
// its lists of nodes and live pods.

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"schedplug.dev/integration/testbed/testenv"
	"schedplug.dev/integration/testbed/twin"
)

// Knobs of the Go twin test. Only the size changes between the short run
// (always part of the test command) and a soak run.
const (
	envTwinPods = "SCHEDPLUG_TWIN_PODS" // pods to create (default 300)
	envTwinSeed = "SCHEDPLUG_TWIN_SEED" // the random cluster's seed (default: the clock)
)

// The twin test's DedicatedNodes keys: non-default args, so that both
// implementations are shown to read their args; nodes also carry the
// default key as a decoy that both must ignore.
const (
	twinDedicatedLabel      = "twin.example/dedicated"
	twinDedicatedAnnotation = "twin.example/dedicated-ok"
	twinTaintKey            = "twin.example/maintenance"
)

// TestGoTwinDifferential runs HwEncrypt and DedicatedNodes twice in one
// profile: natively through the shim and host, and as their Go twins
// (internal/twin) under the names GoHwEncrypt and GoDedicatedNodes.
// TwinCheck, the first Filter of the profile, asks both of every pair about
// every node kube-scheduler filters - snapshot NodeInfos and the what-if
// NodeInfos of preemption dry runs and nominated-pod passes - and notes
// every difference in verdict or reason. The cluster is random (seeded):
// node labels with near-miss values, taints, sizes; pods with and without
// the annotations, near-miss values, three priorities so preemption and
// nominated pods happen; nodes relabelled, tainted, deleted and added while
// pods are scheduled; pods deleted to keep the cluster over-full. The test
// fails listing each divergence (pod, node, both verdicts) with the seed.
//
// SCHEDPLUG_TWIN_PODS=10000 makes it a soak run; SCHEDPLUG_TWIN_SEED
// replays a cluster.
func TestGoTwinDifferential(t *testing.T) {
	pods := 300
	if v := os.Getenv(envTwinPods); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number of pods", envTwinPods, v)
		}
		pods = n
	}
	seed := time.Now().UnixNano()
	if v := os.Getenv(envTwinSeed); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want an integer seed", envTwinSeed, v)
		}
		seed = n
	}
	t.Logf("Go twin: %d pods, seed %d (replay with %s=%d %s=%d)", pods, seed, envTwinSeed, seed, envTwinPods, pods)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("Go twin failed with seed %d: replay with %s=%d %s=%d", seed, envTwinSeed, seed, envTwinPods, pods)
		}
	})

	dnArgs := map[string]any{"nodeLabel": twinDedicatedLabel, "podAnnotation": twinDedicatedAnnotation}
	// A generous timeout: a host call that times out on a loaded machine
	// would show as a divergence (the shim's failurePolicy reason).
	natives := []testenv.NativePlugin{
		{Name: "HwEncrypt", FailurePolicy: "Fail", Timeout: "10s"},
		{Name: "DedicatedNodes", Args: dnArgs, FailurePolicy: "Fail", Timeout: "10s"},
	}
	report := filepath.Join(t.TempDir(), "twin-divergences.jsonl")
	s := startStackWith(t, stackOptions{
		Plugins: append([]testenv.NativePlugin{{Name: twin.CheckName, Args: map[string]any{"pairs": []twin.Pair{
			{Native: "HwEncrypt", Twin: "GoHwEncrypt"},
			{Native: "DedicatedNodes", Twin: "GoDedicatedNodes"},
		}, "report": report}}}, append(natives,
			testenv.NativePlugin{Name: "GoHwEncrypt"},
			testenv.NativePlugin{Name: "GoDedicatedNodes", Args: dnArgs})...),
		HostPlugins: natives,
		FilterFirst: []string{twin.CheckName},
		ClientQPS:   500,
		Twin:        true,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Minute)
	defer cancel()
	client := fastClient(t, s.cp.Config)
	ns := "twin"
	s.must(testenv.CreateNamespace(ctx, client, ns))
	s.must(testenv.CreatePriorityClasses(ctx, client, map[string]int32{"low": 100, "mid": 1000, "high": 10000}))

	w := &twinWorkload{t: t, ctx: ctx, c: client, ns: ns, rng: rand.New(rand.NewSource(seed))}
	nodes := 12 + pods/1000
	for i := 0; i < nodes; i++ {
		w.addNode()
	}
	// One roomy dedicated node the random changes never touch, so that
	// every seed exercises both of DedicatedNodes' verdicts (some seeds
	// left no dedicated node a pod could reach, and nothing to compare).
	anchor := testenv.MakeNode("node-dedicated", testenv.NodeResources{CPU: "64", Memory: "256Gi", Pods: 110},
		map[string]string{"topology.kubernetes.io/zone": "zone-0", twinDedicatedLabel: "true"})
	s.must(testenv.CreateNodes(ctx, client, anchor))
	start := time.Now()
	liveLimit := 10 * nodes
	for i := 0; i < pods; i++ {
		w.createPod(i)
		if len(w.live) > liveLimit {
			w.deleteOldestPod()
		}
		if i%20 == 19 {
			w.mutateCluster()
		}
		if i%1000 == 999 {
			t.Logf("%d pods created in %s", i+1, time.Since(start).Round(time.Second))
		}
	}
	created := time.Since(start)
	// Let kube-scheduler finish what is queued: nothing active or backing
	// off (what remains is unschedulable and would only be retried).
	s.must(waitQueueSettled(ctx, s.scheduler))
	elapsed := time.Since(start)

	text, err := s.scheduler.Metrics()
	s.must(err)
	compared, _ := testenv.MetricSum(text, "schedplug_twin_comparisons_total")
	diverged, _ := testenv.MetricSum(text, "schedplug_twin_divergences_total")
	podsCompared, _ := testenv.MetricSum(text, "schedplug_twin_pods_compared")
	whatIf := metricWith(text, "schedplug_twin_comparisons_total", `kind="what-if"`)
	preemptions, _ := testenv.MetricSum(text, "scheduler_preemption_attempts_total")
	placed, err := testenv.Placements(ctx, client, ns)
	s.must(err)
	t.Logf("Go twin: %d pods created in %s, settled after %s; %v pods compared, %v verdict pairs (%v on what-if NodeInfos), %v divergences; %d nodes added, %d relabelled, %d taint changes, %d deleted; %d pods deleted; %v preemption attempts; at the end %d pods exist, %d bound",
		pods, created.Round(time.Second), elapsed.Round(time.Second), podsCompared, compared, whatIf, diverged,
		w.nodesAdded, w.relabels, w.taintChanges, w.nodesDeleted, w.podsDeleted, preemptions, len(placed), countBound(placed))
	for _, plugin := range []string{"HwEncrypt", "DedicatedNodes"} {
		for _, code := range []string{"Success", "UnschedulableAndUnresolvable"} {
			n := metricWith(text, "schedplug_twin_comparisons_total", `plugin="`+plugin+`"`, `code="`+code+`"`)
			t.Logf("  %s: %v verdicts %s compared", plugin, n, code)
			if n == 0 {
				t.Errorf("no %s verdict of %s was compared: the random cluster did not exercise it", code, plugin)
			}
		}
	}
	if whatIf == 0 {
		t.Errorf("no verdict on a what-if NodeInfo (preemption dry run or nominated pods) was compared: the priorities did not cause preemption")
	}

	divs := readDivergences(t, report)
	if len(divs) > 0 || diverged > 0 {
		var b strings.Builder
		for i, d := range divs {
			if i == 100 {
				fmt.Fprintf(&b, "\n  ... and %d more (the scheduler log has them all)", len(divs)-i)
				break
			}
			fmt.Fprintf(&b, "\n  %s", d)
		}
		t.Errorf("native plugins and their Go twins disagreed %v times (seed %d):%s", diverged, seed, b.String())
	}
	if !s.scheduler.Running() {
		t.Errorf("kube-scheduler exited: %v", s.scheduler.ExitError())
	}
}

// twinWorkload makes the random cluster.
type twinWorkload struct {
	t   *testing.T
	ctx context.Context
	c   kubernetes.Interface
	ns  string
	rng *rand.Rand

	nodes    []string // existing nodes
	nextNode int
	live     []string // pods created and not deleted, oldest first

	nodesAdded, nodesDeleted, relabels, taintChanges, podsDeleted int
}

// pick returns one of the values, weighted.
func (w *twinWorkload) pick(choices ...weighted) string {
	total := 0
	for _, c := range choices {
		total += c.weight
	}
	r := w.rng.Intn(total)
	for _, c := range choices {
		if r < c.weight {
			return c.value
		}
		r -= c.weight
	}
	return choices[len(choices)-1].value
}

type weighted struct {
	value  string
	weight int
}

const absent = "\x00absent"

// neighbourKeys sort right before or after the keys the plugins read.
var neighbourKeys = []string{
	"myorg.io/require-hw-encryp", "myorg.io/require-hw-encrypt-x", "myorg.io/require-hw-encrypt0",
	"twin.example/dedicated", "twin.example/dedicated-ok0", "twin.example/dedicated-o", "a", "zz",
}

func (w *twinWorkload) hwLabels(labels map[string]string) {
	delete(labels, hwLabel)
	delete(labels, "node.kubernetes.io/HW-Encrypt")
	switch v := w.pick(weighted{absent, 35}, weighted{"true", 40}, weighted{"false", 10}, weighted{"True", 5}, weighted{"case-key", 5}, weighted{"", 5}); v {
	case absent:
	case "case-key":
		labels["node.kubernetes.io/HW-Encrypt"] = "true"
	default:
		labels[hwLabel] = v
	}
}

func (w *twinWorkload) dedicatedLabels(labels map[string]string) {
	delete(labels, twinDedicatedLabel)
	delete(labels, dedicatedLabel)
	switch v := w.pick(weighted{absent, 55}, weighted{"true", 25}, weighted{"false", 5}, weighted{"TRUE", 5}, weighted{"default-key", 10}); v {
	case absent:
	case "default-key":
		labels[dedicatedLabel] = "true" // the default key, which these args do not use
	default:
		labels[twinDedicatedLabel] = v
	}
}

func (w *twinWorkload) addNode() {
	name := fmt.Sprintf("node-%03d", w.nextNode)
	w.nextNode++
	labels := map[string]string{"topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", w.rng.Intn(3))}
	for _, k := range []string{"node.kubernetes.io/hw-encryp", "node.kubernetes.io/hw-encrypt-x", "twin.example/dedicate", "twin.example/dedicated0"} {
		if w.rng.Intn(4) == 0 {
			labels[k] = "true"
		}
	}
	w.hwLabels(labels)
	w.dedicatedLabels(labels)
	cpu := []string{"2", "3", "4"}[w.rng.Intn(3)]
	node := testenv.MakeNode(name, testenv.NodeResources{CPU: cpu, Memory: "16Gi", Pods: 110}, labels)
	if w.rng.Intn(100) < 15 {
		node.Spec.Taints = []corev1.Taint{{Key: twinTaintKey, Value: "x", Effect: corev1.TaintEffectNoSchedule}}
	}
	if err := testenv.CreateNodes(w.ctx, w.c, node); err != nil {
		w.t.Fatal(err)
	}
	w.nodes = append(w.nodes, name)
	w.nodesAdded++
}

// mutateCluster changes one node: new labels, a taint toggled, deleted, or
// a node added.
func (w *twinWorkload) mutateCluster() {
	if len(w.nodes) == 0 {
		w.addNode()
		return
	}
	i := w.rng.Intn(len(w.nodes))
	name := w.nodes[i]
	switch op := w.rng.Intn(10); {
	case op < 5:
		w.updateNode(name, func(n *corev1.Node) {
			if w.rng.Intn(2) == 0 {
				w.hwLabels(n.Labels)
			} else {
				w.dedicatedLabels(n.Labels)
			}
		})
		w.relabels++
	case op < 7:
		w.updateNode(name, func(n *corev1.Node) {
			if len(n.Spec.Taints) > 0 {
				n.Spec.Taints = nil
			} else {
				n.Spec.Taints = []corev1.Taint{{Key: twinTaintKey, Value: "x", Effect: corev1.TaintEffectNoSchedule}}
			}
		})
		w.taintChanges++
	case op < 8 && len(w.nodes) > 6:
		err := w.c.CoreV1().Nodes().Delete(w.ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			w.t.Fatalf("deleting node %s: %v", name, err)
		}
		w.nodes = append(w.nodes[:i], w.nodes[i+1:]...)
		w.nodesDeleted++
	default:
		w.addNode()
	}
}

func (w *twinWorkload) updateNode(name string, change func(*corev1.Node)) {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := w.c.CoreV1().Nodes().Get(w.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		change(n)
		_, err = w.c.CoreV1().Nodes().Update(w.ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		w.t.Fatalf("updating node %s: %v", name, err)
	}
}

func (w *twinWorkload) createPod(i int) {
	ann := map[string]string{}
	switch v := w.pick(weighted{absent, 40}, weighted{"true", 30}, weighted{"false", 8}, weighted{"yes", 3}, weighted{"TRUE", 3},
		weighted{"", 3}, weighted{" true", 3}, weighted{"true\x00", 2}, weighted{"trué", 2}, weighted{"case-key", 6}); v {
	case absent:
	case "case-key":
		ann["myorg.io/Require-HW-Encrypt"] = "true"
	default:
		ann[hwAnnotation] = v
	}
	switch v := w.pick(weighted{absent, 55}, weighted{"true", 30}, weighted{"false", 5}, weighted{"True", 5}, weighted{"true\x00", 2}, weighted{"default-key", 5}); v {
	case absent:
	case "default-key":
		ann[dedicatedAnnotation] = "true"
	default:
		ann[twinDedicatedAnnotation] = v
	}
	// Neighbours of the keys the plugins look up (they binary-search a
	// sorted list on the native side).
	for _, k := range neighbourKeys {
		if w.rng.Intn(4) == 0 {
			ann[k] = "true"
		}
	}
	spec := testenv.PodSpec{
		Name:        fmt.Sprintf("pod-%05d", i),
		Annotations: ann,
		CPU:         []string{"100m", "250m", "500m", "1"}[w.rng.Intn(4)],
		Priority:    w.pick(weighted{"low", 50}, weighted{"mid", 35}, weighted{"high", 15}),
	}
	if w.rng.Intn(100) < 5 {
		spec.NodeSelector = map[string]string{"topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", w.rng.Intn(3))}
	}
	pod := testenv.MakePod(w.ns, spec)
	if w.rng.Intn(100) < 30 {
		pod.Spec.Tolerations = []corev1.Toleration{{Key: twinTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	}
	if err := testenv.CreatePods(w.ctx, w.c, pod); err != nil {
		w.t.Fatal(err)
	}
	w.live = append(w.live, spec.Name)
}

func (w *twinWorkload) deleteOldestPod() {
	name := w.live[0]
	w.live = w.live[1:]
	err := w.c.CoreV1().Pods(w.ns).Delete(w.ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		w.t.Fatalf("deleting pod %s: %v", name, err)
	}
	w.podsDeleted++
}

// fastClient is a client without client-go's default 5 QPS limit.
func fastClient(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = 2000, 4000
	client, err := kubernetes.NewForConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// waitQueueSettled waits until kube-scheduler has no pod in its active or
// backoff queue on two polls in a row.
func waitQueueSettled(ctx context.Context, s *testenv.Scheduler) error {
	quiet := 0
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 20*time.Minute, true, func(context.Context) (bool, error) {
		text, err := s.Metrics()
		if err != nil {
			return false, nil
		}
		active := metricWith(text, "scheduler_pending_pods", `queue="active"`)
		backoff := metricWith(text, "scheduler_pending_pods", `queue="backoff"`)
		last = fmt.Sprintf("active %v, backoff %v", active, backoff)
		if active == 0 && backoff == 0 {
			quiet++
		} else {
			quiet = 0
		}
		return quiet >= 2, nil
	})
	if err != nil {
		return fmt.Errorf("kube-scheduler's queue did not settle (%s): %w", last, err)
	}
	return nil
}

// metricWith adds up the samples of metric whose labels contain every
// given `name="value"` text.
func metricWith(exposition, metric string, labels ...string) float64 {
	sum := 0.0
	for _, line := range strings.Split(exposition, "\n") {
		if !strings.HasPrefix(line, metric+"{") {
			continue
		}
		ok := true
		for _, l := range labels {
			if !strings.Contains(line, l) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		fields := strings.Fields(line[strings.LastIndex(line, "}")+1:])
		if len(fields) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(fields[0], 64); err == nil {
			sum += v
		}
	}
	return sum
}

func readDivergences(t *testing.T, file string) []twin.Divergence {
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading the divergence report: %v", err)
	}
	defer f.Close()
	var out []twin.Divergence
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var d twin.Divergence
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Errorf("bad line in the divergence report %s: %v: %s", file, err, sc.Text())
			continue
		}
		out = append(out, d)
	}
	return out
}
