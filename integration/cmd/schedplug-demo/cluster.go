package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"schedplug.dev/integration/internal/testenv"
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

func createCluster(ctx context.Context, cp *testenv.ControlPlane) error {
	for _, n := range demoNodes {
		size := testenv.NodeResources{CPU: n.cpu, Memory: "32Gi", Pods: 110}
		if err := testenv.CreateNodes(ctx, cp.Client, testenv.MakeNode(n.name, size, n.labels)); err != nil {
			return err
		}
	}
	if err := testenv.CreateNamespace(ctx, cp.Client, namespace); err != nil {
		return err
	}
	for _, p := range demoPods {
		if err := testenv.CreatePods(ctx, cp.Client, testenv.MakePod(namespace, p.spec)); err != nil {
			return err
		}
	}
	return nil
}

type row struct {
	pod, want, node, why string
}

// settle waits until every pod is bound or has a FailedScheduling event,
// then returns one row per pod.
func settle(ctx context.Context, cp *testenv.ControlPlane, timeout time.Duration) ([]row, error) {
	var rows []row
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		rows = rows[:0]
		done := true
		for _, p := range demoPods {
			pod, err := cp.Client.CoreV1().Pods(namespace).Get(ctx, p.spec.Name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			r := row{pod: p.spec.Name, want: p.want, node: pod.Spec.NodeName}
			if r.node == "" {
				msg, _ := testenv.FailedSchedulingMessage(ctx, cp.Client, namespace, p.spec.Name)
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

func printNodes(w io.Writer, latencies map[string]string) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tCPU\tLABELS\tLATENCY")
	for _, n := range demoNodes {
		var labels []string
		for k, v := range n.labels {
			labels = append(labels, k+"="+v)
		}
		sort.Strings(labels)
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
