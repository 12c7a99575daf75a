package wire

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/abi"
	"schedplug.dev/integration/scheduler/shim/internal/shimtest"
)

// richPod has every field the v1.2 and v1.3 data bits cover.
func richPod(name, node string) *v1.Pod {
	yes := true
	p := shimtest.Pod(name, map[string]string{"app": "web", "tier": "front"})
	p.Spec.NodeName = node
	p.Status.NominatedNodeName = "nominated-1"
	p.Spec.PriorityClassName = "high"
	p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-7d9f", Controller: &yes}}
	p.Spec.Containers = []v1.Container{{
		Name: "main", Image: "registry.example/web:1.2",
		Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("256Mi")},
			Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")},
		},
		Ports: []v1.ContainerPort{{ContainerPort: 8080, HostPort: 9090, Protocol: v1.ProtocolTCP}},
	}}
	p.Spec.Volumes = []v1.Volume{
		{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "web-data", ReadOnly: true}}},
		{Name: "scratch", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}},
		{Name: "config", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}},
		{Name: "csi", VolumeSource: v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: "d", ReadOnly: &yes}}},
	}
	zone := "topology.kubernetes.io/zone"
	web := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	two := int32(2)
	honor := v1.NodeInclusionPolicyHonor
	p.Spec.Affinity = &v1.Affinity{
		NodeAffinity: &v1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
				{MatchExpressions: []v1.NodeSelectorRequirement{{Key: zone, Operator: v1.NodeSelectorOpIn, Values: []string{"z1", "z2"}}}},
				{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"n1"}}}},
			}},
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
				{Weight: 30, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "gpu", Operator: v1.NodeSelectorOpExists}}}},
			},
		},
		PodAffinity: &v1.PodAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{
				{Weight: 10, PodAffinityTerm: v1.PodAffinityTerm{TopologyKey: zone, LabelSelector: &metav1.LabelSelector{}, NamespaceSelector: &metav1.LabelSelector{}}},
			},
		},
		PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
				{TopologyKey: "kubernetes.io/hostname", LabelSelector: web, Namespaces: []string{"a", "b"}, MatchLabelKeys: []string{"pod-template-hash"}},
			},
		},
	}
	p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: zone, WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}}}},
		MinDomains:    &two, NodeAffinityPolicy: &honor, MatchLabelKeys: []string{"pod-template-hash"},
	}}
	return p
}

// richNode is a node with `pods` rich pods on it, cordoned, with
// conditions and capacity.
func richNode(name string, pods int) *framework.NodeInfo {
	var ps []*v1.Pod
	for i := 0; i < pods; i++ {
		ps = append(ps, richPod(fmt.Sprintf("%s-pod-%d", name, i), name))
	}
	ni := framework.NewNodeInfo(ps...)
	caps := v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110")}
	ni.SetNode(&v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": "z1"}},
		Spec:       v1.NodeSpec{Unschedulable: true},
		Status: v1.NodeStatus{
			Capacity: caps, Allocatable: caps,
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}, {Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse}},
			Images: []v1.ContainerImage{
				{Names: []string{"registry.example/web@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "registry.example/web:1.2"}, SizeBytes: 123 << 20},
				{Names: []string{"registry.k8s.io/pause:3.10"}, SizeBytes: 700 << 10},
			},
		},
	})
	return ni
}

// stripV12 clears every field the v1.2 data bits add (field numbers 10 and
// up of Pod and Node), leaving what a v1.1 shim sent.
func stripV12(m proto.Message) proto.Message {
	c := proto.Clone(m)
	var walk func(protoreflect.Message)
	walk = func(r protoreflect.Message) {
		name := r.Descriptor().Name()
		r.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			if (name == "Pod" || name == "Node") && fd.Number() >= 10 {
				r.Clear(fd)
				return true
			}
			if fd.Kind() == protoreflect.MessageKind {
				if fd.IsList() {
					for i := 0; i < v.List().Len(); i++ {
						walk(v.List().Get(i).Message())
					}
				} else if !fd.IsMap() {
					walk(v.Message())
				}
			}
			return true
		})
	}
	walk(c.ProtoReflect())
	return c
}

