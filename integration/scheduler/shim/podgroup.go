//go:build !k8s1.35

package shim

import fwk "k8s.io/kube-scheduler/framework"

// isPodGroupCycle: kube-scheduler schedules a pod group's members in
// cycles of their own from 1.36 on (podgroup_k8s1.35.go).
func isPodGroupCycle(state fwk.CycleState) bool {
	return state.IsPodGroupSchedulingCycle()
}
