package shim

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// kube-scheduler decides a plugin's extension points by the interfaces
// the object its factory returns implements. The shim's factory knows the
// native plugin's hooks from the start-up Handshake and returns *Plugin
// (every extension point of a plugin that filters and scores, and Reserve)
// with Permit, PreBind and PreEnqueue added only for the hooks the plugin
// has, so a profile without them pays nothing for them.

// permitExt, preBindExt and preEnqueueExt add one extension point each.
type permitExt struct{ p *Plugin }

func (x permitExt) Permit(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) (*fwk.Status, time.Duration) {
	return x.p.permit(ctx, state, pod, nodeName)
}

type preBindExt struct{ p *Plugin }

func (x preBindExt) PreBind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	return x.p.preBind(ctx, state, pod, nodeName)
}

type preEnqueueExt struct{ p *Plugin }

func (x preEnqueueExt) PreEnqueue(ctx context.Context, pod *v1.Pod) *fwk.Status {
	return x.p.preEnqueue(ctx, pod)
}

// The plugins with one or more of them (P: Permit, B: PreBind, E:
// PreEnqueue).
type (
	pluginP struct {
		*Plugin
		permitExt
	}
	pluginB struct {
		*Plugin
		preBindExt
	}
	pluginE struct {
		*Plugin
		preEnqueueExt
	}
	pluginPB struct {
		*Plugin
		permitExt
		preBindExt
	}
	pluginPE struct {
		*Plugin
		permitExt
		preEnqueueExt
	}
	pluginBE struct {
		*Plugin
		preBindExt
		preEnqueueExt
	}
	pluginPBE struct {
		*Plugin
		permitExt
		preBindExt
		preEnqueueExt
	}
)

var (
	_ fwk.PermitPlugin     = pluginP{}
	_ fwk.PreBindPlugin    = pluginB{}
	_ fwk.PreEnqueuePlugin = pluginE{}
	_ fwk.PermitPlugin     = pluginPBE{}
	_ fwk.PreBindPlugin    = pluginPBE{}
	_ fwk.PreEnqueuePlugin = pluginPBE{}
)

// withHooks is the plugin with the extension points of its hooks (all
// three when the host did not say at start: each then calls the host only
// for a hook the host reports once it answers).
func withHooks(p *Plugin) fwk.Plugin {
	permit, preBind, preEnqueue := p.hooks.registers(permitPoint), p.hooks.registers(preBindPoint), p.hooks.registers(preEnqueuePoint)
	P, B, E := permitExt{p}, preBindExt{p}, preEnqueueExt{p}
	switch {
	case permit && preBind && preEnqueue:
		return &pluginPBE{p, P, B, E}
	case permit && preBind:
		return &pluginPB{p, P, B}
	case permit && preEnqueue:
		return &pluginPE{p, P, E}
	case preBind && preEnqueue:
		return &pluginBE{p, B, E}
	case permit:
		return &pluginP{p, P}
	case preBind:
		return &pluginB{p, B}
	case preEnqueue:
		return &pluginE{p, E}
	}
	return p
}
