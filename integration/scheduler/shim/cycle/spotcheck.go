package cycle

import (
	"slices"
	"sync"

	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/session"
)

// Spot checks: kept verdicts (and kube-scheduler's batching, which the
// shim's signatures allow) rest on promises a plugin makes about itself.
// One of every Options.SpotCheckEvery cycles that could answer from kept
// verdicts calls the host instead, and the next cycle compares the host's
// answers with the verdicts kept for the same node objects. A difference
// means a plugin broke its promise: it is logged with the plugin, pod,
// node and both verdicts, counted, and the plugin's verdicts are neither
// kept nor signed for batching again until its .so changes.

// spotCheckDue says whether cycle c, which could answer from k, is a spot
// check; it then remembers k to compare. Callers hold t.mu.
func (t *Tracker) spotCheckDue(c *Cycle, k *keptVerdicts) bool {
	t.reusable++
	every := t.opts.SpotCheckEvery
	if every <= 0 || t.reusable%uint64(every) != 0 {
		return false
	}
	spotChecks.Inc()
	c.spotOf = k
	return true
}

// spotCheck compares the spot-check cycle last's answers r with the
// verdicts it could have used, and reports whether they agree. Callers
// hold t.mu.
func (t *Tracker) spotCheck(last *Cycle, r *callResult) bool {
	k := last.spotOf
	vt := r.verdicts.Load()
	plugins := r.resp.GetPlugins()
	if vt == nil || vt.anyUnfinished() || !slices.Equal(k.plugins, plugins) {
		return true
	}
	caught := map[string]bool{}
	evaluated(last.nodes, r, vt, func(slot uint32, ni fwk.NodeInfo) {
		if int(slot) >= len(k.bySlot) {
			return
		}
		kept := k.bySlot[slot]
		if kept.node == nil || kept.node != ni.Node() {
			return
		}
		fresh := answered(vt, slot, ni.Node())
		if kept.by == fresh.by && kept.code == fresh.code && kept.reason == fresh.reason {
			return
		}
		// The plugin that rejected in one answer and not (or otherwise) in
		// the other broke its promise.
		by := fresh.by
		if by < 0 || (kept.by >= 0 && kept.by < by) {
			by = kept.by
		}
		if by < 0 || int(by) >= len(plugins) || caught[plugins[by]] {
			return
		}
		name := plugins[by]
		caught[name] = true
		spotCheckMismatches.WithLabelValues(name).Inc()
		t.distrust.add(r.sess, name)
		klog.Background().Error(nil, "schedplug spot check: a native plugin answered differently than the verdict kept for an identical pod on the same node, so it breaks a promise it declared (SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY or SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS, or the declared pod keys); its verdicts are no longer kept or signed for batching until its .so changes: fix the plugin or drop the hint",
			"plugin", name, "pod", last.pod.GetNamespace()+"/"+last.pod.GetName(), "node", ni.Node().Name,
			"kept", describe(kept, plugins), "host", describe(fresh, plugins))
	})
	return len(caught) == 0
}

func describe(v keptVerdict, plugins []string) string {
	if v.by < 0 || int(v.by) >= len(plugins) {
		return "every plugin passed the node"
	}
	return plugins[v.by] + " rejected the node (" + v.code.String() + ": " + v.reason + ")"
}

// distrust holds the plugins a spot check caught, by the SHA-256 of the
// .so that broke its promise: a new build is trusted again.
type distrust struct {
	mu  sync.Mutex
	sha map[string]string
}

func (d *distrust) add(s *session.Session, plugin string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sha == nil {
		d.sha = map[string]string{}
	}
	d.sha[plugin] = s.Plugin(plugin).GetSha256()
}

// of says whether the plugin info describes a build a spot check caught.
func (d *distrust) of(info *pb.PluginInfo) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	sha, ok := d.sha[info.GetName()]
	return ok && sha == info.GetSha256()
}

// anyOf says whether any of the plugins, as session s describes them, is
// a build a spot check caught.
func (d *distrust) anyOf(s *session.Session, plugins []string) bool {
	for _, name := range plugins {
		if info := s.Plugin(name); info != nil && d.of(info) {
			return true
		}
	}
	return false
}

// Distrusts says whether a spot check caught the build of the plugin that
// info describes.
func (t *Tracker) Distrusts(info *pb.PluginInfo) bool { return info != nil && t.distrust.of(info) }
