package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"schedplug.dev/integration/testbed/testenv"
)

// HwEncrypt (a C++ Filter in hw_encrypt.so): annotated pods land only on
// labelled nodes; with no labelled node an annotated pod stays Pending and
// its FailedScheduling event carries kube-scheduler's "0/N nodes are
// available" message with HwEncrypt's reason; once labelled nodes appear it
// is scheduled; pods without the annotation schedule anywhere.
func TestHwEncryptFilter(t *testing.T) {
	s := startStack(t, []testenv.NativePlugin{
		{Name: "HwEncrypt", FailurePolicy: "Fail", Timeout: "500ms"},
	})
	ctx := s.ctx()
	ns := s.namespace("hw-encrypt")

	// 1. No labelled node yet: the annotated pod must stay Pending.
	s.createNodes(ctx,
		testenv.MakeNode("plain-1", bigNode, nil),
		testenv.MakeNode("plain-2", bigNode, nil),
		testenv.MakeNode("plain-3", bigNode, nil))
	s.must(testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, testenv.PodSpec{Name: "early", Annotations: needsHw, CPU: "100m"})))
	// Waits for the message that names all three nodes: the scheduler may
	// try the pod before its informer has seen the last node (the pod and
	// the nodes are watched apart); the node's arrival sends the pod back
	// to the queue.
	msg, err := testenv.WaitForFailedScheduling(ctx, s.client, ns, "early", "3 "+hwReason, 60*time.Second)
	s.must(err)
	t.Logf("FailedScheduling message for %s/early: %q", ns, msg)
	if want := "0/3 nodes are available: 3 " + hwReason; !strings.HasPrefix(msg, want) {
		t.Errorf("FailedScheduling message = %q; want it to start with %q", msg, want)
	}
	placed, err := testenv.Placements(ctx, s.client, ns)
	s.must(err)
	if placed["early"] != "" {
		t.Fatalf("annotated pod early was bound to %s although no node has %s=true", placed["early"], hwLabel)
	}

	// 1b. A pending pod's own annotation change sends it back to the queue
	// (kube-scheduler's event TargetPodUpdate), not the flush of pods left
	// unschedulable too long (UnschedulableTimeout, after 10 s in this
	// stack, 5 minutes by default): without the annotation HwEncrypt read,
	// it lands on a plain node.
	s.must(testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, testenv.PodSpec{Name: "relents", Annotations: needsHw, CPU: "100m"})))
	_, err = testenv.WaitForFailedScheduling(ctx, s.client, ns, "relents", hwReason, 60*time.Second)
	s.must(err)
	for key := range needsHw {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, key)
		_, err = s.client.CoreV1().Pods(ns).Patch(ctx, "relents", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		s.must(err)
	}
	placed, err = testenv.WaitForBound(ctx, s.client, ns, []string{"relents"}, 60*time.Second)
	s.must(err)
	if !strings.HasPrefix(placed["relents"], "plain-") {
		t.Errorf("pod relents went to %s, want a plain node (the only ones)", placed["relents"])
	}
	metrics, err := s.scheduler.Metrics()
	s.must(err)
	requeued := regexp.MustCompile(`(?m)^scheduler_queue_incoming_pods_total\{event="TargetPodUpdate",queue="(active|backoff)"\} [1-9]`)
	if !requeued.MatchString(metrics) {
		t.Errorf("pod relents was not sent back to the queue by its own update (no scheduler_queue_incoming_pods_total{event=\"TargetPodUpdate\"} into active or backoff); kube-scheduler's queue metrics:\n%s",
			strings.Join(regexp.MustCompile(`(?m)^scheduler_queue_incoming_pods_total.*$`).FindAllString(metrics, -1), "\n"))
	}

	// 2. Labelled nodes arrive: the waiting pod is retried (HwEncrypt
	// registers NodeAdd) and lands on one of them.
	s.createNodes(ctx,
		testenv.MakeNode("enc-1", bigNode, hwNode),
		testenv.MakeNode("enc-2", bigNode, hwNode))
	placed, err = testenv.WaitForBound(ctx, s.client, ns, []string{"early"}, 60*time.Second)
	s.must(err)
	if !strings.HasPrefix(placed["early"], "enc-") {
		t.Errorf("pod early went to %s, want enc-1 or enc-2", placed["early"])
	}

	// 3. A batch: annotated pods only on enc-*, plain pods anywhere (two of
	// them pinned to prove a labelled node takes plain pods too).
	var pods []string
	var specs []testenv.PodSpec
	for i := 0; i < 8; i++ {
		specs = append(specs,
			testenv.PodSpec{Name: fmt.Sprintf("hw-%d", i), Annotations: needsHw, CPU: "100m"},
			testenv.PodSpec{Name: fmt.Sprintf("plain-%d", i), CPU: "100m"})
	}
	specs = append(specs,
		testenv.PodSpec{Name: "plain-on-enc-1", CPU: "100m", NodeSelector: hostnameSelector("enc-1")},
		testenv.PodSpec{Name: "plain-on-plain-1", CPU: "100m", NodeSelector: hostnameSelector("plain-1")})
	for _, p := range specs {
		s.must(testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, p)))
		pods = append(pods, p.Name)
	}
	placed, err = testenv.WaitForBound(ctx, s.client, ns, pods, 60*time.Second)
	s.must(err)
	onPlain := 0
	for _, p := range specs {
		node := placed[p.Name]
		labels := map[string]string{}
		if strings.HasPrefix(node, "enc-") {
			labels = hwNode
		} else {
			onPlain++
		}
		if why := policyViolation(p.Annotations, labels); why != "" {
			t.Error(placementError(p.Name, node, why))
		}
	}
	if placed["plain-on-enc-1"] != "enc-1" || placed["plain-on-plain-1"] != "plain-1" {
		t.Errorf("pinned plain pods: plain-on-enc-1 on %q, plain-on-plain-1 on %q", placed["plain-on-enc-1"], placed["plain-on-plain-1"])
	}
	t.Logf("placements: %v (%d pods on unlabelled nodes)", placed, onPlain)
}
