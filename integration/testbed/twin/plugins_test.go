package twin

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

const (
	hwLacks  = "node(s) didn't have hardware encryption (label node.kubernetes.io/hw-encrypt=true)"
	hwBad    = `pod's annotation myorg.io/require-hw-encrypt must be "true" or "false"`
	dnReason = "node(s) were dedicated (schedplug.io/dedicated=true) and the pod lacks annotation schedplug.io/dedicated-ok=true"
)

func nodeInfo(labels map[string]string) fwk.NodeInfo {
	ni := framework.NewNodeInfo()
	ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels}})
	return ni
}

func pod(ann map[string]string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Annotations: ann}}
}

// The table of plugins/hw-encrypt/README.md.
func TestHwEncryptTable(t *testing.T) {
	pl, err := NewHwEncrypt("GoHwEncrypt")(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := pl.(*HwEncrypt)
	const ann, lbl = DefaultHwAnnotation, DefaultHwLabel
	for _, c := range []struct {
		pod, node map[string]string
		skip      bool
		code      fwk.Code
		reason    string
	}{
		{pod: nil, node: nil, skip: true},
		{pod: map[string]string{ann: "false"}, node: nil, skip: true},
		{pod: map[string]string{"myorg.io/Require-HW-Encrypt": "true"}, node: nil, skip: true},
		{pod: map[string]string{ann: "true"}, node: map[string]string{lbl: "true"}, code: fwk.Success},
		{pod: map[string]string{ann: "true"}, node: nil, code: fwk.UnschedulableAndUnresolvable, reason: hwLacks},
		{pod: map[string]string{ann: "true"}, node: map[string]string{lbl: "false"}, code: fwk.UnschedulableAndUnresolvable, reason: hwLacks},
		{pod: map[string]string{ann: "true"}, node: map[string]string{lbl: "True"}, code: fwk.UnschedulableAndUnresolvable, reason: hwLacks},
		{pod: map[string]string{ann: "true"}, node: map[string]string{"node.kubernetes.io/HW-Encrypt": "true"}, code: fwk.UnschedulableAndUnresolvable, reason: hwLacks},
		{pod: map[string]string{ann: "yes"}, node: map[string]string{lbl: "true"}, code: fwk.UnschedulableAndUnresolvable, reason: hwBad},
		{pod: map[string]string{ann: "TRUE"}, node: nil, code: fwk.UnschedulableAndUnresolvable, reason: hwBad},
		{pod: map[string]string{ann: ""}, node: map[string]string{lbl: "true"}, code: fwk.UnschedulableAndUnresolvable, reason: hwBad},
	} {
		_, s := p.PreFilter(context.Background(), nil, pod(c.pod), nil)
		if got := s.IsSkip(); got != c.skip {
			t.Errorf("pod %v: PreFilter skip = %v, want %v", c.pod, got, c.skip)
		}
		if c.skip {
			continue
		}
		st := p.Filter(context.Background(), nil, pod(c.pod), nodeInfo(c.node))
		if st.Code() != c.code || (c.reason != "" && st.Message() != c.reason) {
			t.Errorf("pod %v node %v: Filter = %v %q, want %v %q", c.pod, c.node, st.Code(), st.Message(), c.code, c.reason)
		}
	}
}

// The table of plugins/dedicated-nodes/README.md, with custom args.
func TestDedicatedNodesTable(t *testing.T) {
	pl, err := NewDedicatedNodes("GoDedicatedNodes")(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := pl.(*DedicatedNodes)
	const ann, lbl = DefaultDedicatedAnnotation, DefaultDedicatedLabel
	for _, c := range []struct {
		pod, node map[string]string
		reject    bool
	}{
		{pod: nil, node: nil},
		{pod: nil, node: map[string]string{lbl: "false"}},
		{pod: nil, node: map[string]string{lbl: "TRUE"}},
		{pod: map[string]string{ann: "true"}, node: map[string]string{lbl: "true"}},
		{pod: nil, node: map[string]string{lbl: "true"}, reject: true},
		{pod: map[string]string{ann: "false"}, node: map[string]string{lbl: "true"}, reject: true},
		{pod: map[string]string{ann: "True"}, node: map[string]string{lbl: "true"}, reject: true},
		{pod: map[string]string{"schedplug.io/Dedicated-OK": "true"}, node: map[string]string{lbl: "true"}, reject: true},
	} {
		st := p.Filter(context.Background(), nil, pod(c.pod), nodeInfo(c.node))
		if c.reject != !st.IsSuccess() || (c.reject && (st.Code() != fwk.UnschedulableAndUnresolvable || st.Message() != dnReason)) {
			t.Errorf("pod %v node %v: Filter = %v %q, want reject=%v", c.pod, c.node, st.Code(), st.Message(), c.reject)
		}
	}

	args := &runtime.Unknown{Raw: []byte(`{"nodeLabel":"x.io/d","podAnnotation":"x.io/ok"}`)}
	pl, err = NewDedicatedNodes("GoDedicatedNodes")(context.Background(), args, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := pl.(*DedicatedNodes).Filter(context.Background(), nil, pod(nil), nodeInfo(map[string]string{"x.io/d": "true"}))
	if want := "node(s) were dedicated (x.io/d=true) and the pod lacks annotation x.io/ok=true"; st.Message() != want {
		t.Errorf("custom args: reason %q, want %q", st.Message(), want)
	}
}

func TestArgsErrors(t *testing.T) {
	for raw, want := range map[string]string{
		`{"nodelabel":"a"}`: `unknown arg "nodelabel"; did you mean "nodeLabel"?`,
		`{"other":"a"}`:     `unknown arg "other"; known args: podAnnotation, nodeLabel`,
		`{"nodeLabel":""}`:  `arg "nodeLabel" must be a non-empty string, got ""`,
		`{"nodeLabel":3}`:   `arg "nodeLabel" must be a non-empty string, got 3`,
		`["nodeLabel"]`:     `pluginConfig args must be an object`,
	} {
		_, err := NewHwEncrypt("GoHwEncrypt")(context.Background(), &runtime.Unknown{Raw: []byte(raw)}, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("args %s: error %v, want one containing %q", raw, err, want)
		}
	}
	for raw, want := range map[string]string{
		`{}`:                         "arg pairs is empty",
		`{"pairs":[{"native":"A"}]}`: "needs both a native and a twin",
		`{"pairs":[], "x":1}`:        `unknown arg "x"`,
		`{"pairs":"A"}`:              "must be a list",
	} {
		_, err := NewCheck(context.Background(), &runtime.Unknown{Raw: []byte(raw)}, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("TwinCheck args %s: error %v, want one containing %q", raw, err, want)
		}
	}
}
