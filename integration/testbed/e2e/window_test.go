package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"schedplug.dev/integration/testbed/testenv"
)

const (
	windowsMetric      = "schedplug_shim_filter_windows_total"
	windowMissesMetric = "schedplug_shim_filter_window_misses_total"
	reuseMetric        = "schedplug_shim_verdict_reuse_cycles_total"
	reuseMissesMetric  = "schedplug_shim_verdict_reuse_misses_total"
)

// TestFilterWindowWithKubeScheduler: on 1000 nodes with
// percentageOfNodesToScore 10, kube-scheduler's Filter visits about a
// hundred per cycle, and the shim's PreFilter asks the host about only
// those (the filter window; with the adaptive default a cluster this small
// is evaluated whole). Plain pods
// schedule with windowed PreFilters, and being replicas most of them reuse
// the verdicts kept for the first ones (no call); after every 4th node is
// made dedicated (new Node objects), 40 more pods, which differ in labels
// and annotations no plugin reads, reuse them too and land only on the
// other nodes. A pod that needs hardware encryption
// while no node has it visits every node, and its FailedScheduling event
// counts HwEncrypt's reason on all 1000 — the nodes outside the window
// answered by FilterNodes calls; once a third of the nodes are labelled,
// it and more such pods land only on those.
func TestFilterWindowWithKubeScheduler(t *testing.T) {
	s := startStackWith(t, stackOptions{
		// DedicatedNodes filters every pod (no node is dedicated here), so
		// each cycle's Filter calls show the shim where the framework went;
		// HwEncrypt skips pods without its annotation.
		Plugins: []testenv.NativePlugin{
			{Name: "HwEncrypt", FailurePolicy: "Fail", Timeout: "2s"},
			{Name: "DedicatedNodes", FailurePolicy: "Fail", Timeout: "2s"},
		},
		PercentageOfNodesToScore: 10,
	})
	ctx := s.ctx()
	ns := s.namespace("window")
	const nodes = 1000
	var all []*corev1.Node
	for i := 0; i < nodes; i++ {
		all = append(all, testenv.MakeNode(windowNode(i), bigNode, nil))
	}
	s.createNodes(ctx, all...)

	var plain []string
	for i := 0; i < 20; i++ {
		name := fmt.Sprintf("plain-%d", i)
		s.must(testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, testenv.PodSpec{Name: name, CPU: "100m"})))
		plain = append(plain, name)
	}
	_, err := testenv.WaitForBound(ctx, s.client, ns, plain, 120*time.Second)
	s.must(err)
	if got := s.counter(windowsMetric); got == 0 {
		t.Fatalf("%s is 0 after 20 pods on %d nodes: PreFilter never sent a window", windowsMetric, nodes)
	}
	// The plain pods are replicas (the same apart from name and uid) and
	// both plugins promise what verdict reuse needs: most of them make no
	// call.
	if got := s.counter(reuseMetric); got < 10 {
		t.Fatalf("%s = %v after 20 identical pods, want at least 10", reuseMetric, got)
	}

	// Every 4th node becomes dedicated: new Node objects, so the verdicts
	// kept for the plain pods no longer hold there. More replicas must
	// never land on them.
	reuseMisses := s.counter(reuseMissesMetric)
	for i := 0; i < nodes; i += 4 {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"true"}}}`, dedicatedLabel)
		_, err := s.client.CoreV1().Nodes().Patch(ctx, windowNode(i), types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
		s.must(err)
	}
	// These pods also differ in labels and annotations neither plugin
	// reads (both declare the one annotation each reads): they still reuse.
	reuseBefore := s.counter(reuseMetric)
	var more []string
	for i := 0; i < 40; i++ {
		name := fmt.Sprintf("plain-after-%d", i)
		pod := testenv.MakePod(ns, testenv.PodSpec{Name: name, CPU: "100m", Annotations: map[string]string{"example.com/note": fmt.Sprint(i)}})
		pod.Labels = map[string]string{"workload": fmt.Sprint(i % 4)}
		s.must(testenv.CreatePods(ctx, s.client, pod))
		more = append(more, name)
	}
	placedMore, err := testenv.WaitForBound(ctx, s.client, ns, more, 120*time.Second)
	s.must(err)
	for _, name := range more {
		var i int
		if _, err := fmt.Sscanf(placedMore[name], "w-%d", &i); err != nil || i%4 == 0 {
			t.Errorf("replica %s went to %s, a node labelled %s=true since the verdicts were kept", name, placedMore[name], dedicatedLabel)
		}
	}
	if got := s.counter(reuseMetric) - reuseBefore; got < 20 {
		t.Errorf("%s went up by %v for 40 pods that differ only in labels and annotations no plugin reads, want at least 20", reuseMetric, got)
	}
	if got := s.counter(reuseMissesMetric); got <= reuseMisses {
		t.Errorf("%s stayed at %v: no replica reached a relabelled node's kept verdict", reuseMissesMetric, got)
	}

	missesBefore := s.counter(windowMissesMetric)
	s.must(testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, testenv.PodSpec{Name: "hw-early", Annotations: needsHw, CPU: "100m"})))
	msg, err := testenv.WaitForFailedScheduling(ctx, s.client, ns, "hw-early", hwReason, 60*time.Second)
	s.must(err)
	if want := fmt.Sprintf("0/%d nodes are available: %d %s", nodes, nodes, hwReason); !strings.HasPrefix(msg, want) {
		t.Errorf("FailedScheduling message = %q; want it to start with %q (every node's verdict)", msg, want)
	}
	// schedplug-host takes a feasible target: the window is the whole
	// list, and for a pod that fits nowhere the host walks all of it in
	// PreFilter's one call, so the framework's walk over every node never
	// leaves it (no FilterNodes call).
	if got := s.counter(windowMissesMetric); got != missesBefore {
		t.Errorf("%s went from %v to %v: the pod that fits nowhere made a FilterNodes call, though the host walks the whole list until enough nodes pass", windowMissesMetric, missesBefore, got)
	}

	for i := 0; i < nodes; i += 3 {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"true"}}}`, hwLabel)
		_, err := s.client.CoreV1().Nodes().Patch(ctx, windowNode(i), types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
		s.must(err)
	}
	hw := []string{"hw-early"}
	for i := 0; i < 20; i++ {
		name := fmt.Sprintf("hw-%d", i)
		s.must(testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, testenv.PodSpec{Name: name, Annotations: needsHw, CPU: "100m"})))
		hw = append(hw, name)
	}
	placed, err := testenv.WaitForBound(ctx, s.client, ns, hw, 120*time.Second)
	s.must(err)
	for _, name := range hw {
		var i int
		if _, err := fmt.Sscanf(placed[name], "w-%d", &i); err != nil || i%3 != 0 {
			t.Errorf("pod %s went to %s, a node without %s=true", name, placed[name], hwLabel)
		}
	}
	t.Logf("%s %v, %s %v, %s %v, %s %v; hardware pods on %v", windowsMetric, s.counter(windowsMetric), windowMissesMetric, s.counter(windowMissesMetric),
		reuseMetric, s.counter(reuseMetric), reuseMissesMetric, s.counter(reuseMissesMetric), placed)
}

func windowNode(i int) string { return fmt.Sprintf("w-%04d", i) }
