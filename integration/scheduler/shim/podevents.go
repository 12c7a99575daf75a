//go:build !k8s1.35 && !k8s1.36

package shim

import fwk "k8s.io/kube-scheduler/framework"

// The pod resources eventsFor registers: the other pods, once bound
// (AssignedPod), and the pending pod itself (TargetPod). 1.37 split them
// out of the general Pod resource (podevents_k8s1.36.go).
const (
	assignedPod = fwk.AssignedPod
	targetPod   = fwk.TargetPod
)
