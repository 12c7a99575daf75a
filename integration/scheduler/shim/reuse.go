package shim

import (
	"context"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// Verdict reuse: kube-scheduler schedules the replicas of a Deployment or
// a Job one after another, and they differ only in name and uid. When every
// native plugin of a profile is a Filter whose verdicts depend on neither
// (plugin.h's SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY) nor on the pods
// on the node (SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS), a node's verdict
// for one replica is its verdict for the next as long as the node object
// (labels, taints, allocatable, conditions) is the same; when they also
// declared the pod label and annotation keys they read
// (SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS), so is the verdict for
// any pod that differs only in other labels and annotations. The shim
// keeps such verdicts per node-table slot for the pod signature it last
// saw twice in a row, and a cycle whose pod has that signature makes no
// call at all: Filter answers from the kept verdicts, and the first node with
// none (a changed node object, a node never evaluated for this signature)
// makes the cycle's PreFilter call there and then, the framework's other
// Filter workers waiting for it. The host gets the node-table changes with
// the next call, as the delta covers everything since the last one.
//
// Profiles with a native Score plugin do not reuse: PreScore scores on the
// host's table, which must be current. Neither do pod-group cycles, whose
// snapshot changes in place.

// deterministic marshals a pod the same way every time (map entries in
// key order), so that equal pods have equal signatures.
var deterministic = proto.MarshalOptions{Deterministic: true}

// hintFilterIgnoresPodIdentity is plugin.h's
// SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY.
const hintFilterIgnoresPodIdentity = 1 << 1

// hintFilterReadsDeclaredPodKeys is plugin.h's
// SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS: of the pod's labels and
// annotations the plugin reads only those whose keys PluginInfo lists.
const hintFilterReadsDeclaredPodKeys = 1 << 2

// reuseHints are the promises verdict reuse needs from every native plugin
// of the profile.
const reuseHints = hintFilterIgnoresNodePods | hintFilterIgnoresPodIdentity

// reusedVerdicts is what a cycle's PreFilter answered, kept for the next
// pods with the same signature. Replaced, never modified.
type reusedVerdicts struct {
	sig  string
	sess *session
	// nodes is the snapshot list slotOfInfo maps; a cycle reuses only on
	// this very list (a node added or removed makes a new one).
	nodes      []fwk.NodeInfo
	slotOfInfo map[fwk.NodeInfo]uint32
	// From the response: the profile's native Filter plugins in order,
	// which of them applies() skipped, and the applies() report.
	plugins         []string
	skipped         []bool
	appliesReported bool
	notApplying     []string
	// bySlot[slot]: the verdict and the node object it was computed for
	// (node nil: no verdict kept).
	bySlot []keptVerdict
}

type keptVerdict struct {
	node *v1.Node
	// by: index in plugins of the plugin that rejected the node, -1 when
	// every one passed it.
	by     int32
	code   pb.Code
	reason string
}

// podKeys are the pod label and annotation keys a profile's native
// plugins read (SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS); nil: all.
// A handful at most, so slices, searched in place.
type podKeys struct {
	labels, annotations []string
}

// reuseEligible says whether the profile's cycles may reuse verdicts:
// reuse is on, and every native plugin of the profile is a Filter without
// Score that made both promises. keys is non-nil when every such plugin
// also declared the pod label and annotation keys it reads.
func (m *Manager) reuseEligible(s *session, profile string) (ok bool, keys *podKeys) {
	if m.cfg.NoVerdictReuse || s == nil {
		return false, nil
	}
	m.regMu.RLock()
	defer m.regMu.RUnlock()
	declared := &podKeys{}
	for i := range m.profiles {
		if m.profiles[i].SchedulerName != profile {
			continue
		}
		for _, name := range m.profiles[i].Plugins {
			info := s.plugins[name]
			if info == nil || info.GetHasScore() {
				return false, nil
			}
			if !info.GetHasFilter() {
				continue
			}
			if info.GetHints()&reuseHints != reuseHints {
				return false, nil
			}
			ok = true
			if declared == nil || info.GetHints()&hintFilterReadsDeclaredPodKeys == 0 {
				declared = nil
				continue
			}
			declared.labels = append(declared.labels, info.GetPodLabelKeys()...)
			declared.annotations = append(declared.annotations, info.GetPodAnnotationKeys()...)
		}
	}
	if !ok {
		return false, nil
	}
	return true, declared
}

// podSignature is the pod as sent to the host without its name and uid,
// and with only the declared labels and annotations when keys is set: two
// pods with the same signature get the same verdicts from plugins that
// made the promises. The pod is the cycle's own conversion, restored
// before return.
func podSignature(pod *pb.Pod, keys *podKeys) string {
	name, uid, labels, annotations, selector := pod.Name, pod.Uid, pod.Labels, pod.Annotations, pod.NodeSelector
	pod.Name, pod.Uid = "", ""
	// The conversion lists map entries in map order: sort them.
	var keepLabels, keepAnnotations []string
	if keys != nil {
		keepLabels, keepAnnotations = keys.labels, keys.annotations
	}
	pod.Labels, pod.Annotations = sortedKeys(labels, keepLabels, keys != nil), sortedKeys(annotations, keepAnnotations, keys != nil)
	pod.NodeSelector = sortedKeys(selector, nil, false)
	b, err := deterministic.Marshal(pod)
	pod.Name, pod.Uid, pod.Labels, pod.Annotations, pod.NodeSelector = name, uid, labels, annotations, selector
	if err != nil {
		return ""
	}
	return string(b)
}

// sortedKeys is kvs sorted by key; only the keys in keep when filter is set.
func sortedKeys(kvs []*pb.KeyValue, keep []string, filter bool) []*pb.KeyValue {
	out := make([]*pb.KeyValue, 0, len(kvs))
	for _, kv := range kvs {
		if !filter || slices.Contains(keep, kv.GetKey()) {
			out = append(out, kv)
		}
	}
	slices.SortFunc(out, func(a, b *pb.KeyValue) int { return strings.Compare(a.GetKey(), b.GetKey()) })
	return out
}

// startCycle keeps what the last cycle answered (keepVerdicts) and returns
// the verdicts kept for this cycle's pod, or nil when the cycle must call
// the host; sig is the pod's signature ("" when the profile may not reuse).
func (m *Manager) startCycle(profile string, pod *pb.Pod, nodes []fwk.NodeInfo, podGroupCycle bool) (r *reusedVerdicts, sig string) {
	s := m.sess.Load()
	if podGroupCycle {
		return nil, ""
	}
	ok, keys := m.reuseEligible(s, profile)
	if !ok {
		return nil, ""
	}
	sig = podSignature(pod, keys)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.keepVerdicts(profile)
	r = m.reuse[profile]
	if r == nil || sig == "" || r.sig != sig || r.sess != s || !sameList(r.nodes, nodes) {
		return nil, sig
	}
	return r, sig
}

func sameList(a, b []fwk.NodeInfo) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// keepVerdicts folds the last cycle's answers into the kept verdicts: at
// the start of the next cycle, once the last one's Filter and preemption
// are over, so that no Filter reads what is being replaced. Callers hold
// m.mu.
func (m *Manager) keepVerdicts(profile string) {
	last := m.lastCycle
	if last == nil || last.profile != profile || last.sig == "" {
		return
	}
	if late := last.late.Load(); late != nil {
		last = late
	}
	if last.err != nil || last.res == nil || last.res.order == nil {
		return
	}
	s := m.sess.Load()
	prev := m.reuse[profile]
	if prev == nil || prev.sig != last.sig || prev.sess != s {
		// Start keeping only for a signature seen twice in a row, so that
		// pods of alternating kinds do not build a table per cycle.
		if m.lastSig[profile] != last.sig {
			m.lastSig[profile] = last.sig
			return
		}
		prev = nil
	}
	vt := last.verdicts.Load()
	if vt == nil || len(vt.unfinished) > 0 || len(vt.unfinishedRest) > 0 {
		return
	}
	resp := last.res.resp
	r := &reusedVerdicts{sig: last.sig, sess: s, nodes: last.nodes, slotOfInfo: last.res.slotOfInfo,
		plugins: resp.GetPlugins(), skipped: resp.GetSkipped(), appliesReported: resp.GetAppliesReported(), notApplying: resp.GetNotApplying(),
		bySlot: make([]keptVerdict, len(vt.rejection))}
	if prev != nil && slices.Equal(prev.plugins, r.plugins) {
		copy(r.bySlot, prev.bySlot)
	}
	for i, ni := range last.nodes {
		if i >= len(last.res.order) {
			break
		}
		slot := last.res.order[i]
		if int(slot) >= len(r.bySlot) || (vt.window != nil && !vt.rest && !vt.window.has(slot)) {
			continue
		}
		// The node object the host evaluated is the NodeInfo's only if the
		// NodeInfo has not changed since (a new object takes a new
		// generation); otherwise the slot keeps what it had.
		if held, ok := last.res.states.at(slot); !ok || held.gen != ni.GetGeneration() {
			continue
		}
		kv := keptVerdict{node: ni.Node(), by: -1}
		if j := vt.rejection[slot]; j >= 0 && int(j) < len(vt.rejectedBy) {
			kv.by = int32(vt.rejectedBy[j])
			kv.code = pb.Code_CODE_UNSCHEDULABLE
			if int(j) < len(vt.codes) {
				kv.code = vt.codes[j]
			}
			if int(j) < len(vt.reason) && int(vt.reason[j]) < len(vt.reasons) {
				kv.reason = vt.reasons[vt.reason[j]]
			}
		}
		r.bySlot[slot] = kv
	}
	m.reuse[profile] = r
	m.lastSig[profile] = last.sig
}

// verdict is plugin pluginIdx's kept verdict on the node, if one was kept
// for this very node object.
func (r *reusedVerdicts) verdict(pluginIdx int, slot uint32, node *v1.Node) (verdict, bool) {
	if int(slot) >= len(r.bySlot) {
		return verdict{}, false
	}
	kv := &r.bySlot[slot]
	if kv.node == nil || kv.node != node {
		return verdict{}, false
	}
	if kv.by != int32(pluginIdx) {
		// Passed by this plugin, or rejected by another one (kube-scheduler
		// stops at the first rejection in profile order, as the host did).
		return verdict{code: pb.Code_CODE_SUCCESS}, true
	}
	return verdict{code: kv.code, reason: kv.reason}, true
}

// called is the cycle as a cycle that called the host: fs itself, or for a
// reusing cycle the call it made, made now if it has not been.
func (p *Plugin) called(ctx context.Context, fs *filterState, pod *v1.Pod) *filterState {
	if fs == nil || fs.reused == nil {
		return fs
	}
	if late := fs.late.Load(); late != nil {
		return late
	}
	return p.callForReuseCycle(ctx, fs, pod)
}

// reusedFilter answers Filter from the kept verdicts; ok=false means the
// cycle needs the host (see callForReuseCycle).
func (p *Plugin) reusedFilter(fs *filterState, ni fwk.NodeInfo) (v verdict, ok bool) {
	r := fs.reused
	idx, found := fs.indexOf(p.name)
	if !found || fs.skipped(idx) {
		// Not this profile's native Filter, or applies() said no: PreFilter
		// returned Skip, as it does in a cycle that calls.
		return verdict{code: pb.Code_CODE_SUCCESS}, true
	}
	slot, ok := r.slotOfInfo[ni]
	if ok {
		fs.visits.add(slot)
	} else if slot, ok = p.mgr.table.slotOf(ni.Node().Name); !ok {
		return verdict{}, false
	}
	// A copy of a snapshot node (a preemption dry run, the nominated-pods
	// pass) differs only in its pods and keeps the Node object, which the
	// kept verdict is checked against: the plugins promised to ignore pods.
	return r.verdict(idx, slot, ni.Node())
}

// callForReuseCycle makes the PreFilter call a reusing cycle skipped, once
// per cycle: the first Filter that finds no kept verdict makes it, the
// others wait, and all go on with its outcome as a cycle that called in
// PreFilter would.
func (p *Plugin) callForReuseCycle(ctx context.Context, fs *filterState, pod *v1.Pod) *filterState {
	fs.lateMu.Lock()
	defer fs.lateMu.Unlock()
	if late := fs.late.Load(); late != nil {
		return late
	}
	verdictReuseMisses.Inc()
	res, err := p.mgr.preFilter(ctx, p.profile, fs.pod, fs.nodes, false, fs.nominated)
	late := newFilterState(fs.pod, fs.nodes, res, err)
	late.profile, late.sig, late.nominated = fs.profile, fs.sig, fs.nominated
	if len(late.visits) == len(fs.visits) {
		late.visits = fs.visits // the window of the next cycle counts both
	}
	fs.late.Store(late)
	// The call took the cycle as the last one's successor; this cycle is
	// still the one whose answers the next keeps (keepVerdicts).
	p.mgr.noteCycle(fs)
	if err != nil && !callerGaveUp(ctx) {
		p.notePolicyApplied(ctx, pod, err)
		p.mgr.rememberRejected(pod)
		p.mgr.watchRecovery()
	}
	return late
}
