//go:build k8s1.35 || k8s1.36

package shim

import (
	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// pendingPodUpdateEvents are the events kube-scheduler's queue makes of an
// update of the pending pod itself; before 1.37 it does not tell the
// pending pod from others (podevents_test.go).
func pendingPodUpdateEvents(newPod, oldPod *v1.Pod) []fwk.ClusterEvent {
	return framework.PodSchedulingPropertiesChange(newPod, oldPod)
}
