package cycle

import (
	"context"
	"math"
	"runtime/debug"
	"slices"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"schedplug.dev/integration/scheduler/shim/nodetable"
)

// The filter window: which nodes PreFilter asks the host about.
//
// kube-scheduler's Filter does not visit every node. It walks the snapshot's
// node list from where the previous cycle stopped (its private
// nextStartNodeIndex) and stops once it has found enough feasible nodes
// (percentageOfNodesToScore: by default about 230 of 500 nodes, 500 of
// 5000). Evaluating every node in PreFilter makes the host do ten times the
// work the framework uses at 5000 nodes. So the shim notes which nodes
// the previous cycle's Filter asked about, predicts that this cycle starts
// right after them and visits about as many, and sends that run of list
// positions (with a margin on both sides, see windowMargin) as PreFilter's
// `evaluate`. When the framework goes beyond it, the first Filter call
// outside the window makes a FilterNodes call for the next run of
// positions, about a window's length (most walks that leave the window
// end a little past it: a pod of a kind that finds fewer nodes feasible),
// and only a walk beyond that too (an unschedulable pod visits every node;
// a cycle of another profile moved the start) makes a second one for
// every node left (evaluateMore).

// windowMaxShare: a window over more than this share of the nodes saves
// too little to risk the second call; every node is evaluated (unless only
// a rare long run of the recent ones asks for more: predictWindow). Measured
// with 0.75 and a quarter of slack on the suite's 500-node mixed workload
// (a third of its pods need a label half the nodes lack, so their runs are
// twice as long as the others'): 15% of the cycles missed their window,
// and the one extra call each cost more than evaluating 250 fewer nodes
// saved (6–20% fewer pods/s than every node). So windows start at a few
// thousand nodes, where evaluating every node costs the host most.
const windowMaxShare = 0.5

// windowMargin is how many list positions the window adds on each side of
// the predicted run. The framework's Filter workers take the list in
// chunks of about sqrt(nodes) positions (upstream's parallelize
// chunkSizeFor), and a worker can check the first nodes of its chunk just
// before the others found enough: those visits lie up to a chunk beyond
// the nodes the framework counts, and the next cycle starts up to a chunk
// before the last visit. Measured at 5000 nodes with a fixed 32: a fifth of
// the cycles missed, most of them starting 32 to 72 positions early.
func windowMargin(nodes int) int {
	return int(math.Sqrt(float64(nodes))) + 16
}

// The window pays only while the prediction holds: a cycle that goes beyond
// its window costs a second call (a third for a walk past the next run),
// so windows pay while few of them miss. Workloads where the
// framework's walk is not the previous cycle's continuation (kube-scheduler
// trying a batching hint or a nominated node first, profiles without
// native plugins taking turns) would miss most of the time, so after
// windowMaxMisses misses among the last windowLogSize windowed cycles the
// shim evaluates every node for windowPause cycles, then tries again.
const (
	windowLogSize   = 32
	windowMaxMisses = 16
	windowPause     = 256
)

// windowLog is the outcome of the recent windowed cycles.
type windowLog struct {
	missed [windowLogSize]bool
	n      int // outcomes noted, up to windowLogSize
	next   int // where the next outcome goes
	misses int // true entries among the noted
	// paused: cycles left that evaluate every node.
	paused int
}

// add notes whether a windowed cycle went beyond its window; it reports
// true when that pauses the window.
func (l *windowLog) add(missed bool) (paused bool) {
	if l.n == windowLogSize {
		if l.missed[l.next] {
			l.misses--
		}
	} else {
		l.n++
	}
	l.missed[l.next] = missed
	if missed {
		l.misses++
	}
	l.next = (l.next + 1) % windowLogSize
	if l.misses >= windowMaxMisses {
		*l = windowLog{paused: windowPause}
		return true
	}
	return false
}

// allowed reports whether this cycle may send a window, counting a paused
// log down.
func (l *windowLog) allowed() bool {
	if l.paused > 0 {
		l.paused--
		return false
	}
	return true
}

// runLogSize is how many recent runs the window's length covers: pods of
// a few kinds take turns (in the suite's mixed workload a third of the
// pods need a label half the nodes have, so their runs are twice as
// long), and a window sized by the last run alone misses for the first
// pod of a longer kind.
const runLogSize = 16

// runLog is the length of the recent cycles' runs (list positions from the
// first node their Filter visited to the last). Safe for concurrent use.
type runLog struct {
	mu   sync.Mutex
	runs [runLogSize]int
	next int
}

