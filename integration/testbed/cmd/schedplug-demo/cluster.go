package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"schedplug.dev/integration/scheduler/simulate"
	"schedplug.dev/integration/testbed/testenv"
)

const (
	namespace = "demo"

	hwAnnotation        = "myorg.io/require-hw-encrypt"
	hwLabel             = "node.kubernetes.io/hw-encrypt"
	dedicatedLabel      = "schedplug.io/dedicated"
	dedicatedAnnotation = "schedplug.io/dedicated-ok"
)

type demoNode struct {
	name   string
	labels map[string]string
	cpu    string
}

// Six nodes: two with hardware encryption (node-b a small one), one
// dedicated, three plain. Their latency figures are in
// config/demo/latency.txt.
var demoNodes = []demoNode{
	{"node-a", map[string]string{hwLabel: "true"}, "8"},
	{"node-b", map[string]string{hwLabel: "true"}, "4"},
	{"node-c", nil, "8"},
	{"node-d", nil, "8"},
	{"node-e", map[string]string{dedicatedLabel: "true"}, "8"},
	{"node-f", nil, "8"},
}

type demoPod struct {
	spec testenv.PodSpec
	want string // what the pod asks for, in words
}

var demoPods = []demoPod{
	{testenv.PodSpec{Name: "web-1", CPU: "500m"}, "nothing special"},
	{testenv.PodSpec{Name: "web-2", CPU: "500m"}, "nothing special"},
	{testenv.PodSpec{Name: "payments-1", CPU: "1", Annotations: map[string]string{hwAnnotation: "true"}}, "hardware encryption"},
	{testenv.PodSpec{Name: "payments-2", CPU: "1", Annotations: map[string]string{hwAnnotation: "true"}}, "hardware encryption"},
	{testenv.PodSpec{Name: "batch-owner", CPU: "1", Annotations: map[string]string{dedicatedAnnotation: "true"}}, "may use dedicated nodes"},
	// Fits no node: the encrypted ones are too small (or already busy), the
	// big ones lack encryption. Created last, so it is scheduled last.
	{testenv.PodSpec{Name: "vault", CPU: "7500m", Annotations: map[string]string{hwAnnotation: "true"}}, "hardware encryption, 7.5 CPUs"},
}

// cluster is what the demo creates: the demo's nodes and pods, or those of
// the -nodes / -pods files.
type cluster struct {
	nodes []*corev1.Node
	pods  []*corev1.Pod
	// For the node table: name, cpu and the labels to show, in order.
	nodeRows []nodeRow
	// The pods the scheduler places (no spec.nodeName), in order, with
	// what each asks for in words.
	scheduled []podRef
}

type nodeRow struct {
	name, cpu string
	labels    map[string]string
}

type podRef struct {
	namespace, name, want string
}

// label is the pod's name in the tables (namespace/name outside "demo").
func (p podRef) label() string {
	if p.namespace == namespace {
		return p.name
	}
	return p.namespace + "/" + p.name
}

// loadCluster builds the demo's own cluster, with the nodes and/or pods of
// the given files instead when set.
func loadCluster(nodesFile, podsFile string) (*cluster, error) {
	c := &cluster{}
	if nodesFile == "" {
		for _, n := range demoNodes {
			size := testenv.NodeResources{CPU: n.cpu, Memory: "32Gi", Pods: 110}
			c.nodes = append(c.nodes, testenv.MakeNode(n.name, size, n.labels))
			c.nodeRows = append(c.nodeRows, nodeRow{n.name, n.cpu, n.labels})
		}
	} else {
		objs, err := simulate.Objects(nodesFile, "Node", "kubectl get nodes -o yaml")
		if err != nil {
			return nil, err
		}
		for i, data := range objs {
			var n corev1.Node
			if err := json.Unmarshal(data, &n); err != nil {
				return nil, fmt.Errorf("-nodes %s: object %d: %w", nodesFile, i+1, err)
			}
			if n.Name == "" {
				return nil, fmt.Errorf("-nodes %s: object %d has no metadata.name", nodesFile, i+1)
			}
			if len(n.Status.Allocatable) == 0 {
				return nil, fmt.Errorf("-nodes %s: node %q has no status.allocatable, so kube-scheduler would fit no pod on it; give it cpu, memory and pods (as `kubectl get nodes -o yaml` prints them)", nodesFile, n.Name)
			}
			cleanObject(&n.ObjectMeta)
			labels := map[string]string{}
			for k, v := range n.Labels {
				if k != "kubernetes.io/hostname" {
					labels[k] = v
				}
			}
			cpu := n.Status.Allocatable[corev1.ResourceCPU]
			c.nodes = append(c.nodes, &n)
			c.nodeRows = append(c.nodeRows, nodeRow{n.Name, cpu.String(), labels})
		}
	}
	if podsFile == "" {
		for _, p := range demoPods {
			c.pods = append(c.pods, testenv.MakePod(namespace, p.spec))
			c.scheduled = append(c.scheduled, podRef{namespace, p.spec.Name, p.want})
		}
		return c, nil
	}
	objs, err := simulate.Objects(podsFile, "Pod", "kubectl get pods -o yaml")
	if err != nil {
		return nil, err
	}
	for i, data := range objs {
		var p corev1.Pod
		if err := json.Unmarshal(data, &p); err != nil {
			return nil, fmt.Errorf("-pods %s: object %d: %w", podsFile, i+1, err)
		}
		if p.Name == "" {
			return nil, fmt.Errorf("-pods %s: object %d has no metadata.name", podsFile, i+1)
		}
		if len(p.Spec.Containers) == 0 {
			return nil, fmt.Errorf("-pods %s: pod %q has no spec.containers; the apiserver refuses a pod without one", podsFile, p.Name)
		}
		cleanObject(&p.ObjectMeta)
		if p.Namespace == "" {
			p.Namespace = namespace
		}
		p.Status = corev1.PodStatus{}
		c.pods = append(c.pods, &p)
		if p.Spec.NodeName == "" {
			c.scheduled = append(c.scheduled, podRef{p.Namespace, p.Name, describePod(&p)})
		}
	}
	return c, nil
}

