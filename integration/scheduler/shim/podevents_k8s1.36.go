//go:build k8s1.35 || k8s1.36

package shim

import fwk "k8s.io/kube-scheduler/framework"

// Before 1.37 kube-scheduler has only the general Pod resource, which
// covers both the bound pods and the pending pod itself (podevents.go): a
// pod rejected by a native plugin may be requeued on a few more pod
// updates than from 1.37 on, never fewer.
const (
	assignedPod = fwk.Pod
	targetPod   = fwk.Pod
)