// add notes a cycle's run and returns the longest of the recent runs.
func (l *runLog) add(run int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs[l.next] = run
	l.next = (l.next + 1) % runLogSize
	return slices.Max(l.runs[:])
}

// longest is the longest of the recent runs (0: none).
func (l *runLog) longest() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Max(l.runs[:])
}

// predictWindow returns the run of list positions [start, start+length)
// (wrapping around the list) that this cycle's Filter is expected to visit,
// given the slot of each position (`order`) and the slots the previous
// cycle's Filter visited. ok is false when there is nothing to go by or
// the window would cover more than maxShare of the nodes: evaluate them
// all. recent, when set, notes the previous cycle's run and lets the
// longest recent run set the length too. counted: see lastRun.
func predictWindow(order []uint32, visited visitSet, counted int, maxShare float64, recent *runLog) (start, length int, ok bool) {
	n := len(order)
	next, run, ok := lastRun(order, visited, counted)
	if !ok {
		return 0, 0, false
	}
	margin := windowMargin(n)
	// Half as long again as the last run when a miss costs a whole call
	// (scores ahead, without a recent log). A filter window's miss costs a
	// FilterNodes call for about a window's length past it, so the window
	// is a quarter longer than the last run and an eighth longer than the
	// longest recent one: this pod may find fewer of the nodes feasible
	// (pods of different kinds take turns).
	core := run + run/2
	limit := int(maxShare * float64(n))
	if recent != nil {
		longest := recent.add(run)
		core = run + run/4
		// A rare long run (a walk through a region of nodes few pods
		// fit) would keep the window off for the log's 16 cycles; the
		// window stops at the limit instead, when this run fits in it.
		if margin+core+margin <= limit {
			core = min(max(core, longest+longest/8), limit-2*margin)
		}
	}
	length = margin + core + margin
	if length > limit || length >= n {
		return 0, 0, false
	}
	// The run ended just before the largest gap: this cycle starts there.
	start = (next - margin + n) % n
	return start, length, true
}

// lastRun finds the previous cycle's run in the list positions: `next`,
// the position after its last visit (where this cycle is expected to
// start), and `run`, the positions from its first visit to its last. The
// visits form one run, wrapping, with holes where earlier plugins
// rejected a node before this one was asked: the run is what the largest
// gap of unvisited positions leaves. A run longer than `counted` (> 0:
// the positions kube-scheduler counted, walk.go) ends after that many
// positions when the visits past them show workers finishing their node
// after the walk had enough (strayTail). ok is false without visits.
func lastRun(order []uint32, visited visitSet, counted int) (next, run int, ok bool) {
	n := len(order)
	if n == 0 || visited == nil {
		return 0, 0, false
	}
	at := func(pos int) bool { s := order[pos]; return s != nodetable.NoSlot && visited.has(s) }
	// One pass in list order, measuring the gaps between visits; the gap
	// that wraps from the last visit to the first is measured last, as a
	// walk once around from the first visit meets it (ties keep the first).
	first, prev := -1, -1
	bestGap, bestGapStart := -1, 0
	for pos, s := range order {
		// visited.has spelled out: the call kept in the loop made it 1.5x slower.
		if w := int(s >> 6); s == nodetable.NoSlot || w >= len(visited) || visited[w].Load()&(1<<(s&63)) == 0 {
			continue
		}
		if first < 0 {
			first = pos
		} else if gap := pos - prev - 1; gap > bestGap {
			bestGap, bestGapStart = gap, prev+1
		}
		prev = pos
	}
	if first < 0 {
		return 0, 0, false
	}
	if gap := n - 1 - prev + first; gap > bestGap {
		bestGap, bestGapStart = gap, (prev+1)%n
	}
	next, run = bestGapStart, n-bestGap
	if counted > 0 && counted < run && strayTail(at, (next-run+n)%n, counted, run, n) {
		next, run = (next-run+counted+n)%n, counted
	}
	return next, run, true
}

// strayTail says whether the visits of a run past its first `counted`
// positions (the run begins at `start`) show workers finishing their node
// after the walk had enough: a gap of at least half a chunk (sqrt(n)/2
// positions) with no visit, as between the first nodes of the chunks they
// had taken. A tail with no such gap is a walk longer than the count
// predicted (this pod found fewer nodes feasible), and stays in the run.
func strayTail(at func(pos int) bool, start, counted, run, n int) bool {
	gap, need := 0, max(int(math.Sqrt(float64(n)))/2, 2)
	for i := counted; i < run; i++ {
		if at(wrapped(start+i, n)) {
			gap = 0
			continue
		}
		if gap++; gap >= need {
			return true
		}
	}
	return false
}

