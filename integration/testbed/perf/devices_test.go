package perf

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"schedplug.dev/integration/testbed/twin"
)

// deviceCheck is what the measured pods of a devices workload carry once
// the last of them is bound: each must be bound with the devices PreBind
// wrote (the label and the annotation), as many as it asked for, indices
// of its node, none shared with another pod of that node.
type deviceCheck struct {
	// Assigned counts the bound pods whose assignment is right.
	Assigned int `json:"assigned"`
	// Problems are the wrong ones and the indices held twice, as
	// sentences (the first maxDeviceProblems).
	Problems []string `json:"problems,omitempty"`
}

const maxDeviceProblems = 10

// readDevices lists the measured pods once the window is over and checks
// their devices.
func readDevices(ctx context.Context, client kubernetes.Interface) *deviceCheck {
	list, err := client.CoreV1().Pods(measureNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return &deviceCheck{Problems: []string{fmt.Sprintf("listing the measured pods to read their devices: %v", err)}}
	}
	c := checkDevices(list.Items, devicesPerNode)
	return &c
}

// checkDevices checks the devices of pods on nodes of perNode devices.
func checkDevices(pods []v1.Pod, perNode int) deviceCheck {
	var c deviceCheck
	var problems []string
	// "device D of node N" -> the pods holding it.
	holders := map[string][]string{}
	for i := range pods {
		p := &pods[i]
		devices, err := assignedDevices(p, perNode)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		c.Assigned++
		for _, d := range devices {
			k := fmt.Sprintf("device %d of node %s", d, p.Spec.NodeName)
			holders[k] = append(holders[k], p.Name)
		}
	}
	for k, names := range holders {
		if len(names) > 1 {
			sort.Strings(names)
			problems = append(problems, k+" is assigned to "+strings.Join(names, " and "))
		}
	}
	sort.Strings(problems)
	if len(problems) > maxDeviceProblems {
		problems = append(problems[:maxDeviceProblems], fmt.Sprintf("and %d more", len(problems)-maxDeviceProblems))
	}
	c.Problems = problems
	return c
}

// assignedDevices is the pod's devices as PreBind wrote them, or why they
// are wrong.
func assignedDevices(p *v1.Pod, perNode int) ([]int, error) {
	if p.Spec.NodeName == "" {
		return nil, fmt.Errorf("pod %s is not bound", p.Name)
	}
	request, err := strconv.Atoi(p.Annotations[twin.DeviceRequest])
	if err != nil {
		return nil, fmt.Errorf("pod %s: request annotation %q is not a number", p.Name, p.Annotations[twin.DeviceRequest])
	}
	label, ok := p.Labels[twin.DeviceAssigned]
	if !ok {
		return nil, fmt.Errorf("pod %s is bound to %s without the %s label PreBind writes", p.Name, p.Spec.NodeName, twin.DeviceAssigned)
	}
	if annotation := p.Annotations[twin.DeviceAssigned]; strings.ReplaceAll(label, "-", ",") != annotation {
		return nil, fmt.Errorf("pod %s: label %s=%q and annotation %q disagree", p.Name, twin.DeviceAssigned, label, annotation)
	}
	var devices []int
	seen := map[int]bool{}
	for _, part := range strings.Split(label, "-") {
		d, err := strconv.Atoi(part)
		if err != nil || d < 0 || d >= perNode || seen[d] {
			return nil, fmt.Errorf("pod %s: label %s=%q holds %q, not a distinct device index of a %d-device node", p.Name, twin.DeviceAssigned, label, part, perNode)
		}
		seen[d] = true
		devices = append(devices, d)
	}
	if len(devices) != request {
		return nil, fmt.Errorf("pod %s asked for %d devices and got %q", p.Name, request, label)
	}
	return devices, nil
}
