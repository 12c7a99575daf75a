package perf

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"schedplug.dev/integration/testbed/twin"
)

// checkDevices finds every way a devices run can go wrong: a pod unbound
// or without its label, a label and annotation that disagree, indices
// outside the node or not as many as asked, and one index of a node held
// by two pods.
func TestCheckDevices(t *testing.T) {
	pod := func(name, node, request, label, annotation string) v1.Pod {
		p := v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{twin.DeviceRequest: request}}}
		p.Spec.NodeName = node
		if label != "" {
			p.Labels = map[string]string{twin.DeviceAssigned: label}
		}
		if annotation != "" {
			p.Annotations[twin.DeviceAssigned] = annotation
		}
		return p
	}
	good := []v1.Pod{pod("a", "n1", "1", "0", "0"), pod("b", "n1", "2", "1-2", "1,2"), pod("c", "n2", "2", "0-1", "0,1")}
	if c := checkDevices(good, 4); c.Assigned != 3 || len(c.Problems) != 0 {
		t.Errorf("right assignments: %+v, want 3 assigned and no problem", c)
	}
	for _, bad := range []struct {
		pod  v1.Pod
		want string
	}{
		{pod("d", "", "1", "", ""), "pod d is not bound"},
		{pod("d", "n3", "1", "", ""), "pod d is bound to n3 without the devices.schedplug.dev/assigned label"},
		{pod("d", "n3", "2", "0-1", "0,2"), `label devices.schedplug.dev/assigned="0-1" and annotation "0,2" disagree`},
		{pod("d", "n3", "1", "4", "4"), `holds "4", not a distinct device index of a 4-device node`},
		{pod("d", "n3", "2", "1-1", "1,1"), `holds "1", not a distinct device index`},
		{pod("d", "n3", "2", "3", "3"), `pod d asked for 2 devices and got "3"`},
		{pod("d", "n1", "1", "2", "2"), "device 2 of node n1 is assigned to b and d"},
	} {
		c := checkDevices(append(append([]v1.Pod(nil), good...), bad.pod), 4)
		if len(c.Problems) != 1 || !strings.Contains(c.Problems[0], bad.want) {
			t.Errorf("%s: problems %q, want one containing %q", bad.want, c.Problems, bad.want)
		}
	}
	var many []v1.Pod
	for i := 0; i < maxDeviceProblems+3; i++ {
		many = append(many, pod("x", "", "1", "", ""))
	}
	if c := checkDevices(many, 4); len(c.Problems) != maxDeviceProblems+1 || c.Problems[maxDeviceProblems] != "and 3 more" {
		t.Errorf("%d problems: %q, want the first %d and a count of the rest", len(many), c.Problems, maxDeviceProblems)
	}
}
