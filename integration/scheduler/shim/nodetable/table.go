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
}

// nextVersion is the new_version for a delta planned now.
func (t *Table) nextVersion() uint64 {
	return max(t.version, t.issued) + 1
}

// NoteIssued notes that a delta with version v was sent.
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
	t.order = p.Order
	t.seen = p.seen
	t.slotOfInfo = p.SlotOfInfo
	t.version = p.Msg.NewVersion
	if hostVersion != 0 {
		t.version = hostVersion
	}
	t.issued = max(t.issued, t.version)
}
