package shim

import (
	"sync"
	"sync/atomic"

	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// nodeTable is the shim's side of the session's node table: which slot each
// node name occupies and which NodeInfo generation the host last received
// for it. The host mirrors it; a delta carries only what changed.
//
// Deltas are computed tentatively (planDelta) and only committed when the
// host accepted them, so a failed or timed-out call leaves the table as the
// host last confirmed it. If the host did apply a delta whose answer was
// lost, its version is ahead of ours and it answers FAILED_PRECONDITION on
// the next call, which triggers a resync.
type nodeTable struct {
	// mu guards everything below. Writers are serialized by the session
	// manager; readers are the Filter workers looking up slots.
	mu      sync.RWMutex
	entries map[string]*tableEntry
	// names[slot] is the node in that slot, "" for a free slot; gens[slot]
	// the state the host holds for it, freeSlot for a free slot (copied
	// into every cycle).
	names []string
	gens  []nodeState
	// states is gens as the cycles see it (see slotStates); replaced, never
	// modified, by commit.
	states *slotStates
	// order caches the slot of each position of the last snapshot list;
	// replaced, never modified, by commit (plans may share it).
	order []uint32
	// seen is the NodeInfo at each position of that list (our own copy,
	// shared like order). Holding them keeps their memory from being reused
	// for another node's NodeInfo, so the same object at the same position
	// is the same node.
	seen []fwk.NodeInfo
	// slotOfInfo maps each NodeInfo of seen to its slot (see
	// plannedDelta.slotOfInfo); replaced, never modified, by commit.
	slotOfInfo map[fwk.NodeInfo]uint32
	// free holds released slots, reused before the table grows.
	free    []uint32
	version uint64
	// issued is the highest version ever put in a delta sent to the host,
	// so that no two deltas of this process claim the same new_version and
	// a version the host reports identifies the delta it applied.
	issued uint64
	// inPlaceDue: a pod-group cycle was planned, so snapshot NodeInfos may
	// hold pods added or removed in place under their old generation (see
	// nodeState); plans compare whole states until a plan that is not in
	// such a cycle, and has compared them, is committed. Atomic because
	// planDelta holds mu for reading only.
	inPlaceDue atomic.Bool
}

// nodeState identifies the NodeInfo state the host holds for a node: its
// generation, and the pod-derived values the host sees. The generation is
// not enough on its own: in pod-group cycles kube-scheduler's snapshot
// (pkg/scheduler/backend/cache Snapshot.AssumePod / ForgetPod) adds and
// removes assumed pods in place and then restores the old Generation. The
// host's view of a node's pods is exactly its pod count and the sum of
// their requests, so comparing those as well catches every change the host
// could observe. Outside those cycles a snapshot NodeInfo whose generation
// is unchanged is unchanged (every other change takes a new generation
// from a global counter; kube-scheduler's own snapshot update relies on
// it), so planDelta compares only generations then: reading the requests
// is a second cache miss per node, a third of the walk at 5000 nodes.
type nodeState struct {
	gen     int64
	pods    int
	cpu     int64
	mem     int64
	eph     int64
	scalars uint64 // order-independent hash of the scalar requests
}

// freeSlot is the state of a slot that holds no node.
var freeSlot = nodeState{gen: -1}

// slotStates is the node state the host holds for every slot once a delta
// is applied, as a cycle sees it: an immutable base shared by the cycles
// planned since it was built, plus the few slots changed after it (most
// cycles change one node: the one the last pod went to). Each cycle used
// to get its own copy of one entry per node, 240 KB per pod at 5000 nodes
// (BenchmarkPlanDelta5000); now the base is copied once every
// maxChangedSlots changes.
type slotStates struct {
	base    []nodeState // never written once built
	changed []slotState // later entries win; never appended to in place
	size    int
}

type slotState struct {
	slot  uint32
	state nodeState
}

// maxChangedSlots bounds the linear search in at() (a Filter call does
// one): past it the next plan builds a new base.
const maxChangedSlots = 32

// at returns the state of a slot; ok=false for a slot past the table.
func (s *slotStates) at(slot uint32) (st nodeState, ok bool) {
	if s == nil || int(slot) >= s.size {
		return nodeState{}, false
	}
	for i := len(s.changed) - 1; i >= 0; i-- {
		if s.changed[i].slot == slot {
			return s.changed[i].state, true
		}
	}
	if int(slot) < len(s.base) {
		return s.base[slot], true
	}
	return freeSlot, true
}

func stateOf(ni fwk.NodeInfo) nodeState {
	st := nodeState{gen: ni.GetGeneration(), pods: len(ni.GetPods())}
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

// fnv64a is FNV-1a of s, without hash/fnv's allocation: stateOf runs for
// every node in every cycle.
func fnv64a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

const noSlot = ^uint32(0)

type tableEntry struct {
	slot uint32
}

func newNodeTable() *nodeTable {
	return &nodeTable{entries: make(map[string]*tableEntry)}
}

// plannedDelta is a delta that has been sent (or is about to be) but is not
// yet part of the table.
type plannedDelta struct {
	msg *pb.NodeTableDelta
	// newNames: slot -> name for upserts (new and changed nodes).
	upserts []plannedUpsert
	removed []uint32
	full    bool
	// settlesInPlace: this plan compared whole states outside a pod-group
	// cycle, so committing it ends inPlaceDue.
	settlesInPlace bool
	// order[i] is the slot of the i-th snapshot node (noSlot for none),
	// seen[i] that node's NodeInfo.
	order []uint32
	seen  []fwk.NodeInfo
	// states is the node state the host holds for every slot once this
	// delta is applied (freeSlot for a free slot); the cycle keeps it to
	// decide whether a Filter call may use the PreFilter verdicts.
	states *slotStates
	// slotOfInfo is order by NodeInfo: the slot of each snapshot NodeInfo.
	// A Filter call finds its node's slot by the NodeInfo's identity, a
	// pointer hash without a lock, instead of hashing the node's name
	// under the table's lock (16 Filter workers do it for every node of
	// every cycle). Shared with the previous plan when the snapshot's list
	// did not change.
	slotOfInfo map[fwk.NodeInfo]uint32
}

type plannedUpsert struct {
	name  string
	slot  uint32
	state nodeState
}

// slotOf returns the slot of a node, for Filter and PreScore lookups.
func (t *nodeTable) slotOf(name string) (uint32, bool) {
	t.mu.RLock()
	e, ok := t.entries[name]
	t.mu.RUnlock()
	if !ok {
		return 0, false
	}
	return e.slot, true
}

func (t *nodeTable) currentVersion() uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.version
}

func (t *nodeTable) size() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.entries)
}

