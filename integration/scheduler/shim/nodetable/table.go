// Package nodetable is the shim's side of a session's node table: which
// slot of the host's mirror each node occupies, what state the host holds
// for it, and the delta that brings the mirror up to date with
// kube-scheduler's snapshot (table.go, plan.go, state.go), and what the
// host is known to have applied (sync.go).
package nodetable

import (
	"sync"
	"sync/atomic"

	fwk "k8s.io/kube-scheduler/framework"
)

// Table is the shim's side of the session's node table: which slot each
// node name occupies and which NodeInfo generation the host last received
// for it. The host mirrors it; a delta carries only what changed.
//
// Deltas are computed tentatively (PlanDelta) and only committed when the
// host accepted them, so a failed or timed-out call leaves the table as the
// host last confirmed it. If the host did apply a delta whose answer was
// lost, its version is ahead of ours and it answers FAILED_PRECONDITION on
// the next call, which triggers a resync.
type Table struct {
	// mu guards everything below. Writers are serialized by the session
	// manager; readers are the Filter workers looking up slots.
	mu      sync.RWMutex
	entries map[string]*tableEntry
	// names[slot] is the node in that slot, "" for a free slot; gens[slot]
	// the state the host holds for it, FreeSlot for a free slot (copied
	// into every cycle).
	names []string
	gens  []State
	// states is gens as the cycles see it (see SlotStates); replaced, never
	// modified, by commit.
	states *SlotStates
	// order caches the slot of each position of the last snapshot list;
	// replaced, never modified, by commit (plans may share it).
	order []uint32
	// seen is the NodeInfo at each position of that list (our own copy,
	// shared like order). Holding them keeps their memory from being reused
	// for another node's NodeInfo, so the same object at the same position
	// is the same node.
	seen []fwk.NodeInfo
	// slotOfInfo maps each NodeInfo of seen to its slot (see
	// Plan.slotOfInfo); replaced, never modified, by commit.
	slotOfInfo map[fwk.NodeInfo]uint32
	// free holds released slots, reused before the table grows.
	free    []uint32
	version uint64
	// issued is the highest version ever put in a delta sent to the host,
	// so that no two deltas of this process claim the same new_version and
	// a version the host reports identifies the delta it applied.
	issued uint64
	// list is the snapshot list the committed plans were made from (its
	// first element; kube-scheduler makes a new list whenever a node comes
	// or goes, and holding this one keeps its memory from being another
	// list's); posOf[slot] is the slot's position in it (-1: none).
	list  *fwk.NodeInfo
	posOf []int32
	// walked counts the plans committed since the last that read every
	// NodeInfo; walkDue makes the next plan read them all (see changed).
	walked  int
	walkDue bool
	// tracked: the changes are marked (TrackChanges); until then every
	// plan reads every NodeInfo.
	tracked atomic.Bool
	// changed: the nodes that may have changed since the last plan, each
	// with how many more plans check it (see MarkChanged).
	changedMu sync.Mutex
	changed   map[string]int
	// inPlaceDue: a pod-group cycle was planned, so snapshot NodeInfos may
	// hold pods added or removed in place under their old generation (see
	// State); plans compare whole states until a plan that is not in
	// such a cycle, and has compared them, is committed. Atomic because
	// PlanDelta holds mu for reading only.
	inPlaceDue atomic.Bool
}

const NoSlot = ^uint32(0)

type tableEntry struct {
	slot uint32
}

func New() *Table {
	return &Table{entries: make(map[string]*tableEntry)}
}

// slotOf returns the slot of a node, for Filter and PreScore lookups.
func (t *Table) SlotOf(name string) (uint32, bool) {
	t.mu.RLock()
	e, ok := t.entries[name]
	t.mu.RUnlock()
	if !ok {
		return 0, false
	}
	return e.slot, true
}

func (t *Table) Version() uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.version
}

func (t *Table) Size() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.entries)
}

// reset forgets every node; the next delta is then a full one.
func (t *Table) Reset() {
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
	t.list, t.posOf, t.walkDue = nil, nil, true
}

// MarkChanged says that the NodeInfo of the node `name` may have changed
// (kube-scheduler reserved it, an informer event touched it, a cycle found
// its state differing from the host's): the next plans read it even when
// they read no other NodeInfo. A change no one marks is found by the
// cycles that use the node (the host's answers are checked against each
// NodeInfo's generation) and by the plan that reads every NodeInfo every
// walkEvery plans.
func (t *Table) MarkChanged(name string) {
	t.changedMu.Lock()
	defer t.changedMu.Unlock()
	if t.changed == nil {
		t.changed = make(map[string]int)
	}
	t.changed[name] = markedPlans
}

// TrackChanges says that the nodes whose NodeInfo changes will be marked
// (MarkChanged), so plans may read the marked NodeInfos alone.
func (t *Table) TrackChanges() { t.tracked.Store(true) }

// WalkNext makes the next plan read every NodeInfo.
func (t *Table) WalkNext() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.walkDue = true
}

// markedPlans is how many plans check a marked node: an informer's event
// can reach the shim before kube-scheduler's cache has the change, so the
// plan right after it may still see the old NodeInfo.
const markedPlans = 2

// walkEvery bounds how long a change no one marked stays unsent to the
// host: every walkEvery-th plan reads every NodeInfo.
const walkEvery = 32

// takeChanged returns the marked nodes and counts one plan off each.
func (t *Table) takeChanged() []string {
	t.changedMu.Lock()
	defer t.changedMu.Unlock()
	out := make([]string, 0, len(t.changed))
	for name, left := range t.changed {
		out = append(out, name)
		if left <= 1 {
			delete(t.changed, name)
		} else {
			t.changed[name] = left - 1
		}
	}
	return out
}

// nextVersion is the new_version for a delta planned now.
func (t *Table) nextVersion() uint64 {
	return max(t.version, t.issued) + 1
}

// NoteIssued records that a delta with version v was sent.
func (t *Table) NoteIssued(v uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.issued = max(t.issued, v)
}

// commit applies a delta the host accepted.
func (t *Table) Commit(p *Plan, hostVersion uint64) {
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
		t.gens[s] = FreeSlot
	}
	used := make(map[uint32]struct{}, len(p.upserts))
	for _, u := range p.upserts {
		for int(u.slot) >= len(t.names) {
			t.names = append(t.names, "")
			t.gens = append(t.gens, FreeSlot)
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
	t.states = p.States
	if p.walked {
		t.walked, t.walkDue = 0, false
		if p.list != t.list || len(p.Order) != len(t.order) || !sameSlice(p.Order, t.order) {
			t.posOf = positions(p.Order, len(t.names))
		}
		t.list = p.list
	} else {
		t.walked++
	}
	t.order = p.Order
	t.seen = p.seen
	t.slotOfInfo = p.SlotOfInfo
	t.version = p.Msg.NewVersion
	if hostVersion != 0 {
		t.version = hostVersion
	}
	t.issued = max(t.issued, t.version)
}

// positions is the position of each slot in order (-1: none).
func positions(order []uint32, slots int) []int32 {
	pos := make([]int32, slots)
	for i := range pos {
		pos[i] = -1
	}
	for i, s := range order {
		if int(s) < slots {
			pos[s] = int32(i)
		}
	}
	return pos
}

// sameSlice says whether a and b are the same slice (not merely equal).
func sameSlice(a, b []uint32) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
