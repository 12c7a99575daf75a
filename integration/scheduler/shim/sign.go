package shim

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"schedplug.dev/integration/scheduler/shim/cycle"
)

var _ fwk.SignPlugin = (*Plugin)(nil)

// signKeyPrefix names the fragment of each native plugin; the value is
// private to the shim (cycle.PluginSignature), as bytes: JSON would
// replace the invalid UTF-8 of a string with U+FFFD and merge signatures.
const signKeyPrefix = "schedplug.dev/"

// SignPod keeps kube-scheduler's opportunistic batching on for the profile:
// a framework plugin that does not sign turns it off for every pod. The
// native plugin signs what it declared it reads, or refuses this pod alone
// (Unschedulable, which only means "no batching for this pod").
func (p *Plugin) SignPod(ctx context.Context, pod *v1.Pod) (_ []fwk.SignFragment, st *fwk.Status) {
	defer p.recoverStatus(ctx, "SignPod", &st)
	info := p.mgr.pluginInfo(p.name)
	if p.mgr.tracker.Distrusts(info) {
		return nil, fwk.NewStatus(fwk.Unschedulable, cycle.SignRefusedCaught)
	}
	sig, refused := cycle.PluginSignature(info, pod)
	switch {
	case refused != "":
		return nil, fwk.NewStatus(fwk.Unschedulable, refused)
	case sig == "":
		return nil, nil
	}
	return []fwk.SignFragment{{Key: signKeyPrefix + p.name, Value: []byte(sig)}}, nil
}
