package cycle

import (
	"math/bits"
	"slices"
	"sync"
)

// How far kube-scheduler's start index moves: the nodes its Filter walk
// counted, not how far the walk's visits reach.
//
// kube-scheduler moves its start index by the nodes the cycle's walk
// counted: the nodes that passed, up to as many as it looks for, and every
// node that failed. Its Filter workers take the list in chunks (about
// sqrt(nodes) positions each, more chunks than cores), so when enough
// nodes have passed, workers that were descheduled in the middle of a
// chunk finish the node they were on: visits at the first positions of
// chunks up to a thousand positions past the counted ones at 5000 nodes,
// which the start index never reaches. Taken as part of the run, they made
// the next window start too late (a miss) and the feasible target count
// every node up to them (a walk twice as long).
//
// So the shim learns the step instead. Between two cycles that called, the
// start moved by what the first one counted: the nodes that passed (its
// quota: as many as kube-scheduler looks for, plus any that its own
// filters rejected before a native plugin was asked) and the ones native
// plugins rejected, which the shim knows. The next step is then the last
// cycle's native rejections plus the median of the recent quotas, and the
// run ends there when that is shorter than the visits' reach and the
// visits past it show such workers (strayTail).
type walkLog struct {
	mu sync.Mutex
	// The last two cycles' visits, and how many of the visited nodes a
	// native plugin rejected (-1: unknown, a cycle that answered from kept
	// verdicts or whose call failed).
	prev, last                 visitSet
	prevRejected, lastRejected int
	// learned: the step from prev to last is in quotas.
	learned bool
	quotas  [runLogSize]int
	n, next int
}

// note takes the last cycle's visits and native rejections.
func (w *walkLog) note(visits visitSet, rejected int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.prev, w.prevRejected = w.last, w.lastRejected
	w.last, w.lastRejected = visits, rejected
	w.learned = false
}

// counted is the predicted number of list positions the last cycle's walk
// counted, in `order` (the positions' slots); 0 when there is nothing to
// go by. The first call after note learns the step between the last two
// cycles.
func (w *walkLog) counted(order []uint32) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.learned {
		w.learned = true
		w.learn(order)
	}
	if w.lastRejected < 0 || w.n == 0 {
		return 0
	}
	quotas := slices.Clone(w.quotas[:w.n])
	slices.Sort(quotas)
	return w.lastRejected + quotas[len(quotas)/2]
}

// learn notes the previous cycle's quota: how far the start moved between
// it and the last cycle, less its native rejections. Callers hold w.mu.
func (w *walkLog) learn(order []uint32) {
	if w.prevRejected < 0 {
		return
	}
	from, ok1 := walkStart(order, w.prev)
	to, ok2 := walkStart(order, w.last)
	if !ok1 || !ok2 {
		return
	}
	step := (to - from + len(order)) % len(order)
	if quota := step - w.prevRejected; quota > 0 {
		w.quotas[w.next] = quota
		w.next = (w.next + 1) % runLogSize
		w.n = min(w.n+1, runLogSize)
	}
}

// walkStart is the list position where the walk that made `visited`
// began: its first visit after the largest gap (lastRun).
func walkStart(order []uint32, visited visitSet) (int, bool) {
	next, run, ok := lastRun(order, visited, 0)
	if !ok {
		return 0, false
	}
	return (next - run + len(order)) % len(order), true
}

// rejectedVisits is how many of the visited slots a native plugin
// rejected in vt.
func rejectedVisits(visits visitSet, vt *verdictTable) int {
	n := 0
	for i := range visits {
		word := visits[i].Load()
		for word != 0 {
			slot := uint32(i*64 + bits.TrailingZeros64(word))
			word &= word - 1
			if int(slot) < vt.slots && vt.rejectionAt(slot) >= 0 {
				n++
			}
		}
	}
	return n
}
