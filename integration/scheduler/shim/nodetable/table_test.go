package nodetable

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/internal/shimtest"
	"schedplug.dev/integration/scheduler/shim/wire"
)

func TestNodeTablePlanAndCommit(t *testing.T) {
	tbl := New()
	a, b, c := shimtest.Node("a", nil, 0), shimtest.Node("b", nil, 0), shimtest.Node("c", nil, 0)

	p := tbl.PlanDelta(shimtest.List(a, b, c), true, false, basicNode)
	if p.Msg.NewVersion != 1 || len(p.Msg.Upserts) != 3 {
		t.Fatalf("full plan: %v", p.Msg)
	}
	// Not committed (the call failed): the table is unchanged.
	if tbl.Size() != 0 || tbl.Version() != 0 {
		t.Fatal("a plan changed the table before commit")
	}
	tbl.Commit(p, 1)
	slotB, _ := tbl.SlotOf("b")

	b.AddPod(shimtest.Pod("x", nil))
	p = tbl.PlanDelta(shimtest.List(a, c), false, false, basicNode)
	if len(p.Msg.Removed) != 1 || p.Msg.Removed[0] != slotB || len(p.Msg.Upserts) != 0 {
		t.Fatalf("remove plan: %v", p.Msg)
	}
	if st, _ := p.States.At(slotB); st != FreeSlot {
		t.Fatalf("removed slot state %v, want free", st)
	}
	tbl.Commit(p, 0)
	if _, ok := tbl.SlotOf("b"); ok {
		t.Fatal("b still in the table")
	}

	d, e := shimtest.Node("d", nil, 0), shimtest.Node("e", nil, 0)
	p = tbl.PlanDelta(shimtest.List(a, c, d, e), false, false, basicNode)
	if len(p.Msg.Upserts) != 2 || p.Msg.Upserts[0].Index != slotB || p.Msg.Upserts[1].Index != 3 {
		t.Fatalf("add plan: %v, want d in freed slot %d and e in slot 3", p.Msg.Upserts, slotB)
	}
	tbl.Commit(p, 0)
	for _, ni := range []*framework.NodeInfo{a, c, d, e} {
		s, ok := tbl.SlotOf(ni.Node().Name)
		st, _ := p.States.At(s)
		if !ok || st.gen != ni.GetGeneration() {
			t.Fatalf("%s: slot %d ok=%v gen %d, want %d", ni.Node().Name, s, ok, st.gen, ni.GetGeneration())
		}
	}
	if tbl.Version() != 3 {
		t.Fatalf("version %d, want 3", tbl.Version())
	}
}

// TestSlotByNodeInfoFollowsTheSnapshotList: Filter finds a node's slot by
// its NodeInfo; the map is shared while the snapshot's list is unchanged
// and rebuilt when a node comes or goes.
func TestSlotByNodeInfoFollowsTheSnapshotList(t *testing.T) {
	tbl := New()
	a, b, c := shimtest.Node("a", nil, 0), shimtest.Node("b", nil, 0), shimtest.Node("c", nil, 0)
	check := func(p *Plan, nodes ...*framework.NodeInfo) {
		t.Helper()
		if len(p.SlotOfInfo) != len(nodes) {
			t.Fatalf("%d NodeInfos mapped, want %d", len(p.SlotOfInfo), len(nodes))
		}
		for _, ni := range nodes {
			want, _ := tbl.SlotOf(ni.Node().Name)
			if got, ok := p.SlotOfInfo[ni]; !ok || got != want {
				t.Fatalf("%s: slot %d (found %v), want %d", ni.Node().Name, got, ok, want)
			}
		}
	}
	p := tbl.PlanDelta(shimtest.List(a, b, c), true, false, basicNode)
	tbl.Commit(p, 1)
	check(p, a, b, c)

	// A pod lands on b: same list, same map (not rebuilt).
	b.AddPod(shimtest.Pod("x", nil))
	q := tbl.PlanDelta(shimtest.List(a, b, c), false, false, basicNode)
	tbl.Commit(q, 0)
	if fmt.Sprintf("%p", q.SlotOfInfo) != fmt.Sprintf("%p", p.SlotOfInfo) {
		t.Fatal("the map was rebuilt although the snapshot list did not change")
	}
	check(q, a, b, c)

	// b goes, d comes (into b's freed slot): rebuilt.
	d := shimtest.Node("d", nil, 0)
	r := tbl.PlanDelta(shimtest.List(a, c, d), false, false, basicNode)
	tbl.Commit(r, 0)
	check(r, a, c, d)
	if _, ok := r.SlotOfInfo[b]; ok {
		t.Fatal("the removed node's NodeInfo is still mapped")
	}
	// A copy of a snapshot NodeInfo (a dry run's) is not the snapshot's.
	if _, ok := r.SlotOfInfo[a.SnapshotConcrete()]; ok {
		t.Fatal("a copy of a NodeInfo found a slot by identity")
	}
}

