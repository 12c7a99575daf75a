// Package wire converts what kube-scheduler hands the shim (the pod being
// scheduled, the snapshot's NodeInfos) into the schedplug.v1 messages the
// host reads.
package wire

import (
	"reflect"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/storage/ephemeral"
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/abi"
)

// Conversions from Kubernetes objects to the wire form. Quantities are sent
// in the canonical units the proto documents: cpu in millicores, memory and
// ephemeral-storage in bytes, pods as a count, extended resources as their
// integer value.

// Pod converts the pod being scheduled; `data` selects the extra fields
// (the abi.Data* bits the host's plugins declared).
func Pod(pod *v1.Pod, data abi.DataBits) *pb.Pod {
	out := &pb.Pod{
		Namespace:    pod.Namespace,
		Name:         pod.Name,
		Uid:          string(pod.UID),
		Labels:       keyValues(pod.Labels),
		Annotations:  keyValues(pod.Annotations),
		Priority:     corev1helpers.PodPriority(pod),
		NodeSelector: keyValues(pod.Spec.NodeSelector),
	}
	out.Requests = podRequests(pod)
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
	if data != 0 {
		addPodData(out, pod, data)
	}
	return out
}

func addPodData(out *pb.Pod, pod *v1.Pod, data abi.DataBits) {
	if data&abi.DataPodNodeName != 0 {
		out.NodeName = pod.Spec.NodeName
	}
	if data&abi.DataPodNominatedNode != 0 {
		out.NominatedNodeName = pod.Status.NominatedNodeName
	}
	if data&abi.DataPodPriorityClass != 0 {
		out.PriorityClassName = pod.Spec.PriorityClassName
	}
	if data&abi.DataPodOwners != 0 {
		for _, o := range pod.OwnerReferences {
			out.Owners = append(out.Owners, &pb.OwnerRef{Kind: o.Kind, Name: o.Name, Controller: o.Controller != nil && *o.Controller})
		}
	}
	if data&abi.DataPodContainers != 0 {
		for i := range pod.Spec.Containers {
			out.Containers = append(out.Containers, container(&pod.Spec.Containers[i]))
		}
	}
	if data&abi.DataPodVolumes != 0 {
		for i := range pod.Spec.Volumes {
			out.Volumes = append(out.Volumes, convertVolume(pod, &pod.Spec.Volumes[i]))
		}
	}
	aff := pod.Spec.Affinity
	if data&abi.DataPodNodeAffinity != 0 && aff != nil && aff.NodeAffinity != nil {
		addNodeAffinity(out, aff.NodeAffinity)
	}
	if data&abi.DataPodTopologySpread != 0 {
		for i := range pod.Spec.TopologySpreadConstraints {
			out.TopologySpread = append(out.TopologySpread, topologySpread(&pod.Spec.TopologySpreadConstraints[i]))
		}
	}
	if data&abi.DataPodAffinity != 0 && aff != nil {
		if pa := aff.PodAffinity; pa != nil {
			out.PodAffinityRequired = podAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution)
			out.PodAffinityPreferred = weightedPodAffinityTerms(pa.PreferredDuringSchedulingIgnoredDuringExecution)
		}
		if pa := aff.PodAntiAffinity; pa != nil {
			out.PodAntiAffinityRequired = podAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution)
			out.PodAntiAffinityPreferred = weightedPodAffinityTerms(pa.PreferredDuringSchedulingIgnoredDuringExecution)
		}
	}
}

func container(c *v1.Container) *pb.Container {
	pc := &pb.Container{Name: c.Name, Image: c.Image}
	if len(c.Resources.Requests) > 0 {
		pc.Requests = resourceList(c.Resources.Requests)
	}
	if len(c.Resources.Limits) > 0 {
		pc.Limits = resourceList(c.Resources.Limits)
	}
	for _, p := range c.Ports {
		pc.Ports = append(pc.Ports, &pb.ContainerPort{ContainerPort: p.ContainerPort, HostPort: p.HostPort, Protocol: string(p.Protocol), HostIp: p.HostIP})
	}
	return pc
}

