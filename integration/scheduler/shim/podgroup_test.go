//go:build !k8s1.35

// Pod-group cycles came with 1.36 (podgroup.go).

package shim

import (
	"context"
	"testing"

	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// In pod-group cycles the snapshot's AssumePod adds a pod to a NodeInfo in
// place and restores its Generation (ForgetPod removes it the same way).
// The shim must notice: the host's table gets the new state, no verdict for
// the old state is reused, and the first cycle after the group still
// compares whole states, so the removal reaches the host too.
func TestAssumedPodWithUnchangedGenerationIsNoticed(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{filterScorePlugin("PodCap")}, nil)
	pl := e.plugins["PodCap"]
	n := testNode("n1", map[string]string{"maxpods-PodCap": "2"}, 1)
	pod := testPod("p", nil)
	state := podGroupCycle()
	e.runPreFilter(t, []string{"PodCap"}, state, pod, asList(n))
	if st := pl.Filter(context.Background(), state, pod, n); !st.IsSuccess() {
		t.Fatalf("1 pod: %v", st)
	}
	// What Snapshot.AssumePod does.
	gen := n.Generation
	assumed := testPod("assumed", nil)
	n.AddPod(assumed)
	n.Generation = gen
	// Same cycle: the verdict for 1 pod must not be reused.
	if st := pl.Filter(context.Background(), state, pod, n); st.Code() != fwk.Unschedulable {
		t.Fatalf("same cycle after an in-place assume: %v, want Unschedulable (2 pods)", st)
	}
	// The group's next member: the delta carries the node's new state.
	state = podGroupCycle()
	e.runPreFilter(t, []string{"PodCap"}, state, pod, asList(n))
	if d := e.host.lastDelta(); len(d.Upserts) != 1 || d.Upserts[0].PodCount != 2 {
		t.Fatalf("delta after an in-place assume: %v, want n1 with 2 pods", d)
	}
	fallbacks := e.host.count("Filter")
	if st := pl.Filter(context.Background(), state, pod, n); st.Code() != fwk.Unschedulable {
		t.Fatalf("next cycle: %v", st)
	}
	if e.host.count("Filter") != fallbacks {
		t.Fatal("the next cycle's lookup fell back to a single-node call")
	}
	// What Snapshot.ForgetPod does when the group fails; the next cycle is
	// an ordinary one.
	if err := n.RemovePod(klog.Background(), assumed); err != nil {
		t.Fatal(err)
	}
	n.Generation = gen
	state = framework.NewCycleState()
	e.runPreFilter(t, []string{"PodCap"}, state, pod, asList(n))
	if d := e.host.lastDelta(); len(d.Upserts) != 1 || d.Upserts[0].PodCount != 1 {
		t.Fatalf("delta after an in-place forget: %v, want n1 with 1 pod", d)
	}
	if st := pl.Filter(context.Background(), state, pod, n); !st.IsSuccess() {
		t.Fatalf("after the group: %v, want Success (1 pod)", st)
	}
	// From then on the generation decides: an unchanged node is not sent.
	state = framework.NewCycleState()
	e.runPreFilter(t, []string{"PodCap"}, state, pod, asList(n))
	if d := e.host.lastDelta(); len(d.Upserts) != 0 {
		t.Fatalf("delta for an unchanged node: %v, want none", d)
	}
}

// podGroupCycle is a CycleState of a pod group's cycle, as kube-scheduler
// marks it (its PodGroupCycleState is not read by the shim).
func podGroupCycle() *framework.CycleState {
	state := framework.NewCycleState()
	markPodGroupCycle(state, podGroupCycleState{})
	return state
}

type podGroupCycleState struct{ fwk.PodGroupCycleState }
