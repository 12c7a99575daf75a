package shim

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/gen/schedplugv1"
)

// Conversions from Kubernetes objects to the wire form. Quantities are sent
// in the canonical units the proto documents: cpu in millicores, memory and
// ephemeral-storage in bytes, pods as a count, extended resources as their
// integer value.

func convertPod(pod *v1.Pod) *pb.Pod {
	out := &pb.Pod{
		Namespace:    pod.Namespace,
		Name:         pod.Name,
		Uid:          string(pod.UID),
		Labels:       keyValues(pod.Labels),
		Annotations:  keyValues(pod.Annotations),
		Priority:     corev1helpers.PodPriority(pod),
		NodeSelector: keyValues(pod.Spec.NodeSelector),
	}
	// The same effective requests kube-scheduler's NodeResourcesFit uses:
	// max(init containers, sum of containers) plus pod overhead.
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	if _, ok := reqs[v1.ResourcePods]; !ok {
		// A pod occupies one of the node's pod slots.
		reqs[v1.ResourcePods] = *resource.NewQuantity(1, resource.DecimalSI)
	}
	out.Requests = resourceList(reqs)
	for i := range pod.Spec.Tolerations {
		t := &pod.Spec.Tolerations[i]
		out.Tolerations = append(out.Tolerations, &pb.Toleration{
			Key:               t.Key,
			Operator:          string(t.Operator),
			Value:             t.Value,
			Effect:            string(t.Effect),
			TolerationSeconds: t.TolerationSeconds,
		})
	}
	return out
}

// convertNode builds the state of one node as the NodeInfo describes it:
// labels, annotations and taints from the Node object, allocatable and
// requested from the NodeInfo's aggregates (which include assumed and, in
// preemption dry runs, removed or nominated pods).
func convertNode(ni fwk.NodeInfo, slot uint32) *pb.Node {
	node := ni.Node()
	out := &pb.Node{
		Index:       slot,
		Name:        node.Name,
		Generation:  ni.GetGeneration(),
		Labels:      keyValues(node.Labels),
		Annotations: keyValues(node.Annotations),
		PodCount:    uint32(len(ni.GetPods())),
	}
	for i := range node.Spec.Taints {
		t := &node.Spec.Taints[i]
		out.Taints = append(out.Taints, &pb.Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
	}
	out.Allocatable = schedResource(ni.GetAllocatable(), int64(ni.GetAllocatable().GetAllowedPodNumber()))
	out.Requested = schedResource(ni.GetRequested(), int64(len(ni.GetPods())))
	return out
}

func schedResource(r fwk.Resource, pods int64) []*pb.Resource {
	out := []*pb.Resource{
		{Name: string(v1.ResourceCPU), Value: r.GetMilliCPU()},
		{Name: string(v1.ResourceMemory), Value: r.GetMemory()},
		{Name: string(v1.ResourceEphemeralStorage), Value: r.GetEphemeralStorage()},
		{Name: string(v1.ResourcePods), Value: pods},
	}
	scalars := r.GetScalarResources()
	if len(scalars) == 0 {
		return out
	}
	names := make([]string, 0, len(scalars))
	for n := range scalars {
		names = append(names, string(n))
	}
	sort.Strings(names)
	for _, n := range names {
		out = append(out, &pb.Resource{Name: n, Value: scalars[v1.ResourceName(n)]})
	}
	return out
}

func resourceList(rl v1.ResourceList) []*pb.Resource {
	names := make([]string, 0, len(rl))
	for n := range rl {
		names = append(names, string(n))
	}
	sort.Strings(names)
	out := make([]*pb.Resource, 0, len(names)+1)
	for _, n := range names {
		q := rl[v1.ResourceName(n)]
		v := q.Value()
		if v1.ResourceName(n) == v1.ResourceCPU {
			v = q.MilliValue()
		}
		out = append(out, &pb.Resource{Name: n, Value: v})
	}
	return out
}

func keyValues(m map[string]string) []*pb.KeyValue {
	if len(m) == 0 {
		return nil
	}
	out := make([]*pb.KeyValue, 0, len(m))
	for k, v := range m {
		out = append(out, &pb.KeyValue{Key: k, Value: v})
	}
	return out
}
