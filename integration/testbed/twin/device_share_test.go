package twin

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func devicePod(name string, ann, labels map[string]string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name), Annotations: ann, Labels: labels}}
}

// Filter counts the devices of the node's labelled pods and of the
// reservations in flight there; Unreserve releases one; a reservation whose
// pod shows on the node with its label is dropped (the label counts).
func TestDeviceShareFilterCountsReservations(t *testing.T) {
	pl, err := NewDeviceShare("GoDeviceShare")(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := pl.(*DeviceShare)
	node := framework.NewNodeInfo(devicePod("bound", nil, map[string]string{DeviceAssigned: "0-1"}))
	node.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{DeviceCountLabel: "4"}}})
	var ni fwk.NodeInfo = node
	asks := func(k string) *v1.Pod { return devicePod("new", map[string]string{DeviceRequest: k}, nil) }
	check := func(what string, pod *v1.Pod, wantFit bool) {
		t.Helper()
		st := p.Filter(context.Background(), nil, pod, ni)
		if st.IsSuccess() != wantFit || (!wantFit && st.Message() != DeviceTooFewReason) {
			t.Errorf("%s: Filter = %v, want fit %v", what, st, wantFit)
		}
	}
	check("2 of the 2 free", asks("2"), true)
	check("3 of the 2 free", asks("3"), false)
	check("a pod asking for none", devicePod("plain", nil, nil), true)

	p.reserved["held"] = deviceReservation{node: "n", namespace: "ns", name: "held", devices: []int{2}}
	check("2 with one free and one reserved", asks("2"), false)
	p.Unreserve(context.Background(), nil, devicePod("held", nil, nil), "n")
	check("2 after Unreserve", asks("2"), true)

	p.reserved["bound"] = deviceReservation{node: "n", namespace: "ns", name: "bound", devices: []int{0, 1}}
	check("2 with the bound pod's own reservation", asks("2"), true)
	if len(p.reserved) != 0 {
		t.Errorf("reservations left after the pod showed on its node with its label: %v", p.reserved)
	}
}