func TestConvertSendsOnlyDeclaredData(t *testing.T) {
	pod := richPod("p", "node-7")
	ni := richNode("n1", 2)

	bare := Pod(pod, 0)
	if !proto.Equal(bare, stripV12(bare)) {
		t.Errorf("convertPod with no data bits set a v1.2 field: %v", bare)
	}
	node := Node(ni, 3, 0)
	if !proto.Equal(node, stripV12(node)) {
		t.Errorf("convertNode with no data bits set a v1.2 field: %v", node)
	}

	// One bit at a time: only its field.
	if got := Pod(pod, abi.DataPodNodeName); got.GetNodeName() != "node-7" || got.GetPriorityClassName() != "" || len(got.GetContainers()) != 0 {
		t.Errorf("abi.DataPodNodeName alone: %v", got)
	}
	full := Pod(pod, abi.DataAll)
	if full.GetNodeName() != "node-7" || full.GetNominatedNodeName() != "nominated-1" || full.GetPriorityClassName() != "high" {
		t.Errorf("pod names: %v", full)
	}
	if o := full.GetOwners(); len(o) != 1 || o[0].GetKind() != "ReplicaSet" || o[0].GetName() != "web-7d9f" || !o[0].GetController() {
		t.Errorf("owners: %v", o)
	}
	c := full.GetContainers()
	if len(c) != 1 || c[0].GetImage() != "registry.example/web:1.2" || len(c[0].GetPorts()) != 1 ||
		c[0].GetPorts()[0].GetContainerPort() != 8080 || c[0].GetPorts()[0].GetHostPort() != 9090 || c[0].GetPorts()[0].GetProtocol() != "TCP" {
		t.Fatalf("containers: %v", c)
	}
	if r := c[0].GetRequests(); len(r) != 2 || r[0].GetName() != "cpu" || r[0].GetValue() != 250 || r[1].GetValue() != 256<<20 {
		t.Errorf("container requests: %v", r)
	}
	if l := c[0].GetLimits(); len(l) != 1 || l[0].GetValue() != 500 {
		t.Errorf("container limits: %v", l)
	}

	fn := Node(ni, 3, abi.DataAll)
	if !fn.GetUnschedulable() || len(fn.GetConditions()) != 2 || fn.GetConditions()[0].GetType() != "Ready" || fn.GetConditions()[0].GetStatus() != "True" {
		t.Errorf("node state: %v", fn)
	}
	if len(fn.GetCapacity()) != 3 || fn.GetCapacity()[0].GetName() != "cpu" || fn.GetCapacity()[0].GetValue() != 4000 {
		t.Errorf("capacity: %v", fn.GetCapacity())
	}
	ps := fn.GetPods()
	if len(ps) != 2 || ps[0].GetName() != "n1-pod-0" || ps[0].GetOwnerKind() != "ReplicaSet" || len(ps[0].GetLabels()) != 2 {
		t.Fatalf("pod list: %v", ps)
	}
	want := map[string]int64{"cpu": 250, "memory": 256 << 20, "pods": 1}
	for _, r := range ps[0].GetRequests() {
		if want[r.GetName()] != r.GetValue() {
			t.Errorf("listed pod request %s = %d, want %d", r.GetName(), r.GetValue(), want[r.GetName()])
		}
	}
	if only := Node(ni, 3, abi.DataNodePods); only.GetUnschedulable() || len(only.GetConditions()) != 0 || len(only.GetPods()) != 2 || len(only.GetImages()) != 0 {
		t.Errorf("abi.DataNodePods alone: %v", only)
	}

	// v1.3: volumes and images, each only with its bit.
	vs := full.GetVolumes()
	wantVolumes := []string{"data/persistentVolumeClaim/web-data/true", "scratch/ephemeral/p-scratch/false",
		"config/configMap//false", "csi/csi//true"}
	if len(vs) != len(wantVolumes) {
		t.Fatalf("volumes: %v", vs)
	}
	for i, v := range vs {
		if got := fmt.Sprintf("%s/%s/%s/%v", v.GetName(), v.GetSource(), v.GetClaimName(), v.GetReadOnly()); got != wantVolumes[i] {
			t.Errorf("volume %d: %s, want %s", i, got, wantVolumes[i])
		}
	}
	if only := Pod(pod, abi.DataPodVolumes); len(only.GetVolumes()) != 4 || len(only.GetContainers()) != 0 || only.GetNodeName() != "" {
		t.Errorf("abi.DataPodVolumes alone: %v", only)
	}
	if got := Pod(pod, abi.DataAll&^abi.DataPodVolumes); len(got.GetVolumes()) != 0 {
		t.Errorf("volumes sent without their bit: %v", got.GetVolumes())
	}

	// Node affinity, topology spread, pod (anti-)affinity.
	req, pref := full.GetNodeAffinityRequired(), full.GetNodeAffinityPreferred()
	if len(req) != 2 || req[0].GetWeight() != 0 || len(req[0].GetMatchExpressions()) != 1 ||
		req[0].GetMatchExpressions()[0].GetOperator() != "In" || fmt.Sprint(req[0].GetMatchExpressions()[0].GetValues()) != "[z1 z2]" ||
		len(req[1].GetMatchFields()) != 1 || req[1].GetMatchFields()[0].GetKey() != "metadata.name" {
		t.Errorf("required node affinity: %v", req)
	}
	if len(pref) != 1 || pref[0].GetWeight() != 30 || pref[0].GetMatchExpressions()[0].GetOperator() != "Exists" {
		t.Errorf("preferred node affinity: %v", pref)
	}
	ts := full.GetTopologySpread()
	if len(ts) != 1 || ts[0].GetMaxSkew() != 1 || ts[0].GetMinDomains() != 2 || ts[0].GetWhenUnsatisfiable() != "DoNotSchedule" ||
		ts[0].GetNodeAffinityPolicy() != "Honor" || ts[0].GetNodeTaintsPolicy() != "" ||
		ts[0].GetLabelSelector().GetMatchExpressions()[0].GetKey() != "app" || fmt.Sprint(ts[0].GetMatchLabelKeys()) != "[pod-template-hash]" {
		t.Errorf("topology spread: %v", ts)
	}
	if pa := full.GetPodAffinityPreferred(); len(pa) != 1 || pa[0].GetWeight() != 10 || pa[0].GetLabelSelector() == nil ||
		pa[0].GetNamespaceSelector() == nil || len(full.GetPodAffinityRequired()) != 0 {
		t.Errorf("pod affinity: %v / %v", full.GetPodAffinityRequired(), pa)
	}
	if anti := full.GetPodAntiAffinityRequired(); len(anti) != 1 || anti[0].GetTopologyKey() != "kubernetes.io/hostname" ||
		anti[0].GetLabelSelector().GetMatchLabels()[0].GetValue() != "web" || anti[0].GetNamespaceSelector() != nil ||
		fmt.Sprint(anti[0].GetNamespaces()) != "[a b]" || len(full.GetPodAntiAffinityPreferred()) != 0 {
		t.Errorf("pod anti-affinity: %v", anti)
	}
	for _, c := range []struct {
		bit  uint64
		name string
		has  func(*pb.Pod) bool
	}{
		{abi.DataPodNodeAffinity, "node affinity", func(p *pb.Pod) bool { return len(p.GetNodeAffinityRequired())+len(p.GetNodeAffinityPreferred()) > 0 }},
		{abi.DataPodTopologySpread, "topology spread", func(p *pb.Pod) bool { return len(p.GetTopologySpread()) > 0 }},
		{abi.DataPodAffinity, "pod affinity", func(p *pb.Pod) bool {
			return len(p.GetPodAffinityPreferred())+len(p.GetPodAntiAffinityRequired()) > 0
		}},
	} {
		if !c.has(Pod(pod, c.bit)) || c.has(Pod(pod, abi.DataAll&^c.bit)) {
			t.Errorf("%s is not sent exactly when its bit is declared", c.name)
		}
	}
	im := fn.GetImages()
	if len(im) != 2 || len(im[0].GetNames()) != 2 || im[0].GetNames()[1] != "registry.example/web:1.2" || im[0].GetSizeBytes() != 123<<20 ||
		im[1].GetNames()[0] != "registry.k8s.io/pause:3.10" {
		t.Errorf("images: %v", im)
	}
	if only := Node(ni, 3, abi.DataNodeImages); len(only.GetImages()) != 2 || len(only.GetPods()) != 0 || len(only.GetCapacity()) != 0 {
		t.Errorf("abi.DataNodeImages alone: %v", only)
	}
	if got := Node(ni, 3, abi.DataAll&^abi.DataNodeImages); len(got.GetImages()) != 0 {
		t.Errorf("images sent without their bit: %v", got.GetImages())
	}
}

