package twin

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// The packing twin scores as the native DeviceShare: devices in use on the
// node (labels and reservations in flight) plus the pod's request,
// normalized so that the fullest node gets 100; a pod asking for none is
// skipped.
func TestDeviceSharePackingScoresLikeTheNativePlugin(t *testing.T) {
	pl, err := NewDeviceSharePacking("GoDeviceShare")(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := pl.(*DeviceSharePacking)
	nodeInfo := func(name, count string, pods ...*v1.Pod) fwk.NodeInfo {
		ni := framework.NewNodeInfo(pods...)
		ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{DeviceCountLabel: count}}})
		return ni
	}
	empty := nodeInfo("empty", "8")
	busy := nodeInfo("busy", "8", devicePod("bound", nil, map[string]string{DeviceAssigned: "0-1"}))
	p.reserved["held"] = deviceReservation{node: "busy", namespace: "ns", name: "held", devices: []int{2}}
	none := nodeInfo("none", "0")
	pod := devicePod("new", map[string]string{DeviceRequest: "2"}, nil)

	if st := p.PreScore(context.Background(), nil, pod, nil); !st.IsSuccess() {
		t.Fatalf("PreScore of a device pod: %v", st)
	}
	if st := p.PreScore(context.Background(), nil, devicePod("plain", nil, nil), nil); !st.IsSkip() {
		t.Errorf("PreScore of a pod asking for no devices: %v, want Skip", st)
	}
	var scores fwk.NodeScoreList
	for _, ni := range []fwk.NodeInfo{empty, busy, none} {
		s, st := p.Score(context.Background(), nil, pod, ni)
		if !st.IsSuccess() {
			t.Fatalf("Score on %s: %v", ni.Node().Name, st)
		}
		scores = append(scores, fwk.NodeScore{Name: ni.Node().Name, Score: s})
	}
	if scores[0].Score != 2 || scores[1].Score != 5 || scores[2].Score != 0 {
		t.Fatalf("raw scores %v, want empty 2, busy 5 (2 labelled + 1 reserved + 2 asked), none 0", scores)
	}
	if st := p.ScoreExtensions().NormalizeScore(context.Background(), nil, pod, scores); st != nil {
		t.Fatal(st)
	}
	// (s - 0) * 100 / 5, rounded to nearest.
	if scores[0].Score != 40 || scores[1].Score != 100 || scores[2].Score != 0 {
		t.Errorf("normalized %v, want empty 40, busy 100, none 0", scores)
	}
}
