package testenv

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The harness itself: etcd and kube-apiserver come up in-process and serve
// the core API, and a kubeconfig for child processes is written.
func TestControlPlaneServesTheCoreAPI(t *testing.T) {
	etcd, err := StartEtcd(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Stop)
	cp, err := StartControlPlane(t, etcd, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Stop)

	node := MakeNode("n1", NodeResources{CPU: "4", Memory: "8Gi", Pods: 110}, map[string]string{"a": "b"})
	if err := CreateNodes(context.Background(), cp.Client, node); err != nil {
		t.Fatal(err)
	}
	got, err := cp.Client.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Allocatable.Cpu().String() != "4" {
		t.Errorf("node allocatable cpu = %s after create, want 4 (status must survive create)", got.Status.Allocatable.Cpu())
	}
	if len(got.Spec.Taints) != 0 {
		t.Errorf("node taints = %v after CreateNodes, want none (the scheduler would reject every pod)", got.Spec.Taints)
	}
	if _, err := ClientFromKubeconfig(cp.Kubeconfig); err != nil {
		t.Errorf("kubeconfig %s unusable: %v", cp.Kubeconfig, err)
	}
}
