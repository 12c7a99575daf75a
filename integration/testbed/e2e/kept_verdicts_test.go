package e2e

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"schedplug.dev/integration/testbed/testenv"
)

// Verdict reuse answers replicas from verdicts the host gave for the pods
// before them, without a call. Those verdicts must die with the host that
// gave them: these tests schedule replicas until the shim reuses, then take
// the host away, and check that no replica is placed on a verdict the
// current host (or no host) did not give.

// keptVerdictNodes are plain nodes: the sample DedicatedNodes accepts every
// pod there, its 2.0.0 build none.
var keptVerdictNodes = []string{"plain-1", "plain-2", "plain-3", "plain-4"}

// startReuseStack starts DedicatedNodes with failurePolicy Fail on plain
// nodes and schedules `warm` replicas, checking that the shim reused kept
// verdicts for some of them.
func startReuseStack(t *testing.T, ns string, warm int) (*stack, string) {
	s := startStack(t, []testenv.NativePlugin{{Name: "DedicatedNodes", FailurePolicy: "Fail", Timeout: "200ms"}})
	ctx := s.ctx()
	ns = s.namespace(ns)
	var nodes []*corev1.Node
	for _, name := range keptVerdictNodes {
		nodes = append(nodes, testenv.MakeNode(name, bigNode, nil))
	}
	s.createNodes(ctx, nodes...)
	names := createReplicas(s, ns, "warm", warm)
	_, err := testenv.WaitForBound(ctx, s.client, ns, names, 60*time.Second)
	s.must(err)
	text, err := s.scheduler.Metrics()
	s.must(err)
	if reused, _ := testenv.MetricSum(text, "schedplug_shim_verdict_reuse_cycles_total"); reused == 0 {
		t.Fatalf("the shim reused no kept verdict for %d replicas: the test cannot show what happens to kept verdicts", warm)
	}
	return s, ns
}

// createReplicas creates n identical pods, one after another as a
// ReplicaSet controller would, and returns their names.
func createReplicas(s *stack, ns, prefix string, n int) []string {
	var names []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s-%02d", prefix, i)
		s.must(testenv.CreatePods(s.ctx(), s.client, testenv.MakePod(ns, testenv.PodSpec{Name: name, CPU: "10m"})))
		names = append(names, name)
		time.Sleep(100 * time.Millisecond)
	}
	return names
}

// expectRefused waits until every pod has a FailedScheduling event with
// `reason`, then checks that none of them is bound.
func expectRefused(t *testing.T, s *stack, ns string, names []string, reason string) {
	t.Helper()
	for _, name := range names {
		msg, err := testenv.WaitForFailedScheduling(s.ctx(), s.client, ns, name, reason, 30*time.Second)
		if err != nil {
			t.Error(err)
			continue
		}
		if name == names[0] {
			t.Logf("FailedScheduling of %s: %q", name, msg)
		}
	}
	placed, err := testenv.Placements(s.ctx(), s.client, ns)
	s.must(err)
	bound := 0
	for _, name := range names {
		if placed[name] != "" {
			bound++
			t.Errorf("replica %s was bound to %s although the host did not accept it there (%s)", name, placed[name], reason)
		}
	}
	t.Logf("%d of %d replicas bound", bound, len(names))
}

// The host restarts with a DedicatedNodes build that rejects every node.
// The replicas created afterwards must meet that build's verdict, not the
// old build's kept verdicts.
func TestKeptVerdictsDieWithARestartedHost(t *testing.T) {
	s, ns := startReuseStack(t, "restart-rejects", 6)
	rejectsAll, err := testenv.RejectsAllPluginDir()
	s.must(err)
	s.host.Kill()
	s.host.SetPluginDir(rejectsAll)
	s.must(s.host.StartAndWait(30 * time.Second))
	names := createReplicas(s, ns, "after", 8)
	expectRefused(t, s, ns, names, "DedicatedNodes 2.0.0 rejects every node")
}

// The host is killed and stays down. With failurePolicy Fail the replicas
// created meanwhile must be refused with the policy's reason, and be bound
// once the host is back.
func TestKeptVerdictsDieWithAKilledHost(t *testing.T) {
	s, ns := startReuseStack(t, "killed", 6)
	s.host.Kill()
	names := createReplicas(s, ns, "down", 4)
	expectRefused(t, s, ns, names, "failurePolicy Fail")
	s.must(s.host.StartAndWait(30 * time.Second))
	placed, err := testenv.WaitForBound(s.ctx(), s.client, ns, names, 60*time.Second)
	if err != nil {
		t.Errorf("after the host came back: %v (placements %v)", err, placed)
	}
}