// A host that takes a feasible target (HandshakeResponse.feasible_target)
// is sent the whole node list as the window, in walk order from a margin
// or two before where kube-scheduler's Filter is expected to start, and
// stops once enough of the nodes it walked passed every native Filter: as
// many as passed in the longest of the recent runs, an eighth more, and a
// margin for each margin before the start and one for the end. Counting
// the nodes that pass, not positions, fits every pod kind: a pod that few
// nodes fit makes the host walk further, one that fits every node stops it
// early, and neither sizes the other's window.

// targetMarginsBefore is how many margins before the expected start the
// window begins: one when the last walk's count is known (the start is
// predicted from kube-scheduler's own step, walk.go, and only the quota's
// variation moves it), two when the start is the visits' reach, which lies
// up to a chunk or two past where the next walk begins.
func targetMarginsBefore(counted int) int {
	if counted > 0 {
		return 1
	}
	return 2
}

// feasibleTarget is PreFilterRequest.feasible_target for a list of n
// positions when the recent runs' passing nodes were at most `passed` and
// the window begins `before` margins before the expected start.
func feasibleTarget(passed, n, before int) uint32 {
	return uint32(passed + passed/8 + (before+1)*windowMargin(n))
}

// targetWindow is the window sent with a feasible target: every position,
// from targetMarginsBefore margins before where this cycle is expected to
// start. recent, when set, notes the previous cycle's run; ok is false
// when the longest recent run and the margins cover the whole list (pods
// that walk most of it take turns with the others): every node is then
// evaluated, which saves a walk that would stop a few nodes short its
// FilterNodes call. counted: see lastRun.
func targetWindow(order []uint32, visited visitSet, counted int, recent *runLog) (start, length int, ok bool) {
	n := len(order)
	next, run, ok := lastRun(order, visited, counted)
	if !ok {
		return 0, 0, false
	}
	margin, before := windowMargin(n), targetMarginsBefore(counted)
	if recent != nil && recent.add(run)+(before+1)*margin >= n {
		return 0, 0, false
	}
	return ((next-before*margin)%n + n) % n, n, true
}

// passedIn is how many of the positions of the run `visited` makes in
// r's list the host evaluated and no native Filter rejected (ok false:
// no run; counted: see lastRun).
func (r *callResult) passedIn(visited visitSet, counted int) (passed int, ok bool) {
	next, run, ok := lastRun(r.order, visited, counted)
	if !ok {
		return 0, false
	}
	vt := r.verdicts.Load()
	n := len(r.order)
	start := (next - run + n) % n
	for i := range run {
		slot := r.order[wrapped(start+i, n)]
		if slot != nodetable.NoSlot && vt.passed(slot) {
			passed++
		}
	}
	return passed, true
}

// wrapped is list position pos (< 2n) of a list of n, wrapping: a
// comparison where a division by n would cost more than the rest of a
// per-position loop's body.
func wrapped(pos, n int) int {
	if pos >= n {
		return pos - n
	}
	return pos
}

// windowRanges turns the positions [start, start+length) (wrapping) into
// slot ranges for PreFilterRequest.evaluate, and the set of those slots.
func windowRanges(order []uint32, start, length, slots int) ([]uint32, slotSet) {
	in := newSlotSet(slots)
	var ranges []uint32
	n := len(order)
	for i := 0; i < length && i < n; i++ {
		slot := order[wrapped(start+i, n)]
		if slot == nodetable.NoSlot || int(slot) >= slots {
			continue
		}
		in.add(slot)
		if k := len(ranges); k > 0 && ranges[k-1] == slot {
			ranges[k-1] = slot + 1 // extends the last range
			continue
		}
		ranges = append(ranges, slot, slot+1)
	}
	return ranges, in
}

// windowPlan is what a PreFilter call asks the host to evaluate.
type windowPlan struct {
	// ranges is PreFilterRequest.evaluate, in walk order (nil: every
	// node); slots the set of its slots.
	ranges []uint32
	slots  slotSet
	// target is PreFilterRequest.feasible_target (0: all of ranges).
	target uint32
}

// windowFunc chooses a PreFilter call's window once its delta is planned;
// targeted says the session's host takes a feasible target.
type windowFunc func(plan *nodetable.Plan, table *nodetable.Table, targeted bool) windowPlan

