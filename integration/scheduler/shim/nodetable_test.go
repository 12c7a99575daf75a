package shim

import (
	"fmt"
	"math/rand/v2"
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

func TestNodeTablePlanAndCommit(t *testing.T) {
	tbl := newNodeTable()
	a, b, c := testNode("a", nil, 0), testNode("b", nil, 0), testNode("c", nil, 0)

	p := tbl.planDelta(asList(a, b, c), true, false, basicNode)
	if p.msg.NewVersion != 1 || len(p.msg.Upserts) != 3 {
		t.Fatalf("full plan: %v", p.msg)
	}
	// Not committed (the call failed): the table is unchanged.
	if tbl.size() != 0 || tbl.currentVersion() != 0 {
		t.Fatal("a plan changed the table before commit")
	}
	tbl.commit(p, 1)
	slotB, _ := tbl.slotOf("b")

	b.AddPod(testPod("x", nil))
	p = tbl.planDelta(asList(a, c), false, false, basicNode)
	if len(p.msg.Removed) != 1 || p.msg.Removed[0] != slotB || len(p.msg.Upserts) != 0 {
		t.Fatalf("remove plan: %v", p.msg)
	}
	if st, _ := p.states.at(slotB); st != freeSlot {
		t.Fatalf("removed slot state %v, want free", st)
	}
	tbl.commit(p, 0)
	if _, ok := tbl.slotOf("b"); ok {
		t.Fatal("b still in the table")
	}

	d, e := testNode("d", nil, 0), testNode("e", nil, 0)
	p = tbl.planDelta(asList(a, c, d, e), false, false, basicNode)
	if len(p.msg.Upserts) != 2 || p.msg.Upserts[0].Index != slotB || p.msg.Upserts[1].Index != 3 {
		t.Fatalf("add plan: %v, want d in freed slot %d and e in slot 3", p.msg.Upserts, slotB)
	}
	tbl.commit(p, 0)
	for _, ni := range []*framework.NodeInfo{a, c, d, e} {
		s, ok := tbl.slotOf(ni.Node().Name)
		st, _ := p.states.at(s)
		if !ok || st.gen != ni.GetGeneration() {
			t.Fatalf("%s: slot %d ok=%v gen %d, want %d", ni.Node().Name, s, ok, st.gen, ni.GetGeneration())
		}
	}
	if tbl.currentVersion() != 3 {
		t.Fatalf("version %d, want 3", tbl.currentVersion())
	}
}

// TestSlotByNodeInfoFollowsTheSnapshotList: Filter finds a node's slot by
// its NodeInfo; the map is shared while the snapshot's list is unchanged
// and rebuilt when a node comes or goes.
func TestSlotByNodeInfoFollowsTheSnapshotList(t *testing.T) {
	tbl := newNodeTable()
	a, b, c := testNode("a", nil, 0), testNode("b", nil, 0), testNode("c", nil, 0)
	check := func(p *plannedDelta, nodes ...*framework.NodeInfo) {
		t.Helper()
		if len(p.slotOfInfo) != len(nodes) {
			t.Fatalf("%d NodeInfos mapped, want %d", len(p.slotOfInfo), len(nodes))
		}
		for _, ni := range nodes {
			want, _ := tbl.slotOf(ni.Node().Name)
			if got, ok := p.slotOfInfo[ni]; !ok || got != want {
				t.Fatalf("%s: slot %d (found %v), want %d", ni.Node().Name, got, ok, want)
			}
		}
	}
	p := tbl.planDelta(asList(a, b, c), true, false, basicNode)
	tbl.commit(p, 1)
	check(p, a, b, c)

	// A pod lands on b: same list, same map (not rebuilt).
	b.AddPod(testPod("x", nil))
	q := tbl.planDelta(asList(a, b, c), false, false, basicNode)
	tbl.commit(q, 0)
	if fmt.Sprintf("%p", q.slotOfInfo) != fmt.Sprintf("%p", p.slotOfInfo) {
		t.Fatal("the map was rebuilt although the snapshot list did not change")
	}
	check(q, a, b, c)

	// b goes, d comes (into b's freed slot): rebuilt.
	d := testNode("d", nil, 0)
	r := tbl.planDelta(asList(a, c, d), false, false, basicNode)
	tbl.commit(r, 0)
	check(r, a, c, d)
	if _, ok := r.slotOfInfo[b]; ok {
		t.Fatal("the removed node's NodeInfo is still mapped")
	}
	// A copy of a snapshot NodeInfo (a dry run's) is not the snapshot's.
	if _, ok := r.slotOfInfo[a.SnapshotConcrete()]; ok {
		t.Fatal("a copy of a NodeInfo found a slot by identity")
	}
}

// BenchmarkPlanDelta5000 is the shim's per-cycle bookkeeping for a 5000-node
// cluster where one node changed since the last pod (the usual case).
func BenchmarkPlanDelta5000(b *testing.B) {
	nodes := make([]fwk.NodeInfo, 5000)
	for i := range nodes {
		nodes[i] = testNode(fmt.Sprintf("node-%04d", i), map[string]string{"zone": "z1"}, 0)
	}
	tbl := newNodeTable()
	tbl.commit(tbl.planDelta(nodes, true, false, basicNode), 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nodes[i%len(nodes)].(*framework.NodeInfo).AddPod(testPod(fmt.Sprintf("p%d", i), nil))
		p := tbl.planDelta(nodes, false, false, basicNode)
		if len(p.msg.Upserts) != 1 {
			b.Fatalf("upserts %d", len(p.msg.Upserts))
		}
		tbl.commit(p, 0)
	}
}

// basicNode converts a node without any declared data.
func basicNode(ni fwk.NodeInfo, slot uint32) *pb.Node { return convertNode(ni, slot, 0) }

// Every plan's slot states equal the table's states once it is committed,
// across many cycles (more than maxChangedSlots, so bases are rebuilt), and
// a plan's states never change afterwards: a cycle may hold them while the
// next pods' cycles commit theirs.
func TestSlotStatesFollowTheTableAndStayPut(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var nodes []*framework.NodeInfo
	for i := 0; i < 40; i++ {
		nodes = append(nodes, testNode(fmt.Sprintf("n%d", i), nil, 0))
	}
	list := func() []fwk.NodeInfo {
		out := make([]fwk.NodeInfo, len(nodes))
		for i, n := range nodes {
			out[i] = n
		}
		return out
	}
	type kept struct {
		states *slotStates
		want   []nodeState
	}
	var history []kept
	tbl := newNodeTable()
	next := 40
	for cycle := 0; cycle < 300; cycle++ {
		switch r := rng.IntN(10); {
		case r < 6: // a pod lands on a node
			nodes[rng.IntN(len(nodes))].AddPod(testPod(fmt.Sprintf("p%d", cycle), nil))
		case r < 8 && len(nodes) > 1: // a node goes away
			i := rng.IntN(len(nodes))
			nodes = append(nodes[:i], nodes[i+1:]...)
		default: // a node joins
			nodes = append(nodes, testNode(fmt.Sprintf("n%d", next), nil, 0))
			next++
		}
		p := tbl.planDelta(list(), cycle%97 == 0, false, basicNode)
		tbl.commit(p, 0)
		want := append([]nodeState(nil), tbl.gens...)
		for slot := range want {
			if got, ok := p.states.at(uint32(slot)); !ok || got != want[slot] {
				t.Fatalf("cycle %d slot %d: plan says %v (ok=%v), table holds %v", cycle, slot, got, ok, want[slot])
			}
		}
		if _, ok := p.states.at(uint32(len(want))); ok && len(want) >= p.states.size {
			t.Fatalf("cycle %d: a slot past the table is reported", cycle)
		}
		history = append(history, kept{p.states, want})
	}
	for i, h := range history {
		for slot, w := range h.want {
			if got, _ := h.states.at(uint32(slot)); got != w {
				t.Fatalf("the states of cycle %d changed later: slot %d is %v, was %v", i, slot, got, w)
			}
		}
	}
}
