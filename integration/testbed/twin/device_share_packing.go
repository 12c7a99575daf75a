package twin

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
)

// DeviceSharePacking is DeviceShare's twin with the native plugin's Score
// as well: the scheduler_perf suite compares the native plugin's cost with
// a twin doing the same work. The end-to-end twin (DeviceShare) leaves the
// Score out so that pod-group placements agree where packing would decide.
type DeviceSharePacking struct {
	*DeviceShare
}

var (
	_ fwk.PreScorePlugin  = (*DeviceSharePacking)(nil)
	_ fwk.ScorePlugin     = (*DeviceSharePacking)(nil)
	_ fwk.ScoreExtensions = (*DeviceSharePacking)(nil)
)

// NewDeviceSharePacking is the plugin factory for the packing twin
// registered as name.
func NewDeviceSharePacking(name string) func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
	return func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		pl, err := NewDeviceShare(name)(ctx, obj, h)
		if err != nil {
			return nil, err
		}
		return &DeviceSharePacking{DeviceShare: pl.(*DeviceShare)}, nil
	}
}

// PreScore skips the pods that ask for no devices, as the native plugin's
// BeginPod does.
func (p *DeviceSharePacking) PreScore(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	if _, ok, err := deviceRequest(pod); err != nil || !ok {
		return fwk.NewStatus(fwk.Skip)
	}
	return nil
}

// Score packs, as the native one: the devices in use on the node once
// the pod is placed (0 on a node without devices).
func (p *DeviceSharePacking) Score(_ context.Context, _ fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	k, _, err := deviceRequest(pod)
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	if ni.Node() == nil || nodeDevices(ni.Node()) == 0 {
		return 0, nil
	}
	return int64(p.used(ni).Len() + k), nil
}

func (p *DeviceSharePacking) ScoreExtensions() fwk.ScoreExtensions { return p }

// NormalizeScore is the host's linear min-max (SCHEDPLUG_NORMALIZE_LINEAR,
// which the native plugin declares): the fullest node gets 100.
func (p *DeviceSharePacking) NormalizeScore(_ context.Context, _ fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	raw := make([]int64, len(scores))
	for i := range scores {
		raw[i] = scores[i].Score
	}
	minMax(raw, false)
	for i := range scores {
		scores[i].Score = raw[i]
	}
	return nil
}
