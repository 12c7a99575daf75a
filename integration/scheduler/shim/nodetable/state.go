package nodetable

import (
	fwk "k8s.io/kube-scheduler/framework"
)

// State identifies the NodeInfo state the host holds for a node: its
// generation, and the pod-derived values the host sees. The generation is
// not enough on its own: in pod-group cycles kube-scheduler's snapshot
// (pkg/scheduler/backend/cache Snapshot.AssumePod / ForgetPod) adds and
// removes assumed pods in place and then restores the old Generation. The
// host's view of a node's pods is exactly its pod count and the sum of
// their requests, so comparing those as well catches every change the host
// could observe. Outside those cycles a snapshot NodeInfo whose generation
// is unchanged is unchanged (every other change takes a new generation
// from a global counter; kube-scheduler's own snapshot update relies on
// it), so PlanDelta compares only generations then: reading the requests
// is a second cache miss per node, a third of the walk at 5000 nodes.
type State struct {
	gen     int64
	pods    int
	cpu     int64
	mem     int64
	eph     int64
	scalars uint64 // order-independent hash of the scalar requests
}

// Generation is the NodeInfo generation of the state.
func (s State) Generation() int64 { return s.gen }

// Holds says whether ni is in state s. Outside pod-group cycles the
// generation alone says so (see State), which spares reading the pods and
// requests, a cache miss per node; whole compares every value.
func (s State) Holds(ni fwk.NodeInfo, whole bool) bool {
	if s.gen != ni.GetGeneration() {
		return false
	}
	return !whole || s == StateOf(ni)
}

// FreeSlot is the state of a slot that holds no node.
var FreeSlot = State{gen: -1}

// SlotStates is the node state the host holds for every slot once a delta
// is applied, as a cycle sees it: an immutable base shared by the cycles
// planned since it was built, plus the few slots changed after it (most
// cycles change one node: the one the last pod went to). Each cycle used
// to get its own copy of one entry per node, 240 KB per pod at 5000 nodes
// (BenchmarkPlanDelta5000); now the base is copied once every
// maxChangedSlots changes.
type SlotStates struct {
	base    []State     // never written once built
	changed []slotState // later entries win; never appended to in place
	size    int
}

type slotState struct {
	slot  uint32
	state State
}

// maxChangedSlots bounds the linear search in at() (a Filter call does
// one): past it the next plan builds a new base.
const maxChangedSlots = 32

// at returns the state of a slot; ok=false for a slot past the table.
func (s *SlotStates) At(slot uint32) (st State, ok bool) {
	if s == nil || int(slot) >= s.size {
		return State{}, false
	}
	for i := len(s.changed) - 1; i >= 0; i-- {
		if s.changed[i].slot == slot {
			return s.changed[i].state, true
		}
	}
	if int(slot) < len(s.base) {
		return s.base[slot], true
	}
	return FreeSlot, true
}

func StateOf(ni fwk.NodeInfo) State {
	st := State{gen: ni.GetGeneration(), pods: len(ni.GetPods())}
	r := ni.GetRequested()
	if r == nil {
		return st
	}
	st.cpu, st.mem, st.eph = r.GetMilliCPU(), r.GetMemory(), r.GetEphemeralStorage()
	if sr := r.GetScalarResources(); len(sr) > 0 {
		for name, v := range sr {
			st.scalars += fnv64a(string(name)) ^ (uint64(v) * 0x9e3779b97f4a7c15)
		}
	}
	return st
}

// fnv64a is FNV-1a of s, without hash/fnv's allocation: StateOf runs for
// every node in every cycle.
func fnv64a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// Size is the number of slots, free ones included.
func (s *SlotStates) Size() int {
	if s == nil {
		return 0
	}
	return s.size
}