// reset forgets every node; the next delta is then a full one.
func (t *nodeTable) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.entries = make(map[string]*tableEntry)
	t.names = nil
	t.gens = nil
	t.states = nil
	t.order = nil
	t.seen = nil
	t.slotOfInfo = nil
	t.free = nil
	t.version = 0
}

// nextVersion is the new_version for a delta planned now.
func (t *nodeTable) nextVersion() uint64 {
	return max(t.version, t.issued) + 1
}

// noteIssued records that a delta with version v was sent.
func (t *nodeTable) noteIssued(v uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.issued = max(t.issued, v)
}

// planDelta compares the snapshot's nodes with the table and returns the
// delta that brings the host's mirror up to date. full forces every node to
// be sent (a resync). podGroupCycle says the cycle is one of a pod group's
// (CycleState.IsPodGroupSchedulingCycle), whose snapshot changes in place.
// convert builds a node's wire form; it is only called for nodes that are
// actually sent.
func (t *nodeTable) planDelta(nodes []fwk.NodeInfo, full, podGroupCycle bool, convert func(fwk.NodeInfo, uint32) *pb.Node) *plannedDelta {
	t.mu.RLock()
	defer t.mu.RUnlock()

	p := &plannedDelta{full: full}
	if podGroupCycle {
		t.inPlaceDue.Store(true)
	}
	wholeStates := podGroupCycle || t.inPlaceDue.Load()
	p.settlesInPlace = (wholeStates || full) && !podGroupCycle
	msg := &pb.NodeTableDelta{Full: full}
	p.msg = msg

	// Slots handed out in this delta: free slots first, then new ones.
	nextFree := 0
	nextNew := uint32(len(t.names))
	if full {
		nextNew = 0
	}
	allocate := func() uint32 {
		if !full && nextFree < len(t.free) {
			s := t.free[nextFree]
			nextFree++
			return s
		}
		s := nextNew
		nextNew++
		return s
	}

	matched := 0
	var seen map[string]uint32
	if full {
		seen = make(map[string]uint32, len(nodes))
	}
	// p.order shares last cycle's order until the first position that
	// differs (usually none).
	sameOrder := !full && len(nodes) == len(t.order)
	if sameOrder {
		p.order = t.order
	} else {
		p.order = make([]uint32, len(nodes))
	}
	setOrder := func(i int, slot uint32) {
		if sameOrder {
			if p.order[i] == slot {
				return
			}
			p.order = append([]uint32(nil), t.order...)
			sameOrder = false
		}
		p.order[i] = slot
	}
	sameSeen := !full && len(nodes) == len(t.seen)
	if sameSeen {
		p.seen = t.seen
	} else {
		p.seen = make([]fwk.NodeInfo, len(nodes))
	}
	setSeen := func(i int, ni fwk.NodeInfo) {
		if sameSeen {
			if p.seen[i] == ni {
				return
			}
			p.seen = append([]fwk.NodeInfo(nil), t.seen...)
			sameSeen = false
		}
		p.seen[i] = ni
	}
	for i, ni := range nodes {
		// Every path below sets order[i] (setting noSlot first would copy
		// the shared order on every cycle).
		setSeen(i, ni)
		if !full && i < len(t.seen) && i < len(t.order) && t.seen[i] == ni {
			// The same NodeInfo as last cycle at this position: the same
			// node, in the same slot. Most nodes are, and this skips reading
			// Node().Name, a cache miss per node that was most of this loop's
			// time at 5000 nodes (the v1.Node objects are all over the heap).
			if s := t.order[i]; int(s) < len(t.gens) && t.unchangedAt(s, ni, wholeStates) {
				matched++
				setOrder(i, s)
				continue
			}
		}
		node := ni.Node()
		if node == nil {
			setOrder(i, noSlot)
			continue
		}
		name := node.Name
		st := stateOf(ni)
		slot, known := noSlot, false
		if !full {
			// The snapshot lists nodes in a stable order, so last cycle's
			// slot for position i usually is the answer; comparing the name
			// (same backing string) is cheaper than hashing it.
			if i < len(t.order) {
				if s := t.order[i]; int(s) < len(t.names) && t.names[s] == name {
					slot, known = s, true
				}
			}
			if !known {
				if e, ok := t.entries[name]; ok {
					slot, known = e.slot, true
				}
			}
		}
		if known {
			matched++
			setOrder(i, slot)
			if t.gens[slot] == st {
				continue
			}
		} else {
			if full {
				// A full table must not name a node twice.
				if s, dup := seen[name]; dup {
					setOrder(i, s)
					continue
				}
			}
			slot = allocate()
			if full {
				seen[name] = slot
			}
			setOrder(i, slot)
		}
		p.upserts = append(p.upserts, plannedUpsert{name: name, slot: slot, state: st})
		msg.Upserts = append(msg.Upserts, convert(ni, slot))
	}

	// Removed nodes: table entries the snapshot no longer has. Each snapshot
	// node matches at most one entry, so only look when some are unmatched.
	if !full && matched < len(t.entries) {
		present := make(map[string]struct{}, len(nodes))
		for _, ni := range nodes {
			if n := ni.Node(); n != nil {
				present[n.Name] = struct{}{}
			}
		}
		for name, e := range t.entries {
			if _, ok := present[name]; !ok {
				p.removed = append(p.removed, e.slot)
			}
		}
		msg.Removed = p.removed
	}

	msg.BaseVersion = t.version
	msg.NewVersion = t.version
	if full {
		msg.BaseVersion = 0
		msg.NewVersion = t.nextVersion()
	} else if len(msg.Upserts) > 0 || len(msg.Removed) > 0 {
		msg.NewVersion = t.nextVersion()
	}

	if sameOrder && sameSeen && t.slotOfInfo != nil {
		p.slotOfInfo = t.slotOfInfo
	} else {
		p.slotOfInfo = make(map[fwk.NodeInfo]uint32, len(nodes))
		for i, ni := range p.seen {
			if p.order[i] != noSlot {
				p.slotOfInfo[ni] = p.order[i]
			}
		}
	}

	// Node states per slot after the delta.
	size := int(nextNew)
	if !full && len(t.gens) > size {
		size = len(t.gens)
	}
	p.states = t.planStates(p, size)
	return p
}

