package cycle

import (
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/abi"
	"schedplug.dev/integration/scheduler/shim/session"
)

// Kept verdicts, the first verdict source: kube-scheduler schedules the
// replicas of a Deployment or a Job one after another, and they differ only
// in name and uid. When every native plugin of a profile is a Filter whose
// verdicts depend on neither (plugin.h's
// SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY) nor on the pods on the node
// (SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS), a node's verdict for one
// replica is its verdict for the next as long as the node object (labels,
// taints, allocatable, conditions) is the same; when they also declared the
// pod label and annotation keys they read
// (SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS), so is the verdict for
// any pod that differs only in other labels and annotations. The shim
// keeps such verdicts per node-table slot for the pod signature it last
// saw twice in a row, and a cycle whose pod has that signature makes no
// call at all: Filter answers from the kept verdicts, and the first node
// with none (a changed node object, a node never evaluated for this
// signature) makes the cycle's PreFilter call there and then, the
// framework's other Filter workers waiting for it.
//
// Kept verdicts are the host's answers, and live no longer than the host
// that gave them: they are tagged with the session and the host identity
// of the call that computed them, and used only while that session is the
// current one, is Trusted (its watch stream open: the host has not exited
// or restarted), and has that identity (no plugin build swapped since).
//
// Profiles with a native Score plugin do not keep verdicts: PreScore
// scores on the host's table, which must be current. Neither do pod-group
// cycles, whose snapshot changes in place. SCHEDPLUG_VERDICT_REUSE=off
// (Options.NoVerdictReuse) turns it off.

// deterministic marshals a pod the same way every time (map entries in
// key order), so that equal pods have equal signatures.
var deterministic = proto.MarshalOptions{Deterministic: true}

// reuseHints are the promises kept verdicts need from every native plugin
// of the profile.
const reuseHints = abi.HintFilterIgnoresNodePods | abi.HintFilterIgnoresPodIdentity

