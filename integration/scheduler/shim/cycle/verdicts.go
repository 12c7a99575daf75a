package cycle

import (
	"slices"
	"sync"
	"sync/atomic"

	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/nodetable"
	"schedplug.dev/integration/scheduler/shim/session"
)

// callResult is what the cycle's PreFilter call answered, with what the
// shim needs to read it: the node state the host evaluated per slot, the
// slot of each snapshot NodeInfo, the window. Preemption's CycleState
// clones share it: its verdicts only grow (FilterNodes merged in) and are
// swapped in whole.
type callResult struct {
	sess *session.Session
	resp *pb.PreFilterResponse
	// states: the node state the host evaluated for each slot; slotOfInfo
	// the slot of each snapshot NodeInfo sent; order[i] the slot of the
	// i-th snapshot node (nodetable.Plan).
	states     *nodetable.SlotStates
	slotOfInfo map[fwk.NodeInfo]uint32
	order      []uint32
	verdicts   atomic.Pointer[verdictTable]
	// ahead: the scores ahead of the call (and of its FilterNodes call),
	// nil when it brought none.
	ahead atomic.Pointer[aheadScores]
	// more are the cycle's FilterNodes calls for nodes outside the window,
	// made one after the other (window.go); moreMu guards the list, missed
	// says whether there is one.
	moreMu sync.Mutex
	more   []*moreCall
	missed atomic.Bool
}

func newCallResult(s *session.Session, resp *pb.PreFilterResponse, plan *nodetable.Plan, window slotSet) *callResult {
	r := &callResult{sess: s, resp: resp, states: plan.States, slotOfInfo: plan.SlotOfInfo, order: plan.Order}
	vt := &verdictTable{
		slots:      plan.States.Size(),
		rejectedBy: resp.GetRejectedBy(),
		codes:      resp.GetCodes(),
		reason:     resp.GetReason(),
		reasons:    resp.GetReasons(),
		unfinished: r.unfinishedOf(resp),
		window:     window,
	}
	vt.rejection = newSlotIndex(vt.slots, nil, resp.GetRejectedNodes(), 0, nil, false)
	r.verdicts.Store(vt)
	r.ahead.Store(newAheadScores(resp.GetScoresAhead(), plan))
	return r
}

// index is the position of a native Filter plugin in the verdicts. A
// profile has a few of them: comparing names beats hashing one, which every
// Filter call of every node does.
func (r *callResult) index(plugin string) (int, bool) {
	for i, name := range r.resp.GetPlugins() {
		if name == plugin {
			return i, true
		}
	}
	return 0, false
}

// skipped says whether applies() said no for the plugin at index i.
func (r *callResult) skipped(i int) bool {
	sk := r.resp.GetSkipped()
	return i < len(sk) && sk[i]
}

// applies is what the shim sends back to the host with PreScore and
// single-node Filter calls so that applies() is asked once per cycle.
func (r *callResult) applies() appliesInfo {
	if !r.resp.GetAppliesReported() {
		return appliesInfo{}
	}
	return appliesInfo{known: true, notApplying: r.resp.GetNotApplying()}
}

// unfinishedOf maps the answer's unfinished plugins to their index.
func (r *callResult) unfinishedOf(resp *pb.PreFilterResponse) map[int]string {
	var out map[int]string
	for _, u := range resp.GetUnfinished() {
		if i, ok := r.index(u.GetPlugin()); ok {
			if out == nil {
				out = map[int]string{}
			}
			out[i] = u.GetReason()
		}
	}
	return out
}

// verdictTable is the host's rejections, indexed by slot.
type verdictTable struct {
	// slots: the table's size; rejection: the rejected slots' indexes
	// into the arrays below (a slot without one passed every native Filter
	// or was not evaluated, see window). An index of the rejected slots
	// alone: most of the table's are outside the window or pass.
	slots     int
	rejection slotIndex
	// Parallel arrays, as in PreFilterResponse; reason indexes reasons.
	rejectedBy []uint32
	codes      []pb.Code
	reason     []uint32
	reasons    []string
	// unfinished: plugin index -> the host's sentence saying why that
	// plugin has no verdict for the window's nodes it did not reject;
	// unfinishedMore[k] the same for the nodes the k-th FilterNodes call
	// evaluated, and part[slot] which call evaluated the slot (k+1; 0:
	// PreFilter). part is nil before the first FilterNodes call.
	unfinished     map[int]string
	unfinishedMore []map[int]string
	part           []uint8
	// window: the slots evaluated so far (PreFilter's window, then the
	// FilterNodes calls' nodes); nil when PreFilter evaluated every node.
	// rest: every node has been evaluated.
	window slotSet
	rest   bool
}

// anyUnfinished says whether some plugin has no verdict on some node.
func (vt *verdictTable) anyUnfinished() bool {
	if len(vt.unfinished) > 0 {
		return true
	}
	for _, u := range vt.unfinishedMore {
		if len(u) > 0 {
			return true
		}
	}
	return false
}

