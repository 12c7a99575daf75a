package cycle

import (
	"fmt"
	"testing"

	"schedplug.dev/integration/scheduler/shim/nodetable"
)

func identityOrder(n int) []uint32 {
	order := make([]uint32, n)
	for i := range order {
		order[i] = uint32(i)
	}
	return order
}

func visitsAt(slots int, positions ...int) visitSet {
	v := newVisitSet(slots)
	for _, p := range positions {
		v.add(uint32(p))
	}
	return v
}

func span(from, to, step int) []int {
	var out []int
	for p := from; p < to; p += step {
		out = append(out, p)
	}
	return out
}

// Pods of two kinds take turns, one kind visiting twice the positions of
// the other: the window after a short run is still long enough for a pod
// of the long kind, since it covers the longest of the recent runs.
func TestPredictWindowCoversTheLongestRecentRun(t *testing.T) {
	const n = 5000
	order := identityOrder(n)
	margin := windowMargin(n)
	var recent runLog
	_, length, ok := predictWindow(order, visitsAt(n, span(0, 1000, 1)...), 0, windowMaxShare, &recent)
	if !ok || length != margin+1250+margin {
		t.Fatalf("after a 1000-position run: length %d (ok %v), want %d", length, ok, margin+1250+margin)
	}
	start, length, ok := predictWindow(order, visitsAt(n, span(1000, 1500, 1)...), 0, windowMaxShare, &recent)
	if want := margin + 1000 + 1000/8 + margin; !ok || start != 1500-margin || length != want {
		t.Fatalf("a 500-position run after a 1000-position one: window (%d, %d, %v), want (%d, %d, true)", start, length, ok, 1500-margin, want)
	}
	// Once the long run is older than the log, short runs size the window
	// alone.
	for i := range runLogSize {
		from := 1500 + 500*i
		_, length, _ = predictWindow(order, visitsAt(n, span(from%n, from%n+500, 1)...), 0, windowMaxShare, &recent)
	}
	if want := margin + 500 + 500/4 + margin; length != want {
		t.Fatalf("after %d runs of 500 positions: length %d, want %d", runLogSize, length, want)
	}
}

// A rare run longer than half the nodes (a walk through a region few
// pods fit) does not keep the window off while it is in the log: the
// windows after it stop at half the nodes.
func TestPredictWindowStopsAtTheLimitAfterARareLongRun(t *testing.T) {
	const n = 5000
	order := identityOrder(n)
	margin := windowMargin(n)
	var recent runLog
	if _, _, ok := predictWindow(order, visitsAt(n, span(0, 2400, 1)...), 0, windowMaxShare, &recent); ok {
		t.Fatal("a window after a 2400-position run, want every node")
	}
	start, length, ok := predictWindow(order, visitsAt(n, span(2400, 2900, 1)...), 0, windowMaxShare, &recent)
	if !ok || start != 2900-margin || length != n/2 {
		t.Fatalf("a 500-position run after a 2400-position one: window (%d, %d, %v), want (%d, %d, true)", start, length, ok, 2900-margin, n/2)
	}
}

func TestPredictWindowStartsAfterThePreviousRun(t *testing.T) {
	order := identityOrder(1000)
	// Positions 100..329 visited, with holes where earlier plugins
	// rejected nodes: the run is 230 positions long.
	var visited []int
	for p := 100; p < 330; p++ {
		if p%7 != 3 || p == 329 {
			visited = append(visited, p)
		}
	}
	start, length, ok := predictWindow(order, visitsAt(1000, visited...), 0, windowMaxShare, nil)
	margin := windowMargin(1000) // 31 + 16
	wantLen := margin + 230 + 230/2 + margin
	if !ok || start != 330-margin || length != wantLen {
		t.Fatalf("predictWindow = (%d, %d, %v), want (%d, %d, true)", start, length, ok, 330-margin, wantLen)
	}

	// A run wrapping around the end of the list: 900..999 and 0..129.
	start, length, ok = predictWindow(order, visitsAt(1000, append(span(900, 1000, 1), span(0, 130, 1)...)...), 0, windowMaxShare, nil)
	if !ok || start != 130-margin || length != wantLen {
		t.Fatalf("wrapping run: predictWindow = (%d, %d, %v), want (%d, %d, true)", start, length, ok, 130-margin, wantLen)
	}
	// The window itself may wrap: a run ending at the list's end.
	start, _, ok = predictWindow(order, visitsAt(1000, span(780, 1000, 1)...), 0, windowMaxShare, nil)
	if !ok || start != 1000-margin {
		t.Fatalf("run up to the end: start %d (ok %v), want %d", start, ok, 1000-margin)
	}

	// Positions map to slots through the order: the same visits by slot
	// under a reversed order are the run 670..899 of positions.
	rev := make([]uint32, 1000)
	for i := range rev {
		rev[i] = uint32(999 - i)
	}
	start, _, ok = predictWindow(rev, visitsAt(1000, span(100, 330, 1)...), 0, windowMaxShare, nil)
	if !ok || start != 900-margin {
		t.Fatalf("reversed order: start %d (ok %v), want %d", start, ok, 900-margin)
	}
}

