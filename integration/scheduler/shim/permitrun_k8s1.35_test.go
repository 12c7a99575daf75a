//go:build k8s1.35

package shim

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// runPermit runs the Permit plugins as 1.35's scheduling cycle does: the
// framework adds the waiting pod itself (permitrun_test.go).
func runPermit(ctx context.Context, fw framework.Framework, state fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	return fw.RunPermitPlugins(ctx, state, pod, node)
}