// TestWireSizePerPreFilter prints the bytes a PreFilter request takes on
// the wire (a full table of 100 nodes with 10 pods each, and a steady-state
// delta of one changed node), for a scheduler whose plugins declare no data
// (after: this shim; before: the same request without the v1.2 fields,
// i.e. what the v1.1 shim sent) and for one that declares every bit.
func TestWireSizePerPreFilter(t *testing.T) {
	pod := richPod("incoming", "")
	var nodes []*framework.NodeInfo
	for i := 0; i < 100; i++ {
		nodes = append(nodes, richNode(fmt.Sprintf("node-%03d", i), 10))
	}
	request := func(data uint64, changed []*framework.NodeInfo) *pb.PreFilterRequest {
		r := &pb.PreFilterRequest{SessionId: "0123456789abcdef0123456789abcdef", SchedulerName: "default-scheduler",
			Pod: Pod(pod, data), Delta: &pb.NodeTableDelta{BaseVersion: 41, NewVersion: 42}}
		for i, ni := range changed {
			r.Delta.Upserts = append(r.Delta.Upserts, Node(ni, uint32(i), data))
		}
		return r
	}
	for _, c := range []struct {
		name    string
		changed []*framework.NodeInfo
	}{{"full table (100 nodes x 10 pods)", nodes}, {"one changed node", nodes[:1]}} {
		after := request(0, c.changed)
		before := stripV12(after)
		all := request(abi.DataAll, c.changed)
		fmt.Printf("PreFilter request bytes, %s: no data declared %d (before v1.2: %d), every data bit %d\n",
			c.name, proto.Size(after), proto.Size(before), proto.Size(all))
		if proto.Size(after) != proto.Size(before) {
			t.Errorf("%s: %d bytes with no data declared, %d before v1.2: a scheduler that declares nothing must send what it always sent", c.name, proto.Size(after), proto.Size(before))
		}
		if proto.Size(all) <= proto.Size(after) {
			t.Errorf("%s: declaring every data bit added nothing (%d bytes)", c.name, proto.Size(all))
		}
	}
}