// windowFor is the window function of a PreFilter call: the run of list
// positions predicted from the last cycle's visits, plus the pod's
// nominated node, which kube-scheduler filters first; or, for a host that
// takes a feasible target and `passed` > 0 (the most nodes that passed in
// a recent run), the whole list from the expected start with that target.
// walks, when set, says how many positions the last walk counted. nil
// visits: every node.
func windowFor(visits visitSet, nominated string, recent *runLog, passed int, walks *walkLog) windowFunc {
	if visits == nil {
		return nil
	}
	return func(plan *nodetable.Plan, table *nodetable.Table, targeted bool) windowPlan {
		slots := plan.States.Size()
		counted := 0
		if walks != nil {
			counted = walks.counted(plan.Order)
		}
		var wp windowPlan
		if targeted && passed > 0 {
			start, length, ok := targetWindow(plan.Order, visits, counted, recent)
			if !ok {
				return windowPlan{}
			}
			wp.target = feasibleTarget(passed, len(plan.Order), targetMarginsBefore(counted))
			wp.ranges, wp.slots = windowRanges(plan.Order, start, length, slots)
		} else {
			start, length, ok := predictWindow(plan.Order, visits, counted, windowMaxShare, recent)
			if !ok {
				return windowPlan{}
			}
			wp.ranges, wp.slots = windowRanges(plan.Order, start, length, slots)
		}
		if nominated != "" {
			if slot, ok := table.SlotOf(nominated); ok && int(slot) < slots && !wp.slots.has(slot) {
				wp.slots.add(slot)
				// First for a walk (kube-scheduler filters it first, and
				// a walk may stop before its end), last otherwise.
				if wp.target > 0 {
					wp.ranges = append([]uint32{slot, slot + 1}, wp.ranges...)
				} else {
					wp.ranges = append(wp.ranges, slot, slot+1)
				}
			}
		}
		return wp
	}
}

// slotSetOf is the set of the slots below `slots` in [first, end) pairs.
func slotSetOf(ranges []uint32, slots int) slotSet {
	out := newSlotSet(slots)
	for i := 0; i+1 < len(ranges); i += 2 {
		for s := ranges[i]; s < ranges[i+1] && int(s) < slots; s++ {
			out.add(s)
		}
	}
	return out
}

// evaluateMore makes sure the verdicts cover `slot`, a node outside what
// the cycle has evaluated so far, with the cycle's FilterNodes calls: the
// first covers the next run of list positions, from the end of the
// evaluated ones before the slot's position to a window's length past it
// (nextRun), the second every node left. The calls are made one after the
// other: a Filter that needs a node the call in flight does not cover
// waits for it, then makes the next if the node is still not covered. The
// verdicts only grow, swapped in whole.
func (c *Cycle) evaluateMore(ctx context.Context, r *callResult, slot uint32) (err error, cancelled bool) {
	for {
		r.moreMu.Lock()
		if k := len(r.more); k > 0 {
			last := r.more[k-1]
			select {
			case <-last.done:
				if last.err != nil {
					r.moreMu.Unlock()
					return last.err, false
				}
			default:
				// In flight: wait for it, then look again.
				r.moreMu.Unlock()
				select {
				case <-last.done:
					continue
				case <-ctx.Done():
					return ctx.Err(), true
				}
			}
		}
		// Every call made is over: its verdicts are in.
		vt := r.verdicts.Load()
		if vt.window == nil || vt.window.has(slot) || vt.rest {
			r.moreMu.Unlock()
			return nil, false
		}
		asked, all := r.nextRun(vt, slot)
		call := &moreCall{done: make(chan struct{})}
		first := len(r.more) == 0
		if first {
			if logger := klog.FromContext(ctx).V(4); logger.Enabled() {
				before, after, at := r.outside(vt, slot)
				logger.Info("kube-scheduler's Filter asked about a node outside PreFilter's window; asking schedplug-host about the nodes past it",
					"pod", c.pod.GetNamespace()+"/"+c.pod.GetName(), "position", at, "nodes", len(r.order), "evaluated", vt.window.count(),
					"unevaluatedBefore", before, "unevaluatedAfter", after)
			}
		}
		r.more = append(r.more, call)
		r.missed.Store(true)
		r.moreMu.Unlock()
		// On a context kube-scheduler's cancellation of this one Filter
		// does not end: the answer serves the rest of the cycle. This
		// Filter waits for it above like the others, so that it returns
		// at once if kube-scheduler's walk ends meanwhile.
		go func() {
			// A panic here would end kube-scheduler (no Filter's
			// recover reaches this goroutine): the waiting Filters get
			// it as the call's error instead.
			defer func() {
				if p := recover(); p != nil {
					klog.Background().Error(nil, "schedplug shim: panic in a FilterNodes call; the cycle's Filter calls get an error instead", "panic", p, "stack", string(debug.Stack()))
					call.err = status.Errorf(codes.Internal, "schedplug shim: panic in a FilterNodes call: %v (a bug in the shim; the scheduler log has the stack)", p)
				}
				close(call.done)
			}()
			call.err = c.filterMore(context.WithoutCancel(ctx), r, vt, asked, all, first)
		}()
	}
}

