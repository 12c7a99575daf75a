package cycle

import (
	"math/rand/v2"
	"testing"

	"schedplug.dev/integration/scheduler/shim/nodetable"
)

// frameworkWalk is what the shim sees of one kube-scheduler Filter walk
// over an identity order of n positions from `start`: `counted` positions
// visited in a run (every `stride`-th of them rejected by a native plugin
// when stride > 0), and, past them, one visit at the first position of
// each of `strays` chunks of sqrt(n) positions (workers finishing the node
// they were on after the walk had enough).
func frameworkWalk(n, start, counted, strays int) visitSet {
	chunk := 70
	var positions []int
	for i := 0; i < counted; i++ {
		positions = append(positions, (start+i)%n)
	}
	first := (counted/chunk + 2) * chunk
	for k := 0; k < strays; k++ {
		positions = append(positions, (start+first+k*chunk)%n)
	}
	return visitsAt(n, positions...)
}

// The start index moves by the counted positions: after two walks, the
// next run ends there, not at the last stray visit a thousand positions
// further, and the window (a feasible target's, from a margin before)
// covers where the next walk begins.
func TestTheRunEndsWhereKubeSchedulerCountedNotAtTheStrayVisits(t *testing.T) {
	const n = 5000
	order := identityOrder(n)
	var walks walkLog
	start := 100
	var visits visitSet
	for cycle := 0; cycle < 3; cycle++ {
		visits = frameworkWalk(n, start, 500, 14)
		walks.note(visits, 0)
		if cycle > 0 {
			if got := walks.counted(order); got != 500 {
				t.Fatalf("cycle %d: counted = %d, want 500 (the step between the walks)", cycle, got)
			}
		}
		start += 500
	}
	// Without the count, the run reaches the last stray.
	next, run, _ := lastRun(order, visits, 0)
	if run < 1400 {
		t.Fatalf("lastRun without a count = (%d, %d): the strays should reach past 1400 positions", next, run)
	}
	next, run, ok := lastRun(order, visits, walks.counted(order))
	if !ok || next != start%n || run != 500 {
		t.Fatalf("lastRun = (%d, %d, %v), want (%d, 500, true)", next, run, ok, start%n)
	}
	wstart, _, ok := targetWindow(order, visits, walks.counted(order), nil)
	if !ok || (start-wstart+n)%n > targetMarginsBefore(500)*windowMargin(n) {
		t.Fatalf("targetWindow starts at %d (%v), want at most a margin before %d", wstart, ok, start)
	}
}

// A walk whose native plugins rejected nodes moved the start index by
// those too: the quota learned is the passed nodes, and the next count
// adds the last walk's own rejections.
func TestTheCountAddsTheLastWalksNativeRejections(t *testing.T) {
	const n = 5000
	order := identityOrder(n)
	var walks walkLog
	// Two walks of 500 passed nodes each, the first with 300 rejections.
	walks.note(frameworkWalk(n, 0, 800, 10), 300)
	walks.note(frameworkWalk(n, 800, 500, 10), 0)
	if got := walks.counted(order); got != 500 {
		t.Fatalf("counted = %d, want 500", got)
	}
	// The next walk rejected 1000 nodes on the way to its 500.
	walks.note(frameworkWalk(n, 1300, 1500, 10), 1000)
	if got := walks.counted(order); got != 1500 {
		t.Fatalf("counted after a walk with 1000 rejections = %d, want 1500", got)
	}
}

// Nothing to go by: a cycle that answered from kept verdicts (rejections
// unknown) gives no count, and the run is the visits' reach as before.
func TestNoCountWithoutTheLastWalksRejections(t *testing.T) {
	const n = 1000
	order := identityOrder(n)
	var walks walkLog
	walks.note(frameworkWalk(n, 0, 200, 3), 0)
	walks.note(frameworkWalk(n, 200, 200, 3), 0)
	if got := walks.counted(order); got != 200 {
		t.Fatalf("counted = %d, want 200", got)
	}
	walks.note(frameworkWalk(n, 400, 200, 3), -1)
	if got := walks.counted(order); got != 0 {
		t.Fatalf("counted after a cycle without its verdicts = %d, want 0", got)
	}
	walks.note(nil, -1)
	if got := walks.counted(order); got != 0 {
		t.Fatalf("counted after a cycle without visits = %d, want 0", got)
	}
}

// A walk longer than the count predicts, visited densely to its end (this
// pod's kube-scheduler filters rejected more nodes before a native plugin
// was asked), keeps its whole run: only a sparse tail is cut.
func TestADenseRunPastTheCountIsKept(t *testing.T) {
	const n = 5000
	order := identityOrder(n)
	// Every other position visited from 1000 to 2000.
	visits := visitsAt(n, span(1000, 2000, 2)...)
	next, run, ok := lastRun(order, visits, 500)
	if !ok || next != 1999 || run != 999 {
		t.Fatalf("lastRun = (%d, %d, %v), want the whole run (1999, 999, true)", next, run, ok)
	}
}

// lastRunOnceAround is lastRun's definition, written as plainly as it
// reads: walk once around the list from the first visit and take the
// largest gap (the first of equal ones).
func lastRunOnceAround(order []uint32, visited visitSet) (next, run int, ok bool) {
	n := len(order)
	at := func(pos int) bool { return order[pos] != nodetable.NoSlot && visited.has(order[pos]) }
	first := -1
	for pos := 0; pos < n && first < 0; pos++ {
		if at(pos) {
			first = pos
		}
	}
	if first < 0 {
		return 0, 0, false
	}
	gap, bestGap, bestGapStart := 0, -1, 0
	for i := 1; i <= n; i++ {
		pos := (first + i) % n
		if !at(pos) {
			gap++
			continue
		}
		if gap > bestGap {
			bestGap, bestGapStart = gap, (pos-gap+n)%n
		}
		gap = 0
	}
	return bestGapStart, n - bestGap, true
}

// lastRun's one pass in list order finds the run the walk once around
// does, on lists with free positions, shuffled slots, single visits,
// runs that wrap and gaps of equal length.
func TestLastRunIsTheRunOnceAround(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 3000; trial++ {
		n := 1 + rng.IntN(300)
		order := identityOrder(n)
		rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		for i := range order {
			if rng.IntN(10) == 0 {
				order[i] = nodetable.NoSlot
			}
		}
		visits := newVisitSet(n)
		switch density := rng.IntN(4); density {
		case 0: // a few single visits
			for k := rng.IntN(3); k >= 0; k-- {
				visits.add(uint32(rng.IntN(n)))
			}
		default: // a run from a random start, with holes, maybe wrapping
			start, length := rng.IntN(n), rng.IntN(n+1)
			for i := 0; i < length; i++ {
				if rng.IntN(density+1) != 0 {
					visits.add(order[(start+i)%n])
				}
			}
		}
		wantNext, wantRun, wantOK := lastRunOnceAround(order, visits)
		next, run, ok := lastRun(order, visits, 0)
		if next != wantNext || run != wantRun || ok != wantOK {
			t.Fatalf("trial %d, order %v: lastRun = (%d, %d, %v), the walk once around (%d, %d, %v)",
				trial, order, next, run, ok, wantNext, wantRun, wantOK)
		}
	}
}

// BenchmarkLastRun5000 is one lastRun at 5000 nodes on a walk of 541
// counted positions and 14 stray visits past them: the shim finds the
// last run about four times per cycle.
func BenchmarkLastRun5000(b *testing.B) {
	order := identityOrder(5000)
	visited := frameworkWalk(5000, 1000, 541, 14)
	for b.Loop() {
		lastRun(order, visited, 541)
	}
}