// keptVerdicts is what a profile's cycles answered for one pod signature,
// kept for the next pods with that signature. Replaced, never modified.
type keptVerdicts struct {
	sig      string
	sess     *session.Session
	identity session.Identity
	// nodes is the snapshot list slotOfInfo maps; a cycle reuses only on
	// this very list (a node added or removed makes a new one).
	nodes      []fwk.NodeInfo
	slotOfInfo map[fwk.NodeInfo]uint32
	// From the answer: the profile's native Filter plugins in order, which
	// of them applies() skipped, and the applies() report.
	plugins []string
	skipped []bool
	applies appliesInfo
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

// usable says whether a cycle of pod signature sig on the snapshot list
// nodes may answer from k, in session s.
func (k *keptVerdicts) usable(s *session.Session, sig string, nodes []fwk.NodeInfo) bool {
	return k != nil && sig != "" && k.sig == sig && k.sess == s && s.Trusted() &&
		k.identity == s.Identity() && sameList(k.nodes, nodes)
}

func sameList(a, b []fwk.NodeInfo) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// verdict is plugin pluginIdx's kept verdict on the node, if one was kept
// for this very node object.
func (k *keptVerdicts) verdict(pluginIdx int, slot uint32, node *v1.Node) (verdict, bool) {
	if int(slot) >= len(k.bySlot) {
		return verdict{}, false
	}
	kv := &k.bySlot[slot]
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

// fromKept answers Filter from the kept verdicts of a cycle that has not
// called the host; ok=false means the cycle needs its call.
func (c *Cycle) fromKept(plugin string, ni fwk.NodeInfo) (Answer, bool) {
	k := c.kept
	if k == nil || c.call.begun() {
		return Answer{}, false
	}
	idx := slices.Index(k.plugins, plugin)
	if idx < 0 || (idx < len(k.skipped) && k.skipped[idx]) {
		// Not this profile's native Filter, or applies() said no: PreFilter
		// returned Skip, as it does in a cycle that calls.
		return passed, true
	}
	slot, ok := k.slotOfInfo[ni]
	if ok {
		c.visit(slot)
	} else if slot, ok = c.t.host.SlotOf(ni.Node().Name); !ok {
		return Answer{}, false
	}
	// A copy of a snapshot node (a preemption dry run, the nominated-pods
	// pass) differs only in its pods and keeps the Node object, which the
	// kept verdict is checked against: the plugins promised to ignore pods.
	v, ok := k.verdict(idx, slot, ni.Node())
	return v.answer(), ok
}

// podKeys are the pod label and annotation keys a profile's native
// plugins read (SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS); nil: all.
// A handful at most, so slices, searched in place.
type podKeys struct {
	labels, annotations []string
}

// keepable says whether the profile whose native plugins are `plugins`
// may keep verdicts in session s: every one that filters is a Filter
// without Score that made both promises. keys is non-nil when every such
// plugin also declared the pod label and annotation keys it reads.
func keepable(s *session.Session, plugins []string) (ok bool, keys *podKeys) {
	declared := &podKeys{}
	for _, name := range plugins {
		info := s.Plugin(name)
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
		if declared == nil || info.GetHints()&abi.HintFilterReadsDeclaredPodKeys == 0 {
			declared = nil
			continue
		}
		declared.labels = append(declared.labels, info.GetPodLabelKeys()...)
		declared.annotations = append(declared.annotations, info.GetPodAnnotationKeys()...)
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

// keep folds the last cycle's answers into the profile's kept verdicts: at
// the start of the next cycle, once the last one's Filter and preemption
// are over, so that no Filter reads what is being replaced. The verdicts
// are tagged with the session and identity of the call that computed them.
// Callers hold t.mu.
func (t *Tracker) keep(last *Cycle) {
	r, err, over := last.call.result()
	if !over || err != nil || r == nil || r.order == nil {
		return
	}
	if last.spotOf != nil && !t.spotCheck(last, r) {
		delete(t.kept, last.profile)
		return
	}
	prev := t.kept[last.profile]
	if prev == nil || prev.sig != last.sig || prev.sess != r.sess {
		// Start keeping only for a signature seen twice in a row, so that
		// pods of alternating kinds do not build a table per cycle.
		if t.lastSig[last.profile] != last.sig {
			t.lastSig[last.profile] = last.sig
			return
		}
		prev = nil
	}
	vt := r.verdicts.Load()
	if vt.anyUnfinished() {
		return
	}
	k := &keptVerdicts{sig: last.sig, sess: r.sess, identity: identityOfAnswer(r), nodes: last.nodes, slotOfInfo: r.slotOfInfo,
		plugins: r.resp.GetPlugins(), skipped: r.resp.GetSkipped(), applies: r.applies(), bySlot: make([]keptVerdict, vt.slots)}
	if prev != nil && prev.identity == k.identity && slices.Equal(prev.plugins, k.plugins) {
		copy(k.bySlot, prev.bySlot)
	}
	k.fold(last.nodes, r, vt)
	t.kept[last.profile] = k
	t.lastSig[last.profile] = last.sig
}

// identityOfAnswer is the identity of the host that computed r.
func identityOfAnswer(r *callResult) session.Identity {
	id := r.resp.GetIdentity()
	return session.Identity{Epoch: id.GetEpoch(), Build: id.GetBuild()}
}

// fold sets the slots r evaluated.
func (k *keptVerdicts) fold(nodes []fwk.NodeInfo, r *callResult, vt *verdictTable) {
	evaluated(nodes, r, vt, func(slot uint32, ni fwk.NodeInfo) {
		if int(slot) < len(k.bySlot) {
			k.bySlot[slot] = answered(vt, slot, ni.Node())
		}
	})
}

// evaluated calls fn for each of the cycle's nodes whose verdicts r holds
// for the node object the NodeInfo has now.
func evaluated(nodes []fwk.NodeInfo, r *callResult, vt *verdictTable, fn func(slot uint32, ni fwk.NodeInfo)) {
	for i, ni := range nodes {
		if i >= len(r.order) {
			break
		}
		slot := r.order[i]
		if int(slot) >= vt.slots || (vt.window != nil && !vt.rest && !vt.window.has(slot)) {
			continue
		}
		// The node object the host evaluated is the NodeInfo's only if the
		// NodeInfo has not changed since (a new object takes a new
		// generation).
		if held, ok := r.states.At(slot); !ok || held.Generation() != ni.GetGeneration() {
			continue
		}
		fn(slot, ni)
	}
}

// answered is the call's verdict on the node in slot, as kept.
func answered(vt *verdictTable, slot uint32, node *v1.Node) keptVerdict {
	kv := keptVerdict{node: node, by: -1}
	if j := vt.rejectionAt(slot); j >= 0 && int(j) < len(vt.rejectedBy) {
		kv.by = int32(vt.rejectedBy[j])
		kv.code = pb.Code_CODE_UNSCHEDULABLE
		if int(j) < len(vt.codes) {
			kv.code = vt.codes[j]
		}
		if int(j) < len(vt.reason) && int(vt.reason[j]) < len(vt.reasons) {
			kv.reason = vt.reasons[vt.reason[j]]
		}
	}
	return kv
}
