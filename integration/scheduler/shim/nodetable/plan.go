package nodetable

import (
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// Plan is a delta that has been sent (or is about to be) but is not
// yet part of the table.
type Plan struct {
	Msg *pb.NodeTableDelta
	// newNames: slot -> name for upserts (new and changed nodes).
	upserts []plannedUpsert
	removed []uint32
	full    bool
	// settlesInPlace: this plan compared whole states outside a pod-group
	// cycle, so committing it ends inPlaceDue.
	settlesInPlace bool
	// order[i] is the slot of the i-th snapshot node (NoSlot for none),
	// seen[i] that node's NodeInfo.
	Order []uint32
	seen  []fwk.NodeInfo
	// states is the node state the host holds for every slot once this
	// delta is applied (FreeSlot for a free slot); the cycle keeps it to
	// decide whether a Filter call may use the PreFilter verdicts.
	States *SlotStates
	// slotOfInfo is order by NodeInfo: the slot of each snapshot NodeInfo.
	// A Filter call finds its node's slot by the NodeInfo's identity, a
	// pointer hash without a lock, instead of hashing the node's name
	// under the table's lock (16 Filter workers do it for every node of
	// every cycle). Shared with the previous plan when the snapshot's list
	// did not change.
	SlotOfInfo map[fwk.NodeInfo]uint32
}

type plannedUpsert struct {
	name  string
	slot  uint32
	state State
}

// PlanDelta compares the snapshot's nodes with the table and returns the
// delta that brings the host's mirror up to date. full forces every node to
// be sent (a resync). podGroupCycle says the cycle is one of a pod group's
// (CycleState.IsPodGroupSchedulingCycle), whose snapshot changes in place.
// convert builds a node's wire form; it is only called for nodes that are
// actually sent.
func (t *Table) PlanDelta(nodes []fwk.NodeInfo, full, podGroupCycle bool, convert func(fwk.NodeInfo, uint32) *pb.Node) *Plan {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if podGroupCycle {
		t.inPlaceDue.Store(true)
	}
	pl := newPlanner(t, len(nodes), full, podGroupCycle || t.inPlaceDue.Load(), convert)
	pl.p.settlesInPlace = (pl.wholeStates || full) && !podGroupCycle
	pl.placeAll(nodes)
	if !full && pl.matched < len(t.entries) {
		pl.removeMissing(nodes)
	}
	pl.setVersions()
	pl.setSlotOfInfo(len(nodes))
	size := int(pl.nextNew)
	if !full && len(t.gens) > size {
		size = len(t.gens)
	}
	pl.p.States = t.planStates(pl.p, size)
	return pl.p
}

// planner is one PlanDelta in progress. Callers hold t.mu (read).
type planner struct {
	t           *Table
	p           *Plan
	full        bool
	wholeStates bool // compare whole states, not generations (see State)
	convert     func(fwk.NodeInfo, uint32) *pb.Node
	// Slots handed out in this delta: free slots first, then new ones.
	nextFree int
	nextNew  uint32
	matched  int               // snapshot nodes that have a table entry
	seenName map[string]uint32 // full tables only: names already placed
	// p.Order and p.seen share the table's until the first position that
	// differs (usually none).
	sameOrder, sameSeen bool
}

func newPlanner(t *Table, n int, full, wholeStates bool, convert func(fwk.NodeInfo, uint32) *pb.Node) *planner {
	pl := &planner{t: t, p: &Plan{full: full, Msg: &pb.NodeTableDelta{Full: full}}, full: full, wholeStates: wholeStates,
		convert: convert, nextNew: uint32(len(t.names))}
	if full {
		pl.nextNew = 0
		pl.seenName = make(map[string]uint32, n)
	}
	pl.sameOrder = !full && n == len(t.order)
	if pl.sameOrder {
		pl.p.Order = t.order
	} else {
		pl.p.Order = make([]uint32, n)
	}
	pl.sameSeen = !full && n == len(t.seen)
	if pl.sameSeen {
		pl.p.seen = t.seen
	} else {
		pl.p.seen = make([]fwk.NodeInfo, n)
	}
	return pl
}

// placeAll places every snapshot node. On the list of the last delta and
// outside pod-group cycles (the usual cycle) it first compares each
// position's generation with the table's in a loop without calls or
// interface comparisons, and leaves place only the positions that differ:
// each node costs a cache miss for its generation, and such a loop keeps
// many of them in flight at once where place's body kept few.
func (pl *planner) placeAll(nodes []fwk.NodeInfo) {
	t := pl.t
	if pl.full || pl.wholeStates || !pl.sameSeen || !pl.sameOrder {
		for i, ni := range nodes {
			pl.place(i, ni)
		}
		return
	}
	seen, order, gens := t.seen[:len(nodes)], t.order[:len(nodes)], t.gens
	unchanged := 0
	for i, ni := range nodes {
		if c, ok := ni.(*framework.NodeInfo); ok {
			if prev, _ := seen[i].(*framework.NodeInfo); prev == c {
				if s := order[i]; int(s) < len(gens) && gens[s].gen == c.Generation {
					unchanged++
					continue
				}
			}
		}
		pl.place(i, ni)
	}
	pl.matched += unchanged
}

// place decides the slot of the snapshot's i-th node and whether the host
// needs it sent. Every path sets Order[i] (setting NoSlot first would copy
// the shared order on every cycle).
func (pl *planner) place(i int, ni fwk.NodeInfo) {
	t := pl.t
	pl.setSeen(i, ni)
	if !pl.full && i < len(t.seen) && i < len(t.order) && t.seen[i] == ni {
		// The same NodeInfo as last cycle at this position: the same node,
		// in the same slot. Most nodes are, and this skips reading
		// Node().Name, a cache miss per node (the v1.Node objects are all
		// over the heap).
		if s := t.order[i]; int(s) < len(t.gens) && t.unchangedAt(s, ni, pl.wholeStates) {
			pl.matched++
			pl.setOrder(i, s)
			return
		}
	}
	node := ni.Node()
	if node == nil {
		pl.setOrder(i, NoSlot)
		return
	}
	name, st := node.Name, StateOf(ni)
	slot, known := pl.knownSlot(i, name)
	switch {
	case known:
		pl.matched++
		pl.setOrder(i, slot)
		if t.gens[slot] == st {
			return
		}
	case pl.full && pl.seenName[name] != 0:
		// A full table must not name a node twice.
		pl.setOrder(i, pl.seenName[name]-1)
		return
	default:
		slot = pl.allocate()
		if pl.full {
			pl.seenName[name] = slot + 1
		}
		pl.setOrder(i, slot)
	}
	pl.p.upserts = append(pl.p.upserts, plannedUpsert{name: name, slot: slot, state: st})
	pl.p.Msg.Upserts = append(pl.p.Msg.Upserts, pl.convert(ni, slot))
}

// knownSlot is the slot the table holds for the node `name` at snapshot
// position i, if any.
func (pl *planner) knownSlot(i int, name string) (uint32, bool) {
	t := pl.t
	if pl.full {
		return NoSlot, false
	}
	// The snapshot lists nodes in a stable order, so last cycle's slot for
	// position i usually is the answer; comparing the name (same backing
	// string) is cheaper than hashing it.
	if i < len(t.order) {
		if s := t.order[i]; int(s) < len(t.names) && t.names[s] == name {
			return s, true
		}
	}
	if e, ok := t.entries[name]; ok {
		return e.slot, true
	}
	return NoSlot, false
}

func (pl *planner) allocate() uint32 {
	if !pl.full && pl.nextFree < len(pl.t.free) {
		s := pl.t.free[pl.nextFree]
		pl.nextFree++
		return s
	}
	s := pl.nextNew
	pl.nextNew++
	return s
}

func (pl *planner) setOrder(i int, slot uint32) {
	if pl.sameOrder {
		if pl.p.Order[i] == slot {
			return
		}
		pl.p.Order = append([]uint32(nil), pl.t.order...)
		pl.sameOrder = false
	}
	pl.p.Order[i] = slot
}

func (pl *planner) setSeen(i int, ni fwk.NodeInfo) {
	if pl.sameSeen {
		if pl.p.seen[i] == ni {
			return
		}
		pl.p.seen = append([]fwk.NodeInfo(nil), pl.t.seen...)
		pl.sameSeen = false
	}
	pl.p.seen[i] = ni
}

// removeMissing lists the table entries the snapshot no longer has. Each
// snapshot node matches at most one entry, so PlanDelta only looks when
// some are unmatched.
func (pl *planner) removeMissing(nodes []fwk.NodeInfo) {
	present := make(map[string]struct{}, len(nodes))
	for _, ni := range nodes {
		if n := ni.Node(); n != nil {
			present[n.Name] = struct{}{}
		}
	}
	for name, e := range pl.t.entries {
		if _, ok := present[name]; !ok {
			pl.p.removed = append(pl.p.removed, e.slot)
		}
	}
	pl.p.Msg.Removed = pl.p.removed
}

func (pl *planner) setVersions() {
	msg, t := pl.p.Msg, pl.t
	msg.BaseVersion = t.version
	msg.NewVersion = t.version
	if pl.full {
		msg.BaseVersion = 0
		msg.NewVersion = t.nextVersion()
	} else if len(msg.Upserts) > 0 || len(msg.Removed) > 0 {
		msg.NewVersion = t.nextVersion()
	}
}

func (pl *planner) setSlotOfInfo(n int) {
	if pl.sameOrder && pl.sameSeen && pl.t.slotOfInfo != nil {
		pl.p.SlotOfInfo = pl.t.slotOfInfo
		return
	}
	pl.p.SlotOfInfo = make(map[fwk.NodeInfo]uint32, n)
	for i, ni := range pl.p.seen {
		if pl.p.Order[i] != NoSlot {
			pl.p.SlotOfInfo[ni] = pl.p.Order[i]
		}
	}
}

// unchangedAt says whether ni is in the state the table holds for slot s:
// the generation alone says so, except while the snapshot may change in
// place (wholeStates, see State). Callers hold t.mu (read).
func (t *Table) unchangedAt(s uint32, ni fwk.NodeInfo, wholeStates bool) bool {
	return t.gens[s].Holds(ni, wholeStates)
}

// planStates returns the slot states after p: the table's, with p's
// removals and upserts on top, sharing the current base while the changes
// since it stay few. Callers hold t.mu (read).
func (t *Table) planStates(p *Plan, size int) *SlotStates {
	cur := t.states
	if p.full || cur == nil {
		cur = &SlotStates{}
	}
	delta := len(p.removed) + len(p.upserts)
	if delta == 0 && size == cur.size {
		return cur
	}
	if len(cur.changed)+delta <= maxChangedSlots {
		ch := make([]slotState, 0, len(cur.changed)+delta)
		ch = append(ch, cur.changed...)
		for _, s := range p.removed {
			ch = append(ch, slotState{slot: s, state: FreeSlot})
		}
		for _, u := range p.upserts {
			ch = append(ch, slotState{slot: u.slot, state: u.state})
		}
		return &SlotStates{base: cur.base, changed: ch, size: size}
	}
	// A new base: the table's states with p applied.
	base := make([]State, size)
	n := 0
	if !p.full {
		n = copy(base, t.gens)
	}
	for i := n; i < size; i++ {
		base[i] = FreeSlot
	}
	for _, s := range p.removed {
		base[s] = FreeSlot
	}
	for _, u := range p.upserts {
		base[u.slot] = u.state
	}
	return &SlotStates{base: base, size: size}
}
