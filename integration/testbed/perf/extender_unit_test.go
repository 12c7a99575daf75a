package perf

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"schedplug.dev/integration/testbed/twin"
)

// The extender variant gives the twins' verdicts, over HTTP as
// kube-scheduler calls it.
func TestExtenderFiltersLikeTheTwins(t *testing.T) {
	node := func(name string, labels map[string]string) v1.Node {
		return v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	nodes := &v1.NodeList{Items: []v1.Node{
		node("plain", nil),
		node("encrypting", map[string]string{twin.DefaultHwLabel: "true"}),
		node("dedicated", map[string]string{twin.DefaultDedicatedLabel: "true"}),
	}}
	ask := func(annotations map[string]string) *extenderv1.ExtenderFilterResult {
		t.Helper()
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: annotations}}
		var out extenderv1.ExtenderFilterResult
		callExtender(t, "filter", extenderv1.ExtenderArgs{Pod: pod, Nodes: nodes}, &out)
		if out.Error != "" {
			t.Fatalf("extender error: %s", out.Error)
		}
		return &out
	}
	names := func(r *extenderv1.ExtenderFilterResult) []string {
		var n []string
		for _, node := range r.Nodes.Items {
			n = append(n, node.Name)
		}
		return n
	}

	plain := ask(nil)
	if got := names(plain); !slices.Equal(got, []string{"plain", "encrypting"}) {
		t.Errorf("pod without annotations passes %v, want [plain encrypting]", got)
	}
	if _, ok := plain.FailedAndUnresolvableNodes["dedicated"]; !ok {
		t.Errorf("dedicated node not refused as unresolvable: %+v", plain)
	}
	hw := ask(map[string]string{twin.DefaultHwAnnotation: "true"})
	if got := names(hw); !slices.Equal(got, []string{"encrypting"}) {
		t.Errorf("pod needing encryption passes %v, want [encrypting]", got)
	}
	if len(hw.FailedAndUnresolvableNodes) != 2 {
		t.Errorf("pod needing encryption: unresolvable %v, want plain and dedicated", hw.FailedAndUnresolvableNodes)
	}
}

// The extender's prioritize gives NetworkLatency's normalized scores on
// the extender scale [0, 10], rounded down: node-c (0.8 ms) 10, node-b
// (3 ms, 98 of 100) 9, the unlisted node (the 100 ms default) 0.
func TestExtenderPrioritizesLikeTheTwin(t *testing.T) {
	nodes := &v1.NodeList{Items: []v1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "node-c"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "node-b"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "random-name"}},
	}}
	var got extenderv1.HostPriorityList
	callExtender(t, "prioritize", extenderv1.ExtenderArgs{Pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, Nodes: nodes}, &got)
	want := extenderv1.HostPriorityList{{Host: "node-c", Score: 10}, {Host: "node-b", Score: 9}, {Host: "random-name", Score: 0}}
	if !slices.Equal(got, want) {
		t.Errorf("prioritize gave %v, want %v", got, want)
	}
}

// callExtender posts args to the extender's verb as kube-scheduler does
// and decodes the answer into out.
func callExtender(t *testing.T, verb string, args extenderv1.ExtenderArgs, out any) {
	t.Helper()
	body, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(extenderURL()+"/"+verb, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}
