package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"schedplug.dev/integration/testbed/testenv"
)

// The host is killed (SIGKILL, as a crashing plugin would) and restarted
// while a batch of pods is being scheduled. With failurePolicy Fail, the
// shim rejects nodes while the host is away, so no pod lands where a native
// Filter would have refused it; once the host is back (and the shim has
// resynchronised) every pod is bound. kube-scheduler never exits.
func TestHostRestartDuringBatch(t *testing.T) {
	s := startStack(t, []testenv.NativePlugin{
		{Name: "HwEncrypt", FailurePolicy: "Fail", Timeout: "200ms"},
		{Name: "DedicatedNodes", FailurePolicy: "Fail", Timeout: "200ms"},
	})
	ctx := s.ctx()
	ns := s.namespace("host-restart")
	nodeLabels := map[string]map[string]string{
		"plain-1": nil, "plain-2": nil, "plain-3": nil,
		"enc-1": hwNode, "enc-2": hwNode,
		"dedicated-1": dedicated,
	}
	var nodes []*corev1.Node
	for name, labels := range nodeLabels {
		nodes = append(nodes, testenv.MakeNode(name, bigNode, labels))
	}
	s.createNodes(ctx, nodes...)

	// Three kinds of pods, created at a steady pace in the background.
	const total = 60
	var specs []testenv.PodSpec
	for i := 0; i < total; i++ {
		var ann map[string]string
		switch i % 3 {
		case 0:
			ann = needsHw
		case 1:
			ann = dedicatedOK
		}
		specs = append(specs, testenv.PodSpec{Name: fmt.Sprintf("pod-%02d", i), Annotations: ann, CPU: "50m"})
	}
	created := make(chan error, 1)
	go func() {
		for _, p := range specs {
			if err := testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, p)); err != nil {
				created <- err
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		created <- nil
	}()

	// Crash the host part-way through the batch, keep it down a moment,
	// then start it again.
	time.Sleep(1 * time.Second)
	before, err := testenv.Placements(ctx, s.client, ns)
	s.must(err)
	s.host.Kill()
	t.Logf("host killed with %d pods created, %d bound", len(before), countBound(before))
	time.Sleep(2 * time.Second)
	s.must(s.host.StartAndWait(30 * time.Second))
	restarted := time.Now()
	t.Logf("host restarted")
	s.must(<-created)

	var names []string
	for _, p := range specs {
		names = append(names, p.Name)
	}
	placed, err := testenv.WaitForBound(ctx, s.client, ns, names, 120*time.Second)
	if err != nil {
		t.Errorf("%v\nplacements: %v", err, placed)
	}
	if len(placed) != total {
		t.Errorf("%d pods exist, want %d: pods were lost", len(placed), total)
	}
	for _, p := range specs {
		node := placed[p.Name]
		if node == "" {
			continue
		}
		if why := policyViolation(p.Annotations, nodeLabels[node]); why != "" {
			t.Error(placementError(p.Name, node, why))
		}
	}
	// The batch really met a missing host: some pods were refused with the
	// shim's failurePolicy reason while it was down.
	refused := 0
	for _, p := range specs {
		msg, err := testenv.FailedSchedulingMessage(ctx, s.client, ns, p.Name)
		s.must(err)
		if strings.Contains(msg, "failurePolicy Fail") {
			refused++
			if refused == 1 {
				t.Logf("refused while the host was down, e.g. %s: %q", p.Name, msg)
			}
		}
	}
	t.Logf("%d of %d pods were refused while the host was down, all bound %s after the restart", refused, total, time.Since(restarted).Round(100*time.Millisecond))
	if refused == 0 {
		t.Errorf("no pod has a FailedScheduling event from the shim's failurePolicy: the host was never missed, so the test proved nothing")
	}
	if !s.scheduler.Running() {
		t.Errorf("kube-scheduler exited while the host was down: %v", s.scheduler.ExitError())
	}
	t.Logf("placements per node: %v", perNode(placed))
}

func countBound(placed map[string]string) int {
	n := 0
	for _, node := range placed {
		if node != "" {
			n++
		}
	}
	return n
}

func perNode(placed map[string]string) string {
	counts := map[string]int{}
	for _, node := range placed {
		if node == "" {
			node = "(pending)"
		}
		counts[node]++
	}
	var parts []string
	for node, c := range counts {
		parts = append(parts, fmt.Sprintf("%s=%d", node, c))
	}
	return strings.Join(parts, " ")
}
