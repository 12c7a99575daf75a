//go:build !k8s1.35

package shim

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// runPermit runs the Permit plugins as kube-scheduler's scheduling cycle
// does from 1.36 on: the waiting pod is added by the caller
// (permitrun_k8s1.35_test.go).
func runPermit(ctx context.Context, fw framework.Framework, state fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	waits, st := fw.RunPermitPlugins(ctx, state, pod, node)
	if st.IsWait() {
		fw.AddWaitingPod(pod, waits)
	}
	return st
}