// passed says whether the host evaluated the node in `slot` and no native
// Filter rejected it.
func (vt *verdictTable) passed(slot uint32) bool {
	if int(slot) >= vt.slots || vt.rejectionAt(slot) >= 0 {
		return false
	}
	return vt.window == nil || vt.rest || vt.window.has(slot)
}

// verdict is one plugin's verdict on one node.
type verdict struct {
	code   pb.Code
	reason string
	// unfinished: the plugin has no verdict for this node; reason says why
	// and the plugin's failurePolicy decides.
	unfinished bool
}

// lookup returns the plugin's verdict on the node in `slot` if the host
// evaluated exactly this state of it (nodetable.State.Holds: whole compares
// every value, not the generation alone); ok=false means the
// host must be asked about this NodeInfo explicitly. outside: the state is
// the one sent, but the node is outside the window PreFilter evaluated and
// FilterNodes has not been asked yet. own: an earlier plugin's rejection
// says nothing of this one (ok=false), as for a changed copy of the node
// on which the earlier plugin may pass.
func (r *callResult) lookup(pluginIdx int, slot uint32, ni fwk.NodeInfo, whole, own bool) (v verdict, ok, outside bool) {
	vt := r.verdicts.Load()
	if int(slot) >= vt.slots {
		return verdict{}, false, false
	}
	if held, ok := r.states.At(slot); !ok || !held.Holds(ni, whole) {
		return verdict{}, false, false
	}
	unfinished := vt.unfinished
	if vt.window != nil && !vt.window.has(slot) {
		return verdict{}, false, true
	}
	if vt.part != nil && vt.part[slot] > 0 {
		unfinished = vt.unfinishedMore[vt.part[slot]-1]
	}
	v, ok = vt.at(pluginIdx, slot, unfinished, own)
	return v, ok, false
}

// rejectionAt is the slot's index into the rejection arrays, -1 for none.
func (vt *verdictTable) rejectionAt(slot uint32) int32 {
	if i, ok := vt.rejection.get(slot); ok {
		return i
	}
	return -1
}

// at reads the table's verdict for the plugin on a node it evaluated.
func (vt *verdictTable) at(pluginIdx int, slot uint32, unfinished map[int]string, own bool) (verdict, bool) {
	i := vt.rejectionAt(slot)
	notRejectedHere := func() verdict {
		if why, ok := unfinished[pluginIdx]; ok {
			return verdict{unfinished: true, reason: why}
		}
		return verdict{code: pb.Code_CODE_SUCCESS}
	}
	if i < 0 || int(i) >= len(vt.rejectedBy) {
		return notRejectedHere(), true
	}
	switch by := int(vt.rejectedBy[i]); {
	case by < pluginIdx:
		// Rejected by an earlier native plugin of the profile: the
		// framework stops at the first rejection in profile order, as the
		// host did, so this plugin's answer does not matter.
		return verdict{code: pb.Code_CODE_SUCCESS}, !own
	case by > pluginIdx:
		// A later plugin rejected it, so this one passed it, unless this
		// one did not finish (the host still runs later plugins then).
		return notRejectedHere(), true
	}
	v := verdict{code: pb.Code_CODE_UNSCHEDULABLE}
	if int(i) < len(vt.codes) {
		v.code = vt.codes[i]
	}
	if int(i) < len(vt.reason) {
		if r := vt.reason[i]; int(r) < len(vt.reasons) {
			v.reason = vt.reasons[r]
		}
	}
	return v, true
}

// withMore is the table with a FilterNodes answer for the slots in
// `asked` (none of them evaluated before) merged in; all: the table now
// has a verdict for every node.
func (vt *verdictTable) withMore(r *callResult, resp *pb.PreFilterResponse, asked slotSet, all bool) *verdictTable {
	out := *vt
	out.rest = all
	out.unfinishedMore = append(slices.Clone(vt.unfinishedMore), r.unfinishedOf(resp))
	k := uint8(len(out.unfinishedMore))
	if vt.part == nil {
		out.part = make([]uint8, vt.slots)
	} else {
		out.part = slices.Clone(vt.part)
	}
	out.window = slices.Clone(vt.window)
	for i, w := range asked {
		if i < len(out.window) {
			out.window[i] |= w
		}
	}
	for slot := range out.part {
		if asked.has(uint32(slot)) {
			out.part[slot] = k
		}
	}
	base := len(vt.rejectedBy)
	out.rejectedBy = append(slices.Clone(vt.rejectedBy), resp.GetRejectedBy()...)
	out.codes = append(slices.Clone(vt.codes), resp.GetCodes()...)
	out.reasons = append(slices.Clone(vt.reasons), resp.GetReasons()...)
	out.reason = slices.Clone(vt.reason)
	for _, rr := range resp.GetReason() {
		out.reason = append(out.reason, rr+uint32(len(vt.reasons)))
	}
	out.rejection = newSlotIndex(vt.slots, &vt.rejection, resp.GetRejectedNodes(), int32(base), asked, false)
	return &out
}
