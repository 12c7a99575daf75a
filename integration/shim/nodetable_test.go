package shim

import (
	"fmt"
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	pb "schedplug.dev/integration/gen/schedplugv1"
)

func TestNodeTablePlanAndCommit(t *testing.T) {
	tbl := newNodeTable()
	a, b, c := testNode("a", nil, 0), testNode("b", nil, 0), testNode("c", nil, 0)

	p := tbl.planDelta(asList(a, b, c), true, basicNode)
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
	p = tbl.planDelta(asList(a, c), false, basicNode)
	if len(p.msg.Removed) != 1 || p.msg.Removed[0] != slotB || len(p.msg.Upserts) != 0 {
		t.Fatalf("remove plan: %v", p.msg)
	}
	if p.gens[slotB] != freeSlot {
		t.Fatalf("removed slot state %v, want free", p.gens[slotB])
	}
	tbl.commit(p, 0)
	if _, ok := tbl.slotOf("b"); ok {
		t.Fatal("b still in the table")
	}

	d, e := testNode("d", nil, 0), testNode("e", nil, 0)
	p = tbl.planDelta(asList(a, c, d, e), false, basicNode)
	if len(p.msg.Upserts) != 2 || p.msg.Upserts[0].Index != slotB || p.msg.Upserts[1].Index != 3 {
		t.Fatalf("add plan: %v, want d in freed slot %d and e in slot 3", p.msg.Upserts, slotB)
	}
	tbl.commit(p, 0)
	for _, ni := range []*framework.NodeInfo{a, c, d, e} {
		s, ok := tbl.slotOf(ni.Node().Name)
		if !ok || p.gens[s].gen != ni.GetGeneration() {
			t.Fatalf("%s: slot %d ok=%v gen %d, want %d", ni.Node().Name, s, ok, p.gens[s].gen, ni.GetGeneration())
		}
	}
	if tbl.currentVersion() != 3 {
		t.Fatalf("version %d, want 3", tbl.currentVersion())
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
	tbl.commit(tbl.planDelta(nodes, true, basicNode), 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nodes[i%len(nodes)].(*framework.NodeInfo).AddPod(testPod(fmt.Sprintf("p%d", i), nil))
		p := tbl.planDelta(nodes, false, basicNode)
		if len(p.msg.Upserts) != 1 {
			b.Fatalf("upserts %d", len(p.msg.Upserts))
		}
		tbl.commit(p, 0)
	}
}

// basicNode converts a node without any declared data.
func basicNode(ni fwk.NodeInfo, slot uint32) *pb.Node { return convertNode(ni, slot, 0) }