// BenchmarkPlanDelta5000 is the shim's per-cycle bookkeeping for a 5000-node
// cluster where one node changed since the last pod (the usual case).
func BenchmarkPlanDelta5000(b *testing.B) { benchPlanDelta(b, false) }

// BenchmarkPlanDelta5000Cold is the same with the caches emptied between
// cycles, as a busy scheduler leaves them: the walk reads one generation
// per node, each a cache miss.
func BenchmarkPlanDelta5000Cold(b *testing.B) { benchPlanDelta(b, true) }

func benchPlanDelta(b *testing.B, cold bool) {
	nodes := make([]fwk.NodeInfo, 5000)
	var spacers [][]byte
	for i := range nodes {
		nodes[i] = shimtest.Node(fmt.Sprintf("node-%04d", i), map[string]string{"zone": "z1"}, 0)
		if cold {
			spacers = append(spacers, make([]byte, 4096)) // NodeInfos apart, as on a real heap
		}
	}
	var evict []byte
	if cold {
		evict = make([]byte, 64<<20)
	}
	tbl := New()
	tbl.Commit(tbl.PlanDelta(nodes, true, false, basicNode), 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if cold {
			b.StopTimer()
			for j := 0; j < len(evict); j += 64 {
				evict[j]++
			}
		}
		nodes[i%len(nodes)].(*framework.NodeInfo).AddPod(shimtest.Pod(fmt.Sprintf("p%d", i), nil))
		if cold {
			b.StartTimer()
		}
		p := tbl.PlanDelta(nodes, false, false, basicNode)
		if len(p.Msg.Upserts) != 1 {
			b.Fatalf("upserts %d", len(p.Msg.Upserts))
		}
		tbl.Commit(p, 0)
	}
	runtime.KeepAlive(spacers)
}

// basicNode converts a node without any declared data.
func basicNode(ni fwk.NodeInfo, slot uint32) *pb.Node { return wire.Node(ni, slot, 0) }

// Every plan's slot states equal the table's states once it is committed,
// across many cycles (more than maxChangedSlots, so bases are rebuilt), and
// a plan's states never change afterwards: a cycle may hold them while the
// next pods' cycles commit theirs.
func TestSlotStatesFollowTheTableAndStayPut(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var nodes []*framework.NodeInfo
	for i := 0; i < 40; i++ {
		nodes = append(nodes, shimtest.Node(fmt.Sprintf("n%d", i), nil, 0))
	}
	list := func() []fwk.NodeInfo {
		out := make([]fwk.NodeInfo, len(nodes))
		for i, n := range nodes {
			out[i] = n
		}
		return out
	}
	type kept struct {
		States *SlotStates
		want   []State
	}
	var history []kept
	tbl := New()
	next := 40
	for cycle := 0; cycle < 300; cycle++ {
		switch r := rng.IntN(10); {
		case r < 6: // a pod lands on a node
			nodes[rng.IntN(len(nodes))].AddPod(shimtest.Pod(fmt.Sprintf("p%d", cycle), nil))
		case r < 8 && len(nodes) > 1: // a node goes away
			i := rng.IntN(len(nodes))
			nodes = append(nodes[:i], nodes[i+1:]...)
		default: // a node joins
			nodes = append(nodes, shimtest.Node(fmt.Sprintf("n%d", next), nil, 0))
			next++
		}
		p := tbl.PlanDelta(list(), cycle%97 == 0, false, basicNode)
		tbl.Commit(p, 0)
		want := append([]State(nil), tbl.gens...)
		for slot := range want {
			if got, ok := p.States.At(uint32(slot)); !ok || got != want[slot] {
				t.Fatalf("cycle %d slot %d: plan says %v (ok=%v), table holds %v", cycle, slot, got, ok, want[slot])
			}
		}
		if _, ok := p.States.At(uint32(len(want))); ok && len(want) >= p.States.size {
			t.Fatalf("cycle %d: a slot past the table is reported", cycle)
		}
		history = append(history, kept{p.States, want})
	}
	for i, h := range history {
		for slot, w := range h.want {
			if got, _ := h.States.At(uint32(slot)); got != w {
				t.Fatalf("the states of cycle %d changed later: slot %d is %v, was %v", i, slot, got, w)
			}
		}
	}
}

