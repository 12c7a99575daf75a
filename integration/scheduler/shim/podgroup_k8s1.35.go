//go:build k8s1.35

package shim

import fwk "k8s.io/kube-scheduler/framework"

// isPodGroupCycle: 1.35 has no pod-group cycles (1.36 added them,
// podgroup.go), so every cycle is an ordinary one.
func isPodGroupCycle(fwk.CycleState) bool {
	return false
}
