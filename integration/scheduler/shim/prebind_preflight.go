//go:build !k8s1.35

package shim

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// PreBindPreFlight: the plugin's PreBind runs alone (not AllowParallel:
// the profile's plugins share one call). 1.35's signature has no result
// (prebind_preflight_k8s1.35.go).
func (x preBindExt) PreBindPreFlight(_ context.Context, _ fwk.CycleState, _ *v1.Pod, _ string) (*fwk.PreBindPreFlightResult, *fwk.Status) {
	return nil, x.p.preBindPreFlight()
}