// moreCall is one of the cycle's FilterNodes calls: err is set before
// done is closed.
type moreCall struct {
	done chan struct{}
	err  error
}

// filterMore makes one FilterNodes call for the slots in asked and merges
// its verdicts into r.
func (c *Cycle) filterMore(ctx context.Context, r *callResult, vt *verdictTable, asked slotSet, all, first bool) error {
	ranges := asked.ranges(vt.slots)
	resp, err := c.t.host.filterNodes(ctx, r.sess, c.callArgs(nil), r.resp.GetTableVersion(), ranges, r.applies(), r.ahead.Load() != nil)
	if err == nil && !resp.GetWindowed() {
		err = status.Error(codes.Internal, "schedplug-host answered FilterNodes without windowed set; the host and the shim are from different schedplug releases")
	}
	if err != nil {
		return err
	}
	if first {
		filterWindowMisses.Inc()
	}
	filterWindowRestNodes.Add(float64(rangesLen(ranges)))
	r.verdicts.Store(vt.withMore(r, resp, asked, all))
	r.ahead.Store(r.ahead.Load().with(resp.GetScoresAhead()))
	return nil
}

// nextRun is what the cycle's next FilterNodes call asks about, for a
// Filter on `slot`, which vt has not evaluated: the first call takes the
// positions from the end of the evaluated run before the slot's position
// to a window's length past the slot (the walk went on beyond the window;
// evaluating every other node would cost four times as much at 5000
// nodes), skipping the evaluated ones; the second, or a slot at no
// position of the list, every node left. all: nothing is left after it.
func (r *callResult) nextRun(vt *verdictTable, slot uint32) (asked slotSet, all bool) {
	slots := vt.slots
	rest := func() (slotSet, bool) {
		asked := newSlotSet(slots)
		for s := range slots {
			if !vt.window.has(uint32(s)) {
				asked.add(uint32(s))
			}
		}
		return asked, true
	}
	n := len(r.order)
	at := slices.Index(r.order, slot)
	if len(r.more) > 0 || at < 0 {
		return rest()
	}
	evaluated := func(pos int) bool {
		s := r.order[pos]
		return s != nodetable.NoSlot && vt.window.has(s)
	}
	from := at
	for i := 0; i < n && !evaluated((from-1+n)%n); i++ {
		from = (from - 1 + n) % n
	}
	length := (at-from+n)%n + vt.window.count()
	if length >= n {
		return rest()
	}
	asked = newSlotSet(slots)
	left := false
	for i := 0; i < n; i++ {
		s := r.order[(from+i)%n]
		if s == nodetable.NoSlot || int(s) >= slots || vt.window.has(s) {
			continue
		}
		if i < length {
			asked.add(s)
		} else {
			left = true
		}
	}
	if !left {
		return rest()
	}
	return asked, false
}

// outside places a slot the window lacks in r's list, for the log of a
// miss: its position, and how many positions the host did not evaluate
// right before it and right after it. Few before: the walk went on past
// the window's end (too short); few after: it began before the window's
// start (the start was mispredicted).
func (r *callResult) outside(vt *verdictTable, slot uint32) (before, after, at int) {
	n := len(r.order)
	at = slices.Index(r.order, slot)
	if at < 0 {
		return 0, 0, -1
	}
	unevaluated := func(pos int) bool {
		s := r.order[(pos+n)%n]
		return s == nodetable.NoSlot || !vt.window.has(s)
	}
	for before < n-1 && unevaluated(at-1-before) {
		before++
	}
	for after < n-1 && unevaluated(at+1+after) {
		after++
	}
	return before, after, at
}

// windowOutcome says whether r evaluated a window and whether its cycle
// went beyond it (the next cycle notes it in the window log).
func (r *callResult) windowOutcome() (windowed, missed bool) {
	if r == nil || r.verdicts.Load().window == nil {
		return false, false
	}
	return true, r.missed.Load()
}