func addNodeAffinity(out *pb.Pod, na *v1.NodeAffinity) {
	if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
		for i := range req.NodeSelectorTerms {
			out.NodeAffinityRequired = append(out.NodeAffinityRequired, nodeSelectorTerm(&req.NodeSelectorTerms[i], 0))
		}
	}
	for i := range na.PreferredDuringSchedulingIgnoredDuringExecution {
		p := &na.PreferredDuringSchedulingIgnoredDuringExecution[i]
		out.NodeAffinityPreferred = append(out.NodeAffinityPreferred, nodeSelectorTerm(&p.Preference, p.Weight))
	}
}

func topologySpread(c *v1.TopologySpreadConstraint) *pb.TopologySpreadConstraint {
	tc := &pb.TopologySpreadConstraint{MaxSkew: c.MaxSkew, TopologyKey: c.TopologyKey,
		WhenUnsatisfiable: string(c.WhenUnsatisfiable), LabelSelector: labelSelector(c.LabelSelector),
		MatchLabelKeys: c.MatchLabelKeys}
	if c.MinDomains != nil {
		tc.MinDomains = *c.MinDomains
	}
	if c.NodeAffinityPolicy != nil {
		tc.NodeAffinityPolicy = string(*c.NodeAffinityPolicy)
	}
	if c.NodeTaintsPolicy != nil {
		tc.NodeTaintsPolicy = string(*c.NodeTaintsPolicy)
	}
	return tc
}

func requirements[R v1.NodeSelectorRequirement | metav1.LabelSelectorRequirement](rs []R) []*pb.SelectorRequirement {
	if len(rs) == 0 {
		return nil
	}
	out := make([]*pb.SelectorRequirement, 0, len(rs))
	for i := range rs {
		switch r := any(&rs[i]).(type) {
		case *v1.NodeSelectorRequirement:
			out = append(out, &pb.SelectorRequirement{Key: r.Key, Operator: string(r.Operator), Values: r.Values})
		case *metav1.LabelSelectorRequirement:
			out = append(out, &pb.SelectorRequirement{Key: r.Key, Operator: string(r.Operator), Values: r.Values})
		}
	}
	return out
}

func nodeSelectorTerm(t *v1.NodeSelectorTerm, weight int32) *pb.NodeSelectorTerm {
	return &pb.NodeSelectorTerm{Weight: weight, MatchExpressions: requirements(t.MatchExpressions), MatchFields: requirements(t.MatchFields)}
}

// labelSelector converts a selector; nil stays nil (unset).
func labelSelector(s *metav1.LabelSelector) *pb.LabelSelector {
	if s == nil {
		return nil
	}
	return &pb.LabelSelector{MatchLabels: keyValues(s.MatchLabels), MatchExpressions: requirements(s.MatchExpressions)}
}

func podAffinityTerm(t *v1.PodAffinityTerm, weight int32) *pb.PodAffinityTerm {
	return &pb.PodAffinityTerm{Weight: weight, TopologyKey: t.TopologyKey, LabelSelector: labelSelector(t.LabelSelector),
		Namespaces: t.Namespaces, NamespaceSelector: labelSelector(t.NamespaceSelector),
		MatchLabelKeys: t.MatchLabelKeys, MismatchLabelKeys: t.MismatchLabelKeys}
}

func podAffinityTerms(ts []v1.PodAffinityTerm) []*pb.PodAffinityTerm {
	var out []*pb.PodAffinityTerm
	for i := range ts {
		out = append(out, podAffinityTerm(&ts[i], 0))
	}
	return out
}

func weightedPodAffinityTerms(ts []v1.WeightedPodAffinityTerm) []*pb.PodAffinityTerm {
	var out []*pb.PodAffinityTerm
	for i := range ts {
		out = append(out, podAffinityTerm(&ts[i].PodAffinityTerm, ts[i].Weight))
	}
	return out
}

