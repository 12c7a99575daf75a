package simannot

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/metrics/testutil"
)

func count(t *testing.T, result string) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(results.WithLabelValues(result))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func podObject(ns, name string, uid types.UID, annotations map[string]string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: uid, Annotations: annotations}}
}

// One merge patch per pod: the annotations are set, the pod's own kept,
// a stale left-out count from an earlier cycle removed.
func TestWriterPatchesThePodOnce(t *testing.T) {
	client := fake.NewClientset(podObject("explain", "placed", "uid-1", map[string]string{"team": "a", NodesLeftOutKey: "12"}))
	w := NewWriter(client, Options{QPS: 1000})
	defer w.Close()
	written := count(t, "written")
	w.Enqueue(explainCycle())
	var pod *v1.Pod
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var err error
		if pod, err = client.CoreV1().Pods("explain").Get(context.Background(), "placed", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		// The count follows the patch's answer.
		if pod.Annotations[SelectedNodeKey] != "" && count(t, "written") > written || time.Now().After(deadline) {
			break
		}
	}
	want := explainCycle().Result().Annotations(DefaultBudget)
	for k, v := range want {
		got, ok := pod.Annotations[k]
		if v == nil && ok || v != nil && got != *v {
			t.Errorf("annotation %s = %q (present %v); want %v", k, got, ok, deref(v))
		}
	}
	if pod.Annotations["team"] != "a" {
		t.Errorf("the pod's own annotation was lost: %v", pod.Annotations)
	}
	patches := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "patch" {
			patches++
		}
	}
	if patches != 1 || count(t, "written")-written != 1 {
		t.Errorf("%d patches, %v counted written; want 1", patches, count(t, "written")-written)
	}
}

// The queue holds one entry per pod (the newest cycle wins) and at most
// Queue pods; the rest are dropped and counted.
func TestWriterQueueCoalescesAndIsBounded(t *testing.T) {
	w := newWriter(fake.NewClientset(), Options{Queue: 2})
	replaced, dropped := count(t, "replaced"), count(t, "dropped")
	answersOf := func(name string, uid types.UID) *CycleAnswers {
		return NewCycleAnswers(PodRef{Namespace: "ns", Name: name, UID: uid}, nil, nil, 0)
	}
	a1, a2, b, c := answersOf("a", "ua"), answersOf("a", "ua"), answersOf("b", "ub"), answersOf("c", "uc")
	for _, r := range []*CycleAnswers{a1, b, a2, c} {
		w.Enqueue(r)
	}
	if got := []*CycleAnswers{w.next(), w.next(), w.next()}; got[0] != a2 || got[1] != b || got[2] != nil {
		t.Errorf("queue gave %v; want a's newer answers, then b's, then none", got)
	}
	// A pod's newer answers wait while its patch is under way.
	a3 := answersOf("a", "ua")
	w.Enqueue(a3)
	if got := w.next(); got != nil {
		t.Errorf("queue gave %v while a's patch is under way; want none", got)
	}
	w.finish(a2)
	if got := w.next(); got != a3 {
		t.Errorf("queue gave %v after a's patch; want a's newest answers", got)
	}
	if count(t, "replaced")-replaced != 1 || count(t, "dropped")-dropped != 1 {
		t.Errorf("replaced %v, dropped %v; want 1 and 1", count(t, "replaced")-replaced, count(t, "dropped")-dropped)
	}
}

// A pod deleted before its patch is counted gone, not failed.
func TestWriterCountsDeletedPodsGone(t *testing.T) {
	w := newWriter(fake.NewClientset(), Options{})
	gone, failed := count(t, "gone"), count(t, "failed")
	w.write(context.Background(), explainCycle())
	if count(t, "gone")-gone != 1 || count(t, "failed") != failed {
		t.Errorf("gone +%v, failed +%v; want gone +1", count(t, "gone")-gone, count(t, "failed")-failed)
	}
}

// The API server refuses a patch whose uid is not the pod's as an
// immutable field: the name belongs to another pod now.
func TestUIDChangedIsTheUIDsImmutability(t *testing.T) {
	pod := schema.GroupKind{Kind: "Pod"}
	uid := apierrors.NewInvalid(pod, "p", field.ErrorList{field.Invalid(field.NewPath("metadata", "uid"), "u2", "field is immutable")})
	other := apierrors.NewInvalid(pod, "p", field.ErrorList{field.TooLong(field.NewPath("metadata", "annotations"), "", 262144)})
	if !uidChanged(uid) || uidChanged(other) {
		t.Errorf("uidChanged(uid) = %v, uidChanged(annotations too long) = %v; want true, false", uidChanged(uid), uidChanged(other))
	}
}
