package abi

import (
	"testing"

	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// plugin.h's codes, the proto's and kube-scheduler's are one set of values:
// the shim passes codes through without a table.
func TestCodesAreTheProtosAndTheFrameworks(t *testing.T) {
	for _, c := range []struct {
		abi   Code
		proto pb.Code
		fwk   fwk.Code
	}{
		{CodeSuccess, pb.Code_CODE_SUCCESS, fwk.Success},
		{CodeError, pb.Code_CODE_ERROR, fwk.Error},
		{CodeUnschedulable, pb.Code_CODE_UNSCHEDULABLE, fwk.Unschedulable},
		{CodeUnschedulableAndUnresolvable, pb.Code_CODE_UNSCHEDULABLE_AND_UNRESOLVABLE, fwk.UnschedulableAndUnresolvable},
		{CodeSkip, pb.Code_CODE_SKIP, fwk.Skip},
	} {
		if int32(c.abi) != int32(c.proto) || int32(c.abi) != int32(c.fwk) {
			t.Errorf("code %d: proto %s = %d, framework %s = %d", c.abi, c.proto, int32(c.proto), c.fwk, int32(c.fwk))
		}
	}
}
