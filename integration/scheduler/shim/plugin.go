package shim

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"schedplug.dev/integration/scheduler/shim/cycle"
	"schedplug.dev/integration/scheduler/shim/wire"
)

// Plugin is the framework plugin standing for one native plugin in one
// profile: the adapter between kube-scheduler's extension points and the
// profile's scheduling cycle (package cycle). It implements every
// extension point a native plugin can have; when the host says the plugin
// has no Filter (or no Score), or that the pod is not its business,
// PreFilter (or PreScore) returns Skip and the framework skips the
// lookups.
//
// A profile may enable a native plugin at filter or score without
// preFilter or preScore (multiPoint enables all four; explicit per-point
// lists do not). Filter then makes the cycle's PreFilter call itself, and
// NormalizeScore the PreScore call, once per cycle (counted in
// schedplug_shim_lazy_calls_total); `schedplug check` warns about such
// profiles.
type Plugin struct {
	name    string
	profile string
	policy  Policy
	mgr     *Manager
	handle  fwk.Handle
	// hooks: the ABI v1.6 hooks the host reported when the factory ran
	// (hooks.go).
	hooks hookSet
	// last is the CycleState in which the plugin last found its cycle,
	// with that cycle: the framework's Filter and Score workers call with
	// the same state for every node, and a CycleState never gets another
	// cycle once it has one (see cycleIn).
	last atomic.Pointer[stateCycle]
}

type stateCycle struct {
	state fwk.CycleState
	c     *cycle.Cycle
}

var (
	_ fwk.PreFilterPlugin   = (*Plugin)(nil)
	_ fwk.FilterPlugin      = (*Plugin)(nil)
	_ fwk.PreScorePlugin    = (*Plugin)(nil)
	_ fwk.ScorePlugin       = (*Plugin)(nil)
	_ fwk.ScoreExtensions   = (*Plugin)(nil)
	_ fwk.EnqueueExtensions = (*Plugin)(nil)
)

// NewPlugin creates the shim plugin `name` for the profile of `h` on
// manager m. Most callers want Factory.
func NewPlugin(m *Manager, name string, pol Policy, h fwk.Handle) *Plugin {
	profile := ""
	var act fwk.PodActivator
	if h != nil {
		profile = h.ProfileName()
		act = h
		m.registry.noteHandle(profile, h)
	}
	m.registry.register(profile, name, pol, act)
	return &Plugin{name: name, profile: profile, policy: pol, mgr: m, handle: h}
}

func (p *Plugin) Name() string { return p.name }

// recoverStatus turns a panic in the shim into an Error status for this
// cycle: kube-scheduler runs Filter and Score in its own goroutines, where
// a panic would take the whole scheduler down.
func (p *Plugin) recoverStatus(ctx context.Context, where string, st **fwk.Status) {
	r := recover()
	if r == nil {
		return
	}
	panicsRecovered.Inc()
	klog.FromContext(ctx).Error(fmt.Errorf("%v", r), "schedplug shim panicked; the scheduling cycle fails instead of the scheduler", "plugin", p.name, "profile", p.profile, "in", where, "stack", string(debug.Stack()))
	*st = fwk.AsStatus(fmt.Errorf("schedplug shim: internal error in %s of plugin %s: %v (a bug; please report it with the scheduler log)", where, p.name, r))
}

// cycleKey is the CycleState key of the profile's cycle, shared by all its
// shim plugins: the first to run starts the cycle, the others read it.
const cycleKey fwk.StateKey = "schedplug.dev/cycle"

// cycleIn is readCycle, remembered for the state it was found in: it
// spares the CycleState lookup (a concurrent map's) of every Filter and
// Score on every node after the first. Only a state without a cycle gets
// one written (startCycle, cycleOf), so a remembered answer stays true.
func (p *Plugin) cycleIn(state fwk.CycleState) *cycle.Cycle {
	if l := p.last.Load(); l != nil && l.state == state {
		return l.c
	}
	c := readCycle(state)
	if c != nil {
		p.last.Store(&stateCycle{state: state, c: c})
	}
	return c
}

func readCycle(state fwk.CycleState) *cycle.Cycle {
	if d, err := state.Read(cycleKey); err == nil {
		if c, ok := d.(*cycle.Cycle); ok {
			return c
		}
	}
	return nil
}

// startCycle begins the profile's cycle for pod on nodes and keeps it in
// state.
func (p *Plugin) startCycle(state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *cycle.Cycle {
	answers := p.newCycleAnswers(pod, len(nodes))
	c := p.mgr.tracker.Start(cycle.Start{
		Profile: p.profile, Pod: wire.Pod(pod, p.mgr.podData()), Nodes: nodes,
		PodGroupCycle: isPodGroupCycle(state), Nominated: pod.Status.NominatedNodeName, Snapshot: p.snapshotNode,
		Answers: answers,
	})
	state.Write(cycleKey, c)
	p.mgr.annotations.cycleStarted(answers)
	return c
}

// cycleOf is the profile's cycle: the one PreFilter started, or, for a
// profile that enables its native plugins at filter or score but not at
// preFilter, one started now, lazily, on the snapshot (`fallback` when
// there is none) and shared by every clone of the cycle's CycleState
// (kube-scheduler's nominated-pods pass clones it before any Filter runs
// on the original).
func (p *Plugin) cycleOf(state fwk.CycleState, pod *v1.Pod, fallback []fwk.NodeInfo) *cycle.Cycle {
	if c := p.cycleIn(state); c != nil {
		return c
	}
	c := p.mgr.tracker.Lazy(cycleToken(state), func() *cycle.Cycle {
		if c := readCycle(state); c != nil {
			return c
		}
		lazyCalls.WithLabelValues("PreFilter").Inc()
		nodes := p.snapshotNodes()
		if nodes == nil {
			nodes = fallback
		}
		return p.startCycle(state, pod, nodes)
	})
	// The cycle may have started in a clone (the nominated-pods pass);
	// Reserve reads the original state.
	if readCycle(state) == nil {
		state.Write(cycleKey, c)
	}
	return c
}

// cycleToken names the scheduling cycle a CycleState belongs to: the
// PodsToActivate kube-scheduler writes into it at the start of every cycle,
// which its clones share (nil when there is none, as in unit tests).
func cycleToken(state fwk.CycleState) any {
	if d, err := state.Read(framework.PodsToActivateKey); err == nil {
		return d
	}
	return nil
}

// snapshotNodes is the cycle's snapshot (nil when the handle has none, as
// in unit tests).
func (p *Plugin) snapshotNodes() []fwk.NodeInfo {
	if p.handle == nil || p.handle.SnapshotSharedLister() == nil {
		return nil
	}
	l, err := p.handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil
	}
	return l
}

// snapshotNode is the cycle's snapshot NodeInfo of a node, or nil.
func (p *Plugin) snapshotNode(name string) fwk.NodeInfo {
	if p.handle == nil || p.handle.SnapshotSharedLister() == nil {
		return nil
	}
	ni, err := p.handle.SnapshotSharedLister().NodeInfos().Get(name)
	if err != nil {
		return nil
	}
	return ni
}

// EventsToRegister maps the events the native plugin declared. It runs when
// the framework is built, after the start-up Handshake; without one (host
// not up) it registers every node and pod event.
func (p *Plugin) EventsToRegister(_ context.Context) ([]fwk.ClusterEventWithHint, error) {
	var bits uint64
	if info := p.mgr.pluginInfo(p.name); info != nil {
		bits = info.GetEvents()
	}
	return eventsFor(bits), nil
}