// cleanObject drops what the apiserver sets itself, so a dump of another
// cluster can be created again.
func cleanObject(m *metav1.ObjectMeta) {
	m.UID = ""
	m.ResourceVersion = ""
	m.CreationTimestamp = metav1.Time{}
	m.ManagedFields = nil
	m.Generation = 0
}

// describePod says what a pod from a file asks for: its cpu and memory
// requests and its annotations.
func describePod(p *corev1.Pod) string {
	// cpu and memory first, then the other resources (GPUs, ...) by name.
	names := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}
	var others []string
	for _, c := range p.Spec.Containers {
		for r := range c.Resources.Requests {
			if r != corev1.ResourceCPU && r != corev1.ResourceMemory && !slices.Contains(others, string(r)) {
				others = append(others, string(r))
			}
		}
	}
	sort.Strings(others)
	for _, r := range others {
		names = append(names, corev1.ResourceName(r))
	}
	var parts []string
	for _, r := range names {
		var sum resource.Quantity
		for _, c := range p.Spec.Containers {
			if q, ok := c.Resources.Requests[r]; ok {
				sum.Add(q)
			}
		}
		if !sum.IsZero() {
			parts = append(parts, string(r)+" "+sum.String())
		}
	}
	var annotations []string
	for k, v := range p.Annotations {
		annotations = append(annotations, k+"="+v)
	}
	sort.Strings(annotations)
	return orDash(strings.Join(append(parts, annotations...), ", "))
}

// createNodes creates the nodes, the pods' namespaces and the pods already
// bound to a node. It runs before kube-scheduler starts, so the scheduler's
// first view of the cluster is complete: created later, a node's not-ready
// taint (added on create, lifted by an update) or a bound pod could reach
// the scheduler after the first pending pod and that pod would be placed
// on a partial cluster, unscored when only one node looked feasible.
func createNodes(ctx context.Context, cp *testenv.ControlPlane, c *cluster) error {
	if err := testenv.CreateNodes(ctx, cp.Client, c.nodes...); err != nil {
		return err
	}
	namespaces := map[string]bool{}
	for _, p := range c.pods {
		if !namespaces[p.Namespace] {
			namespaces[p.Namespace] = true
			if err := testenv.CreateNamespace(ctx, cp.Client, p.Namespace); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
		}
	}
	return createPods(ctx, cp, c, true)
}

// createPods creates the pods that are bound to a node (bound) or the
// pending ones, in the files' order.
func createPods(ctx context.Context, cp *testenv.ControlPlane, c *cluster, bound bool) error {
	for _, p := range c.pods {
		if (p.Spec.NodeName != "") == bound {
			if err := testenv.CreatePods(ctx, cp.Client, p); err != nil {
				return err
			}
		}
	}
	return nil
}

type row struct {
	pod, want, node, why string
}

// settle waits until every pod is bound or has a FailedScheduling event,
// then returns one row per pod.
func settle(ctx context.Context, cp *testenv.ControlPlane, c *cluster, timeout time.Duration) ([]row, error) {
	var rows []row
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		rows = rows[:0]
		done := true
		for _, p := range c.scheduled {
			pod, err := cp.Client.CoreV1().Pods(p.namespace).Get(ctx, p.name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			r := row{pod: p.label(), want: p.want, node: pod.Spec.NodeName}
			if r.node == "" {
				msg, _ := testenv.FailedSchedulingMessage(ctx, cp.Client, p.namespace, p.name)
				if msg == "" {
					done = false
				}
				r.node, r.why = "Pending", msg
			}
			rows = append(rows, r)
		}
		return done, nil
	})
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("interrupted")
	}
	return rows, nil // after the timeout, show what there is
}

// printNodes prints the node table; the LATENCY column only when the
// configuration uses the sample latency figures.
func printNodes(w io.Writer, c *cluster, latencies map[string]string) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	if latencies != nil {
		fmt.Fprintln(tw, "NODE\tCPU\tLABELS\tLATENCY")
	} else {
		fmt.Fprintln(tw, "NODE\tCPU\tLABELS")
	}
	for _, n := range c.nodeRows {
		var labels []string
		for k, v := range n.labels {
			labels = append(labels, k+"="+v)
		}
		sort.Strings(labels)
		if latencies == nil {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", n.name, n.cpu, orDash(strings.Join(labels, ",")))
			continue
		}
		lat := latencies[n.name] + " ms"
		if latencies[n.name] == "" {
			lat = "100 ms (default)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n.name, n.cpu, orDash(strings.Join(labels, ",")), lat)
	}
	tw.Flush()
}

func printTable(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "POD\tWANTS\tNODE\tWHY (for Pending pods: kube-scheduler's FailedScheduling message)")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.pod, r.want, r.node, orDash(r.why))
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// readLatencies reads "node ms" lines (for the node table only).
func readLatencies(file string) (map[string]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) == 2 {
			if _, err := strconv.ParseFloat(fields[1], 64); err == nil {
				out[fields[0]] = fields[1]
			}
		}
	}
	return out, sc.Err()
}

// boundPods is " and N pod(s) already bound to them" for the progress
// line, or "".
func boundPods(c *cluster) string {
	if n := len(c.pods) - len(c.scheduled); n > 0 {
		return fmt.Sprintf(" and %d pod(s) already bound to them", n)
	}
	return ""
}