// opaqueNode hides a NodeInfo's concrete type, so that PlanDelta places
// every position one by one, as it does for any NodeInfo that is not
// kube-scheduler's own.
type opaqueNode struct{ fwk.NodeInfo }

// TestTheGenerationLoopPlansWhatPlacingEachNodeDoes: on the snapshot list
// of the last delta PlanDelta compares generations in a loop of its own
// before placing the positions that differ; its deltas, slot orders and
// states are those of placing every node, through nodes gaining pods, new
// NodeInfos for known nodes, nodes trading positions, nodes coming and
// going, pod-group cycles (pods assumed in place under the old generation)
// and resyncs.
func TestTheGenerationLoopPlansWhatPlacingEachNodeDoes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 11))
	var nodes []*framework.NodeInfo
	for i := 0; i < 60; i++ {
		nodes = append(nodes, shimtest.Node(fmt.Sprintf("n%d", i), nil, 0))
	}
	opaque := map[*framework.NodeInfo]fwk.NodeInfo{}
	lists := func() (direct, hidden []fwk.NodeInfo) {
		for _, n := range nodes {
			if opaque[n] == nil {
				opaque[n] = &opaqueNode{n}
			}
			direct, hidden = append(direct, n), append(hidden, opaque[n])
		}
		return direct, hidden
	}
	fast, plain := New(), New()
	next, loops := 60, 0
	for cycle := 0; cycle < 800; cycle++ {
		podGroup := false
		switch r := rng.IntN(20); {
		case r < 10: // a pod lands on a node
			nodes[rng.IntN(len(nodes))].AddPod(shimtest.Pod(fmt.Sprintf("p%d", cycle), nil))
		case r < 12: // a pod-group cycle assumes a pod in place, under the old generation
			n := nodes[rng.IntN(len(nodes))]
			gen := n.Generation
			n.AddPod(shimtest.Pod(fmt.Sprintf("g%d", cycle), nil))
			n.Generation = gen
			podGroup = true
		case r < 13: // the cache gives a known node a new NodeInfo, in the same state or not
			i := rng.IntN(len(nodes))
			nodes[i] = nodes[i].SnapshotConcrete()
			if rng.IntN(2) == 0 {
				nodes[i].Generation = framework.NewNodeInfo().Generation
			}
		case r < 14: // two nodes trade positions
			i, j := rng.IntN(len(nodes)), rng.IntN(len(nodes))
			nodes[i], nodes[j] = nodes[j], nodes[i]
		case r < 15 && len(nodes) > 1: // a node goes away
			i := rng.IntN(len(nodes))
			nodes = append(nodes[:i], nodes[i+1:]...)
		case r < 16: // a node joins
			nodes = append(nodes, shimtest.Node(fmt.Sprintf("n%d", next), nil, 0))
			next++
		}
		full := cycle%211 == 0
		direct, hidden := lists()
		if len(direct) == len(fast.seen) && !full && !podGroup && !fast.inPlaceDue.Load() {
			loops++
		}
		p, q := fast.PlanDelta(direct, full, podGroup, basicNode), plain.PlanDelta(hidden, full, podGroup, basicNode)
		if got, want := planSummary(p, direct), planSummary(q, hidden); got != want {
			t.Fatalf("cycle %d: the generation loop planned\n%s\nplacing each node planned\n%s", cycle, got, want)
		}
		fast.Commit(p, 0)
		plain.Commit(q, 0)
	}
	if loops < 400 {
		t.Fatalf("the generation loop ran in %d cycles of 800; the test no longer exercises it", loops)
	}
}

// planSummary is what a plan of the snapshot list nodes decides, in words.
func planSummary(p *Plan, nodes []fwk.NodeInfo) string {
	s := fmt.Sprintf("full %v versions %d->%d removed %v order %v\n", p.full, p.Msg.BaseVersion, p.Msg.NewVersion, p.Msg.Removed, p.Order)
	for i, ni := range nodes {
		if slot, ok := p.SlotOfInfo[ni]; !ok || slot != p.Order[i] {
			s += fmt.Sprintf("position %d: its NodeInfo finds slot %d (%v), not %d\n", i, slot, ok, p.Order[i])
		}
	}
	for i, u := range p.upserts {
		s += fmt.Sprintf("upsert %s slot %d state %+v index %d\n", u.name, u.slot, u.state, p.Msg.Upserts[i].Index)
	}
	for slot := 0; slot < p.States.Size(); slot++ {
		st, _ := p.States.At(uint32(slot))
		s += fmt.Sprintf("slot %d %+v\n", slot, st)
	}
	return s
}
