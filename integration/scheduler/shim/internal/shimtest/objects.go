// Package shimtest builds the Kubernetes objects the shim's tests schedule:
// pods and snapshot-like NodeInfos. Test code only.
package shimtest

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// Pod is a pod in namespace default that requests 250m cpu and 64Mi.
func Pod(name string, labels map[string]string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name), Labels: labels},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("64Mi")},
		}}}},
	}
}

// Node is a snapshot-like NodeInfo (4 cpu, 8Gi, 110 pods) with `pods`
// running pods.
func Node(name string, labels map[string]string, pods int) *framework.NodeInfo {
	var ps []*v1.Pod
	for i := 0; i < pods; i++ {
		p := Pod(name+"-running-"+string(rune('a'+i)), nil)
		p.Spec.NodeName = name
		ps = append(ps, p)
	}
	ni := framework.NewNodeInfo(ps...)
	ni.SetNode(&v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110"),
		}},
	})
	return ni
}

// List is nis as the framework's node list.
func List(nis ...*framework.NodeInfo) []fwk.NodeInfo {
	out := make([]fwk.NodeInfo, len(nis))
	for i, n := range nis {
		out[i] = n
	}
	return out
}
