//go:build k8s1.38

package shim

import (
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// markPodGroupCycle: 1.38 renamed SetPodGroupSchedulingCycle
// (podgroupcycle_test.go) SetPodGroupCycleState.
func markPodGroupCycle(state *framework.CycleState, pg fwk.PodGroupCycleState) {
	state.SetPodGroupCycleState(pg)
}