// volumeSourceKeys are the JSON keys of v1.VolumeSource's fields, by index.
var volumeSourceKeys = func() []string {
	t := reflect.TypeOf(v1.VolumeSource{})
	keys := make([]string, t.NumField())
	for i := range keys {
		keys[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return keys
}()

// convertVolume names the volume's source by its key in the pod spec (the
// one set field of VolumeSource) and the PersistentVolumeClaim it uses.
func convertVolume(pod *v1.Pod, vol *v1.Volume) *pb.Volume {
	out := &pb.Volume{Name: vol.Name}
	src := reflect.ValueOf(&vol.VolumeSource).Elem()
	for i, key := range volumeSourceKeys {
		if f := src.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			out.Source = key
			// Most sources with a ReadOnly field have it as a bool, csi as
			// a *bool.
			if ro := f.Elem().FieldByName("ReadOnly"); ro.IsValid() {
				switch ro.Kind() {
				case reflect.Bool:
					out.ReadOnly = ro.Bool()
				case reflect.Pointer:
					out.ReadOnly = !ro.IsNil() && ro.Elem().Bool()
				}
			}
			break
		}
	}
	switch {
	case vol.PersistentVolumeClaim != nil:
		out.ClaimName = vol.PersistentVolumeClaim.ClaimName
	case vol.Ephemeral != nil:
		// The claim Kubernetes creates for a generic ephemeral volume.
		out.ClaimName = ephemeral.VolumeClaimName(pod, vol)
	}
	return out
}

// podRequests is the pod's effective requests as kube-scheduler's
// NodeResourcesFit computes them (max of init containers and the sum of
// containers, plus overhead), with the pod slot it occupies.
func podRequests(pod *v1.Pod) []*pb.Resource {
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	if _, ok := reqs[v1.ResourcePods]; !ok {
		reqs[v1.ResourcePods] = *resource.NewQuantity(1, resource.DecimalSI)
	}
	return resourceList(reqs)
}

// Node builds the state of one node as the NodeInfo describes it:
// labels, annotations and taints from the Node object, allocatable and
// requested from the NodeInfo's aggregates (which include assumed and, in
// preemption dry runs, removed or nominated pods). `data` selects the
// extra fields (the abi.Data* bits).
func Node(ni fwk.NodeInfo, slot uint32, data abi.DataBits) *pb.Node {
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
	if data != 0 {
		addNodeData(out, ni, data)
	}
	return out
}

func addNodeData(out *pb.Node, ni fwk.NodeInfo, data abi.DataBits) {
	node := ni.Node()
	if data&abi.DataNodeUnschedulable != 0 {
		out.Unschedulable = node.Spec.Unschedulable
	}
	if data&abi.DataNodeConditions != 0 {
		for _, c := range node.Status.Conditions {
			out.Conditions = append(out.Conditions, &pb.NodeCondition{Type: string(c.Type), Status: string(c.Status)})
		}
	}
	if data&abi.DataNodeCapacity != 0 && len(node.Status.Capacity) > 0 {
		out.Capacity = resourceList(node.Status.Capacity)
	}
	if data&abi.DataNodePods != 0 {
		pods := ni.GetPods()
		out.Pods = make([]*pb.NodePod, 0, len(pods))
		for _, pi := range pods {
			p := pi.GetPod()
			np := &pb.NodePod{
				Namespace: p.Namespace,
				Name:      p.Name,
				Labels:    keyValues(p.Labels),
				Priority:  corev1helpers.PodPriority(p),
				Requests:  podRequests(p),
			}
			if owner := metav1.GetControllerOf(p); owner != nil {
				np.OwnerKind = owner.Kind
			}
			out.Pods = append(out.Pods, np)
		}
	}
	if data&abi.DataNodeImages != 0 {
		for i := range node.Status.Images {
			img := &node.Status.Images[i]
			out.Images = append(out.Images, &pb.NodeImage{Names: img.Names, SizeBytes: img.SizeBytes})
		}
	}
}

func schedResource(r fwk.Resource, pods int64) []*pb.Resource {
	// The four messages in one allocation: each node sent converts two
	// lists.
	fixed := new([4]pb.Resource)
	fixed[0].Name, fixed[0].Value = string(v1.ResourceCPU), r.GetMilliCPU()
	fixed[1].Name, fixed[1].Value = string(v1.ResourceMemory), r.GetMemory()
	fixed[2].Name, fixed[2].Value = string(v1.ResourceEphemeralStorage), r.GetEphemeralStorage()
	fixed[3].Name, fixed[3].Value = string(v1.ResourcePods), pods
	scalars := r.GetScalarResources()
	out := make([]*pb.Resource, 4, 4+len(scalars))
	for i := range fixed {
		out[i] = &fixed[i]
	}
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
