package e2e

import (
	corev1 "k8s.io/api/core/v1"

	"schedplug.dev/integration/testbed/testenv"
)

// The sample plugins' keys (their defaults; see plugins/*/).
const (
	hwAnnotation        = "myorg.io/require-hw-encrypt"
	hwLabel             = "node.kubernetes.io/hw-encrypt"
	dedicatedLabel      = "schedplug.io/dedicated"
	dedicatedAnnotation = "schedplug.io/dedicated-ok"

	// HwEncrypt's Unschedulable reason, as kube-scheduler aggregates it.
	hwReason = "node(s) didn't have hardware encryption (label node.kubernetes.io/hw-encrypt=true)"
)

var (
	needsHw     = map[string]string{hwAnnotation: "true"}
	dedicatedOK = map[string]string{dedicatedAnnotation: "true"}
	hwNode      = map[string]string{hwLabel: "true"}
	dedicated   = map[string]string{dedicatedLabel: "true"}
	bigNode     = testenv.NodeResources{CPU: "16", Memory: "64Gi", Pods: 110}
)

func hostnameSelector(node string) map[string]string {
	return map[string]string{corev1.LabelHostname: node}
}

// policyViolation says why pod (with annotations) may not run on node (with
// labels) under HwEncrypt and DedicatedNodes, or "" if it may.
func policyViolation(podAnnotations, nodeLabels map[string]string) string {
	if podAnnotations[hwAnnotation] == "true" && nodeLabels[hwLabel] != "true" {
		return "lacks hardware encryption, which the pod requires (HwEncrypt)"
	}
	if nodeLabels[dedicatedLabel] == "true" && podAnnotations[dedicatedAnnotation] != "true" {
		return "is dedicated, and the pod lacks " + dedicatedAnnotation + " (DedicatedNodes)"
	}
	return ""
}
