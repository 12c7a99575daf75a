package twin

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
)

// The native DeviceShare's keys and reason (plugins/device-share).
const (
	DeviceCountLabel   = "devices.schedplug.dev/count"
	DeviceRequest      = "devices.schedplug.dev/request"
	DeviceAssigned     = "devices.schedplug.dev/assigned"
	DeviceTooFewReason = "node(s) had too few free devices"
)

// DeviceShare is the Go twin of the native DeviceShare's Filter, Reserve,
// Unreserve and PreBind, for the end-to-end tests that compare placements
// (pod groups). It has no Score: the native one packs, so node choices
// agree only where that does not decide.
type DeviceShare struct {
	name   string
	handle fwk.Handle

	mu sync.Mutex
	// reserved: pod UID -> its reservation, until Unreserve or until the
	// pod shows on its node with its label.
	reserved map[types.UID]deviceReservation
}

var (
	_ fwk.FilterPlugin      = (*DeviceShare)(nil)
	_ fwk.ReservePlugin     = (*DeviceShare)(nil)
	_ fwk.PreBindPlugin     = (*DeviceShare)(nil)
	_ fwk.EnqueueExtensions = (*DeviceShare)(nil)
)

type deviceReservation struct {
	node, namespace, name string
	devices               []int
}

// NewDeviceShare is the plugin factory for the twin registered as name.
func NewDeviceShare(name string) func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
	return func(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return &DeviceShare{name: name, handle: h, reserved: map[types.UID]deviceReservation{}}, nil
	}
}

func (p *DeviceShare) Name() string { return p.name }

// deviceRequest is the pod's device count; ok false when it asks for none.
func deviceRequest(pod *v1.Pod) (int, bool, error) {
	v, ok := pod.Annotations[DeviceRequest]
	if !ok {
		return 0, false, nil
	}
	k, err := strconv.Atoi(v)
	if err != nil || k < 1 {
		return 0, false, fmt.Errorf("pod %s/%s: annotation %s=%q is not a positive number of devices", pod.Namespace, pod.Name, DeviceRequest, v)
	}
	return k, true, nil
}

// used is the node's devices held by its pods' labels and by reservations
// in flight there; it drops the reservations whose pod shows with its label.
func (p *DeviceShare) used(ni fwk.NodeInfo) sets.Set[int] {
	out := sets.New[int]()
	shown := sets.New[string]()
	for _, pi := range ni.GetPods() {
		pod := pi.GetPod()
		label, ok := pod.Labels[DeviceAssigned]
		if !ok {
			continue
		}
		shown.Insert(pod.Namespace + "/" + pod.Name)
		for _, part := range strings.Split(label, "-") {
			if i, err := strconv.Atoi(part); err == nil {
				out.Insert(i)
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for uid, r := range p.reserved {
		if r.node != ni.Node().Name {
			continue
		}
		if shown.Has(r.namespace + "/" + r.name) {
			delete(p.reserved, uid)
			continue
		}
		out.Insert(r.devices...)
	}
	return out
}

func nodeDevices(node *v1.Node) int {
	n, err := strconv.Atoi(node.Labels[DeviceCountLabel])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// free is the node's free device indices, lowest first.
func (p *DeviceShare) free(ni fwk.NodeInfo) []int {
	used := p.used(ni)
	var out []int
	for i := 0; i < nodeDevices(ni.Node()); i++ {
		if !used.Has(i) {
			out = append(out, i)
		}
	}
	return out
}

func (p *DeviceShare) Filter(_ context.Context, _ fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	k, ok, err := deviceRequest(pod)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if !ok {
		return nil
	}
	if ni.Node() == nil {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node not found")
	}
	if len(p.free(ni)) < k {
		return fwk.NewStatus(fwk.Unschedulable, DeviceTooFewReason)
	}
	return nil
}

func (p *DeviceShare) Reserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	k, ok, err := deviceRequest(pod)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if !ok {
		return nil
	}
	ni, err := p.handle.SnapshotSharedLister().NodeInfos().Get(nodeName)
	if err != nil {
		return fwk.AsStatus(err)
	}
	free := p.free(ni)
	if len(free) < k {
		return fwk.NewStatus(fwk.Unschedulable, DeviceTooFewReason)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reserved[pod.UID] = deviceReservation{node: nodeName, namespace: pod.Namespace, name: pod.Name, devices: free[:k]}
	return nil
}

func (p *DeviceShare) Unreserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.reserved, pod.UID)
}

// PreBind writes the reservation on the pod, as the native one does: the
// label with indices joined by '-', the annotation by ','.
func (p *DeviceShare) PreBind(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) *fwk.Status {
	if _, ok, _ := deviceRequest(pod); !ok {
		return nil
	}
	p.mu.Lock()
	r, ok := p.reserved[pod.UID]
	p.mu.Unlock()
	if !ok {
		return fwk.AsStatus(fmt.Errorf("%s holds no devices for pod %s/%s", p.name, pod.Namespace, pod.Name))
	}
	parts := make([]string, len(r.devices))
	for i, d := range r.devices {
		parts[i] = strconv.Itoa(d)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      map[string]string{DeviceAssigned: strings.Join(parts, "-")},
		"annotations": map[string]string{DeviceAssigned: strings.Join(parts, ",")},
	}})
	if err != nil {
		return fwk.AsStatus(err)
	}
	if _, err := p.handle.ClientSet().CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fwk.AsStatus(fmt.Errorf("%s: writing the devices of pod %s/%s: %w", p.name, pod.Namespace, pod.Name, err))
	}
	return nil
}

func (p *DeviceShare) PreBindPreFlight(context.Context, fwk.CycleState, *v1.Pod, string) (*fwk.PreBindPreFlightResult, *fwk.Status) {
	return nil, nil
}

func (p *DeviceShare) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return append(nodeEvents(), fwk.ClusterEventWithHint{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Delete}}), nil
}
