package cycle

import (
	"fmt"
	"slices"
	"testing"

	fwk "k8s.io/kube-scheduler/framework"

	"schedplug.dev/integration/scheduler/shim/internal/shimtest"
)

// Scores from scores ahead find a snapshot node's index by its slot; the
// index is the one its name has, for scored nodes, for a node scored
// ahead but not among the feasible ones, for a copy of a node that is not
// the snapshot's NodeInfo, and for a node the table does not have. Scores
// that hold the feasible nodes' NodeInfos rather than their names answer
// the same and list the same names.
func TestScoresPositionOfAgreesWithPositionByName(t *testing.T) {
	var infos []fwk.NodeInfo
	slotOfInfo := map[fwk.NodeInfo]uint32{}
	for i := 0; i < 8; i++ {
		ni := shimtest.Node(fmt.Sprintf("n%d", i), nil, 0)
		infos = append(infos, ni)
		slotOfInfo[ni] = uint32(7 - i)
	}
	// Scored ahead: slots 6, 2, 5, 4 (nodes n1, n5, n2, n3) at positions
	// 0..3; the feasible nodes are n3, n1, n5 (n2 was scored ahead but
	// kube-scheduler does not score it).
	a := &aheadScores{at: newSlotIndex(8, nil, []uint32{6, 2, 5, 4}, 1, nil, true), slots: 8, n: 4, slotOfInfo: slotOfInfo}
	feasible := []string{"n3", "n1", "n5"}
	byName := &Scores{nodes: feasible, ahead: a, feasibleAt: make([]int32, a.n)}
	for i, pos := range []uint32{3, 0, 1} {
		byName.feasibleAt[pos] = int32(i + 1)
	}
	// The same scores with the feasible nodes' NodeInfos instead of names.
	byInfo := &Scores{infos: []fwk.NodeInfo{infos[3], infos[1], infos[5]}, ahead: a, feasibleAt: byName.feasibleAt}
	if !slices.Equal(byInfo.Nodes(), feasible) || byInfo.Len() != 3 || byInfo.NodeName(2) != "n5" {
		t.Errorf("scores by NodeInfo list nodes %v (%d, the last %q); want %v", byInfo.Nodes(), byInfo.Len(), byInfo.NodeName(2), feasible)
	}
	others := []fwk.NodeInfo{shimtest.Node("n3", nil, 1), shimtest.Node("elsewhere", nil, 0)}
	for _, s := range []*Scores{byName, byInfo} {
		for _, ni := range append(infos, others...) {
			want, wantOK := byName.Position(ni.Node().Name)
			got, ok := s.PositionOf(ni)
			if got != want || ok != wantOK {
				t.Errorf("PositionOf(%s) = %d, %v; Position by name %d, %v", ni.Node().Name, got, ok, want, wantOK)
			}
			if got, ok := s.Position(ni.Node().Name); got != want || ok != wantOK {
				t.Errorf("Position(%s) = %d, %v; want %d, %v", ni.Node().Name, got, ok, want, wantOK)
			}
		}
		if i, ok := s.PositionOf(infos[5]); !ok || i != 2 {
			t.Errorf("PositionOf(n5) = %d, %v; want 2, true", i, ok)
		}
	}
}