// unchangedAt says whether ni is in the state the table holds for slot s:
// the generation alone says so, except while the snapshot may change in
// place (wholeStates, see nodeState). Callers hold t.mu (read).
func (t *nodeTable) unchangedAt(s uint32, ni fwk.NodeInfo, wholeStates bool) bool {
	if wholeStates {
		return t.gens[s] == stateOf(ni)
	}
	return t.gens[s].gen == ni.GetGeneration()
}

// planStates returns the slot states after p: the table's, with p's
// removals and upserts on top, sharing the current base while the changes
// since it stay few. Callers hold t.mu (read).
func (t *nodeTable) planStates(p *plannedDelta, size int) *slotStates {
	cur := t.states
	if p.full || cur == nil {
		cur = &slotStates{}
	}
	delta := len(p.removed) + len(p.upserts)
	if delta == 0 && size == cur.size {
		return cur
	}
	if len(cur.changed)+delta <= maxChangedSlots {
		ch := make([]slotState, 0, len(cur.changed)+delta)
		ch = append(ch, cur.changed...)
		for _, s := range p.removed {
			ch = append(ch, slotState{slot: s, state: freeSlot})
		}
		for _, u := range p.upserts {
			ch = append(ch, slotState{slot: u.slot, state: u.state})
		}
		return &slotStates{base: cur.base, changed: ch, size: size}
	}
	// A new base: the table's states with p applied.
	base := make([]nodeState, size)
	n := 0
	if !p.full {
		n = copy(base, t.gens)
	}
	for i := n; i < size; i++ {
		base[i] = freeSlot
	}
	for _, s := range p.removed {
		base[s] = freeSlot
	}
	for _, u := range p.upserts {
		base[u.slot] = u.state
	}
	return &slotStates{base: base, size: size}
}

