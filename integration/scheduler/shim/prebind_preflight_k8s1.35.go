//go:build k8s1.35

package shim

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// PreBindPreFlight in 1.35's signature, without a result
// (prebind_preflight.go).
func (x preBindExt) PreBindPreFlight(_ context.Context, _ fwk.CycleState, _ *v1.Pod, _ string) *fwk.Status {
	return x.p.preBindPreFlight()
}
