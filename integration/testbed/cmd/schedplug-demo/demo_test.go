package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"schedplug.dev/integration/testbed/testenv"
)

// TestDemoRunsAnAuthorsOwnPlugins runs the demo as a plugin author would
// with -plugins, -config, -nodes and -pods: the test plugins of
// `schedplug simulate` (GoodFilter turns away nodes labelled corpus/reject,
// FreeCpu and GoodScorer score), no NetworkLatency and so no latency file,
// three nodes and two pods of the author's own.
func TestDemoRunsAnAuthorsOwnPlugins(t *testing.T) {
	node := func(name, cpu, labels string) string {
		return "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: " + name + "\n  labels: " + labels +
			"\nstatus:\n  allocatable: {cpu: \"" + cpu + "\", memory: 8Gi, pods: \"110\"}\n"
	}
	nodes := node("roomy", "4", "{}") + node("cramped", "1", "{}") +
		node("barred", "8", `{corpus/reject: "yes"}`)
	pods := `apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Pod
    metadata: {name: small, annotations: {team: web}}
    spec:
      containers: [{name: app, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 500m}}}]
  - apiVersion: v1
    kind: Pod
    metadata: {name: huge}
    spec:
      containers: [{name: app, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: "6"}}}]
`
	text := runAuthorsDemo(t, []string{"GoodFilter", "FreeCpu", "GoodScorer"}, nodes, pods)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^NODE +CPU +LABELS$`), // no LATENCY column
		regexp.MustCompile(`(?m)^barred +8 +corpus/reject=yes$`),
		regexp.MustCompile(`(?m)^small +cpu 500m, team=web +(roomy|cramped) +-$`),
		regexp.MustCompile(`(?m)^huge +cpu 6 +Pending +0/3 nodes are available: .*1 node\(s\) carry corpus/reject`),
		// Why, from the host's recent cycles: each node's native rejection, the
		// scores of the chosen node beside the runner-up's.
		regexp.MustCompile(`(?m)^huge +barred: GoodFilter: node\(s\) carry corpus/reject; cramped, roomy: FreeCpu: Insufficient free cpu$`),
		regexp.MustCompile(`(?m)^small +(roomy|cramped): FreeCpu \d+ x1 \+ GoodScorer \d+ x1 = \d+; runner-up (roomy|cramped): FreeCpu`),
	} {
		if !want.MatchString(text) {
			t.Errorf("the demo output has no line matching %q", want)
		}
	}
	if strings.Contains(text, "LATENCY") {
		t.Errorf("the node table shows latencies although the configuration does not use the sample latency file")
	}
}

// The why table of a pod scheduled last, with nothing after it, comes
// from all the host kept of its cycle: the chosen node's native
// scores beside the runner-up's.
func TestDemoExplainsItsLastPod(t *testing.T) {
	nodes := `apiVersion: v1
kind: List
items:
  - {apiVersion: v1, kind: Node, metadata: {name: roomy}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
  - {apiVersion: v1, kind: Node, metadata: {name: middling}, status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}}
  - {apiVersion: v1, kind: Node, metadata: {name: cramped}, status: {allocatable: {cpu: "1", memory: 8Gi, pods: "110"}}}
`
	pods := `apiVersion: v1
kind: Pod
metadata: {name: only}
spec:
  containers: [{name: app, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 500m}}}]
`
	text := runAuthorsDemo(t, []string{"FreeCpu", "GoodScorer"}, nodes, pods)
	want := regexp.MustCompile(`(?m)^only +(roomy|middling|cramped): FreeCpu \d+ x1 \+ GoodScorer \d+ x1 = \d+; runner-up (roomy|middling|cramped): FreeCpu \d+ x1 \+ GoodScorer \d+ x1 = \d+$`)
	if !want.MatchString(text) {
		t.Errorf("the demo output has no line matching %q", want)
	}
}

// runAuthorsDemo runs the demo on the test plugins of `schedplug simulate`
// with `plugins` enabled under multiPoint and the -nodes and -pods files
// holding `nodes` and `pods`, and returns its output.
func runAuthorsDemo(t *testing.T, plugins []string, nodes, pods string) string {
	t.Helper()
	dir, err := testenv.SimTestPluginDir()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	write := func(name, text string) string {
		file := filepath.Join(tmp, name)
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	config := `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      multiPoint:
        enabled:
`
	for _, p := range plugins {
		config += "          - name: " + p + "\n"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := run(ctx, os.Stderr, options{config: write("config.yaml", config), plugins: dir,
		nodes: write("nodes.yaml", nodes), pods: write("pods.yaml", pods), timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("demo output:\n%s", out)
	return string(out)
}

// TestDemoFlagsRefuseBadFiles: mistakes in -nodes / -pods files are
// reported with the file and what to do, before anything starts.
func TestDemoFlagsRefuseBadFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "nodes.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := loadCluster(file, "")
	if err == nil || !strings.Contains(err.Error(), `document 1 has kind "Pod"; give Node objects or a List of them, as `+"`kubectl get nodes -o yaml`") {
		t.Errorf("a Pod in -nodes: got %v", err)
	}
	if err := os.WriteFile(file, []byte("kind: Node\nmetadata: {name: node-x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = loadCluster(file, "")
	if err == nil || !strings.Contains(err.Error(), `node "node-x" has no status.allocatable`) {
		t.Errorf("a node without allocatable: got %v", err)
	}
	c, err := loadCluster("", "")
	if err != nil || len(c.nodes) != len(demoNodes) || len(c.scheduled) != len(demoPods) {
		t.Errorf("the default cluster: %v, %+v", err, c)
	}
}