// commit applies a delta the host accepted.
func (t *nodeTable) commit(p *plannedDelta, hostVersion uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p.settlesInPlace {
		t.inPlaceDue.Store(false)
	}
	if p.full {
		t.entries = make(map[string]*tableEntry, len(p.upserts))
		t.names = nil
		t.gens = nil
		t.free = nil
	}
	for _, s := range p.removed {
		name := t.names[s]
		delete(t.entries, name)
		t.names[s] = ""
		t.gens[s] = freeSlot
	}
	used := make(map[uint32]struct{}, len(p.upserts))
	for _, u := range p.upserts {
		for int(u.slot) >= len(t.names) {
			t.names = append(t.names, "")
			t.gens = append(t.gens, freeSlot)
		}
		if _, ok := t.entries[u.name]; !ok {
			t.entries[u.name] = &tableEntry{slot: u.slot}
		}
		t.names[u.slot] = u.name
		t.gens[u.slot] = u.state
		used[u.slot] = struct{}{}
	}
	// Rebuild the free list: slots taken from it are gone, removed ones join.
	free := t.free[:0:0]
	for _, s := range t.free {
		if _, ok := used[s]; !ok {
			free = append(free, s)
		}
	}
	for _, s := range p.removed {
		if _, ok := used[s]; !ok {
			free = append(free, s)
		}
	}
	t.free = free
	t.states = p.states
	t.order = p.order
	t.seen = p.seen
	t.slotOfInfo = p.slotOfInfo
	t.version = p.msg.NewVersion
	if hostVersion != 0 {
		t.version = hostVersion
	}
	t.issued = max(t.issued, t.version)
}
