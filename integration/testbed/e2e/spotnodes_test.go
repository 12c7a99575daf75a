package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"schedplug.dev/integration/testbed/testenv"
)

// SpotNodes, the Rust sample (plugins/spot-nodes, a Filter and a Score
// behind pod_begin's gates), in the real kube-scheduler through the
// unchanged host: pods that are not interruptible never land on spot
// nodes, interruptible ones prefer them, and a typo in the annotation
// leaves the pod Pending with the plugin's reason.
func TestSpotNodesRustSample(t *testing.T) {
	dir, err := testenv.SpotNodesPluginDir()
	if err != nil {
		t.Fatal(err)
	}
	s := startStackWith(t, stackOptions{
		Plugins:   []testenv.NativePlugin{{Name: "SpotNodes", FailurePolicy: "Fail", Timeout: "500ms", Weight: 10}},
		PluginDir: dir,
	})
	ctx := s.ctx()
	ns := s.namespace("spot-nodes")
	spot := map[string]string{"node.kubernetes.io/capacity-type": "spot"}
	onDemand := map[string]string{"node.kubernetes.io/capacity-type": "on-demand"}
	s.createNodes(ctx,
		testenv.MakeNode("spot-1", bigNode, spot),
		testenv.MakeNode("spot-2", bigNode, spot),
		testenv.MakeNode("on-demand-1", bigNode, onDemand),
		testenv.MakeNode("on-demand-2", bigNode, onDemand))

	interruptible := map[string]string{"schedplug.io/interruptible": "true"}
	var specs []testenv.PodSpec
	var names []string
	for i := 0; i < 6; i++ {
		specs = append(specs,
			testenv.PodSpec{Name: fmt.Sprintf("web-%d", i), CPU: "100m"},
			testenv.PodSpec{Name: fmt.Sprintf("batch-%d", i), Annotations: interruptible, CPU: "100m"})
		names = append(names, fmt.Sprintf("web-%d", i), fmt.Sprintf("batch-%d", i))
	}
	var pods []*corev1.Pod
	for _, spec := range specs {
		pods = append(pods, testenv.MakePod(ns, spec))
	}
	s.must(testenv.CreatePods(ctx, s.client, pods...))
	placed, err := testenv.WaitForBound(ctx, s.client, ns, names, 60*time.Second)
	s.must(err)
	for pod, node := range placed {
		switch {
		case strings.HasPrefix(pod, "web-") && strings.HasPrefix(node, "spot-"):
			t.Errorf("pod %s is not interruptible but went to the spot node %s", pod, node)
		case strings.HasPrefix(pod, "batch-") && !strings.HasPrefix(node, "spot-"):
			// With weight 10 its 100 points outweigh what the in-tree
			// scores tell apart on equal, nearly empty nodes.
			t.Errorf("interruptible pod %s went to %s, not to a spot node", pod, node)
		}
	}
	t.Logf("placements: %v", placed)

	s.must(testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, testenv.PodSpec{
		Name: "typo", Annotations: map[string]string{"schedplug.io/interruptible": "yes"}, CPU: "100m"})))
	const reason = `pod's annotation schedplug.io/interruptible must be "true" or "false"`
	msg, err := testenv.WaitForFailedScheduling(ctx, s.client, ns, "typo", reason, 60*time.Second)
	s.must(err)
	if want := "0/4 nodes are available: 4 " + reason; !strings.HasPrefix(msg, want) {
		t.Errorf("FailedScheduling message = %q; want it to start with %q", msg, want)
	}
}