func TestPredictWindowEvaluatesEverythingWithoutAGuide(t *testing.T) {
	order := identityOrder(1000)
	cases := map[string]struct {
		order   []uint32
		visited visitSet
	}{
		"no previous cycle":        {order, nil},
		"nothing visited":          {order, newVisitSet(1000)},
		"every node visited":       {order, visitsAt(1000, span(0, 1000, 1)...)},
		"a run over most nodes":    {order, visitsAt(1000, span(0, 600, 1)...)},
		"a window over half":       {order, visitsAt(1000, span(0, 300, 1)...)},
		"a cluster of a few nodes": {identityOrder(20), visitsAt(20, 3, 4, 5)},
	}
	for name, c := range cases {
		if start, length, ok := predictWindow(c.order, c.visited, 0, windowMaxShare, nil); ok {
			t.Errorf("%s: predictWindow = (%d, %d, true), want every node", name, start, length)
		}
	}
}

func TestWindowRangesAndTheirComplementCoverEverySlotOnce(t *testing.T) {
	// Slots out of position order, and a position without a node.
	order := identityOrder(300)
	order[5], order[6] = 6, 5
	order[290] = nodetable.NoSlot
	ranges, in := windowRanges(order, 280, 40, 300)
	want := []uint32{280, 290, 291, 300, 0, 5, 6, 7, 5, 6, 7, 20}
	if fmt.Sprint(ranges) != fmt.Sprint(want) {
		t.Fatalf("windowRanges = %v, want %v", ranges, want)
	}
	rest := in.complementRanges(300)
	if fmt.Sprint(rest) != fmt.Sprint([]uint32{20, 280, 290, 291}) {
		t.Fatalf("complementRanges = %v", rest)
	}
	covered := make([]int, 300)
	for _, rs := range [][]uint32{ranges, rest} {
		for i := 0; i < len(rs); i += 2 {
			for s := rs[i]; s < rs[i+1]; s++ {
				covered[s]++
			}
		}
	}
	for s, n := range covered {
		if n != 1 && s != 290 {
			t.Errorf("slot %d covered %d times", s, n)
		}
	}
}

// BenchmarkWindow5000 is the shim's per-cycle work for the window at 5000
// nodes: the prediction from a run of 541 visited positions and the slot
// ranges of the window.
func BenchmarkWindow5000(b *testing.B) {
	order := identityOrder(5000)
	visited := visitsAt(5000, span(1000, 1541, 1)...)
	for b.Loop() {
		start, length, ok := predictWindow(order, visited, 0, windowMaxShare, nil)
		if !ok {
			b.Fatal("no window")
		}
		windowRanges(order, start, length, 5000)
	}
}

func TestWindowLogPausesAfterTooManyMisses(t *testing.T) {
	var l windowLog
	// An old miss leaves the log once windowLogSize later outcomes came.
	l.add(true)
	for i := 0; i < windowLogSize; i++ {
		if l.add(false) {
			t.Fatal("paused without misses")
		}
	}
	for i := 0; i < windowMaxMisses-1; i++ {
		if l.add(true) {
			t.Fatalf("paused after %d misses in the log, want %d", i+1, windowMaxMisses)
		}
	}
	if !l.allowed() {
		t.Fatal("not allowed before the pause")
	}
	if !l.add(true) {
		t.Fatalf("not paused after %d misses among the last %d", windowMaxMisses, windowLogSize)
	}
	for i := 0; i < windowPause; i++ {
		if l.allowed() {
			t.Fatalf("allowed %d cycles into a pause of %d", i, windowPause)
		}
	}
	if !l.allowed() {
		t.Fatal("still paused after the pause")
	}
	if l.n != 0 || l.misses != 0 {
		t.Fatalf("the pause did not start a fresh log: %+v", l)
	}
}
