// Package cycle is one scheduling cycle of a profile's native plugins as
// the shim serves it: the cycle's call to schedplug-host (PreFilter, with
// the node-table delta and the window of nodes kube-scheduler's Filter is
// expected to visit), and the answer to each Filter, asked of the verdict
// sources in a fixed order (Cycle.Filter). Tracker carries what one cycle
// leaves for the next (the window's guide, kept verdicts).
package cycle

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/simannot"
)

// Cycle is one scheduling cycle of one profile. kube-scheduler's CycleState
// clones share it (Clone returns it).
type Cycle struct {
	t             *Tracker
	profile       string
	pod           *pb.Pod
	nodes         []fwk.NodeInfo
	podGroupCycle bool
	nominated     string
	// snapshot finds a node of the cycle's snapshot by name (nil: none).
	snapshot func(name string) fwk.NodeInfo
	// sig is the pod's signature when the profile may keep verdicts ("":
	// it may not); kept the verdicts kept for it, if the cycle may use
	// them instead of calling.
	sig  string
	kept *keptVerdicts
	// scoreOnly: the profile has no native Filter plugin and the host takes
	// the node-table delta with PreScore, so the cycle makes that one call
	// and no PreFilter (ScoreOnly).
	scoreOnly bool
	// scoresAhead: the cycle asks the host for raw scores ahead of
	// PreScore and normalizes them itself (ahead.go); aheadCall is the
	// score-only cycle's call that brings them.
	scoresAhead bool
	aheadOnce   sync.Once
	aheadCall   *aheadCall
	// spotOf: the verdicts this cycle could have used but calls instead,
	// to check them against the host's answer (spotcheck.go).
	spotOf *keptVerdicts
	// call is the cycle's PreFilter call: made in PreFilter, or by the
	// first Filter that needs it (a cycle answering from kept verdicts, a
	// profile without native plugins at preFilter).
	call shared[*callResult]
	// visits: the snapshot nodes this cycle's Filter asked about, from
	// which the next cycle's window is predicted (window.go).
	visits  atomic.Pointer[visitSet]
	dryRuns dryRunCache
	scores  shared[*Scores]
	// failureNoted: the call's failure was logged and counted (once per
	// cycle, by whoever met it first).
	failureNoted atomic.Bool
	// reserved, unreserved, unschedulable: what became of the cycle was
	// passed to the host's recent cycles (once per cycle each, by the profile's
	// first native plugin that kube-scheduler told).
	reserved      atomic.Bool
	unreserved    atomic.Bool
	unschedulable atomic.Bool
	// answers: what the cycle answered kube-scheduler, for the simulator's
	// annotations (nil: the profile does not write them); PreScore then
	// asks for the scores before normalization too.
	answers *simannot.CycleAnswers
}

// Answers returns the cycle's answers for the simulator's annotations; nil when
// the profile does not write them.
func (c *Cycle) Answers() *simannot.CycleAnswers { return c.answers }

// Reserved tells the host that kube-scheduler reserved `node` for the
// cycle's pod, so that `schedplug explain` shows the chosen node. Every
// native plugin of the profile reports it; the first one counts.
func (c *Cycle) Reserved(node string) {
	if c.reserved.Swap(true) {
		return
	}
	c.t.host.Placed(c.pod.GetUid(), node)
}

// Unreserved tells the host that kube-scheduler undid the reservation of
// `node` (a later Reserve plugin, Permit, PreBind or the binding failed).
func (c *Cycle) Unreserved(node string) {
	if c.unreserved.Swap(true) {
		return
	}
	c.t.host.Unreserved(c.pod.GetUid(), node)
}

// Unschedulable tells the host that kube-scheduler found no node for the
// cycle's pod; `message` is what its filters said.
func (c *Cycle) Unschedulable(message string) {
	if c.unschedulable.Swap(true) {
		return
	}
	c.t.host.Unschedulable(c.pod.GetUid(), message)
}

// Clone is the cycle itself: clones of a CycleState share one cycle.
func (c *Cycle) Clone() fwk.StateData { return c }

// Answer is what the cycle knows of one plugin's Filter on one node.
type Answer struct {
	// The verdict, when there is one.
	Code   pb.Code
	Reason string
	// Unfinished: the host answered but did not finish this plugin; says
	// why. The plugin's failurePolicy decides.
	Unfinished string
	// Err: the host did not answer; Timeout is the deadline of the call
	// that failed. CycleCall: it was the cycle's own call.
	Err       error
	Timeout   time.Duration
	CycleCall bool
}

var passed = Answer{Code: pb.Code_CODE_SUCCESS}

func (v verdict) answer() Answer {
	if v.unfinished {
		return Answer{Unfinished: v.reason}
	}
	return Answer{Code: v.code, Reason: v.reason}
}

// Filter answers plugin's Filter on ni from the first verdict source that
// knows, in this order:
//
//  1. the verdicts kept from earlier cycles for this pod's signature
//     (kept.go), while the cycle has not called;
//  2. the cycle's call (made now if it has not been), for the NodeInfo it
//     evaluated; a node outside its window gets the verdicts of the
//     cycle's one FilterNodes call (window.go);
//  3. for a copy of a snapshot node whose pods alone changed, the node's
//     verdict in the call, if the plugin promised to ignore pods
//     (podschanged.go);
//  4. an answer the cycle already has for this exact NodeInfo state, else
//     a single-node call (dryrun.go).
func (c *Cycle) Filter(ctx context.Context, plugin string, ni fwk.NodeInfo) Answer {
	if c.scoreOnly {
		return passed // no native Filter in the profile
	}
	if a, ok := c.fromKept(plugin, ni); ok {
		return a
	}
	if c.nodes == nil {
		// No snapshot to send (a caller without one): this node alone.
		return c.singleNode(ctx, plugin, ni, appliesInfo{})
	}
	r, err := c.Called(ctx)
	if err != nil {
		return Answer{Err: err, Timeout: c.timeout(), CycleCall: true}
	}
	idx, ok := r.index(plugin)
	if !ok || r.skipped(idx) {
		// Not a native Filter of the profile, or applies() said no.
		return passed
	}
	slot, ok := r.slotOfInfo[ni]
	if ok {
		c.visit(slot)
	} else if slot, ok = c.t.host.SlotOf(ni.Node().Name); !ok {
		// Not a node of the table: only a single-node call can tell.
		return c.fromDryRun(ctx, r, plugin, ni)
	}
	if a, ok := c.fromCall(ctx, r, idx, slot, ni); ok {
		return a
	}
	if a, ok := c.fromPodsChanged(ctx, r, idx, plugin, slot, ni); ok {
		return a
	}
	return c.fromDryRun(ctx, r, plugin, ni)
}

// fromCall is the call's verdict on ni, if the host evaluated exactly this
// state of it; outside the window, after the cycle's FilterNodes call.
func (c *Cycle) fromCall(ctx context.Context, r *callResult, idx int, slot uint32, ni fwk.NodeInfo) (Answer, bool) {
	v, ok, outside := r.lookup(idx, slot, ni, c.podGroupCycle, false)
	if outside {
		if err := ctx.Err(); err != nil {
			// kube-scheduler's walk has ended (it found enough nodes):
			// this is a worker finishing the node it was on, whose
			// answer the framework discards. No call for it.
			filterWindowLateVisits.Inc()
			return Answer{Err: err, Timeout: c.timeout()}, true
		}
		if err, _ := c.evaluateMore(ctx, r, slot); err != nil {
			return Answer{Err: err, Timeout: c.timeout()}, true
		}
		v, ok, _ = r.lookup(idx, slot, ni, c.podGroupCycle, false)
	}
	return v.answer(), ok
}

// Called is the cycle's PreFilter call's outcome, the call made now if no
// one made it. An error is the call's, or ctx's when it ended while this
// caller waited for another's call.
func (c *Cycle) Called(ctx context.Context) (*callResult, error) {
	r, err, _ := c.call.do(ctx, func(ctx context.Context) (*callResult, error) {
		if c.kept != nil {
			verdictReuseMisses.Inc()
		}
		var window windowFunc
		if !c.podGroupCycle {
			window = c.t.windowGuide(c.nominated)
		}
		r, err := c.t.host.preFilter(ctx, c.callArgs(window))
		if err == nil {
			c.sizeVisits(r.states.Size())
		}
		return r, err
	})
	if err == nil && r == nil {
		err = status.Error(codes.Internal, "schedplug shim: the cycle's call left no answer")
	}
	return r, err
}

// NoteFailure reports true to the first caller that meets the failure of
// the cycle's call, which logs and counts it.
func (c *Cycle) NoteFailure() bool { return c.failureNoted.CompareAndSwap(false, true) }

// Skipped says whether the cycle's call reported plugin as not applying
// to the pod or as no native Filter of the profile (its PreFilter returns
// Skip). A cycle that has not called answers from its kept verdicts.
func (c *Cycle) Skipped(plugin string) bool {
	if c.kept != nil && !c.call.begun() {
		for i, name := range c.kept.plugins {
			if name == plugin {
				return i < len(c.kept.skipped) && c.kept.skipped[i]
			}
		}
		return true
	}
	r, err, over := c.call.result()
	if !over || err != nil {
		return false
	}
	i, ok := r.index(plugin)
	return !ok || r.skipped(i)
}

// ScoreOnly says whether the profile's native plugins have no Filter, so
// that the cycle makes no PreFilter call: its one call is PreScore, which
// carries the node-table delta.
func (c *Cycle) ScoreOnly() bool { return c.scoreOnly }

// Reusing says whether the cycle answers from kept verdicts (no call yet).
func (c *Cycle) Reusing() bool { return c.kept != nil && !c.call.begun() }

func (c *Cycle) callArgs(window windowFunc) preFilterCall {
	return preFilterCall{profile: c.profile, pod: c.pod, nodes: c.nodes, podGroupCycle: c.podGroupCycle, timeout: c.timeout(), window: window, snapshot: c.snapshot, scoreAhead: c.scoresAhead, rawScores: c.answers != nil}
}

func (c *Cycle) timeout() time.Duration { return c.t.policies.CallTimeout(c.profile) }

// visit notes that Filter asked about the snapshot node in slot.
func (c *Cycle) visit(slot uint32) {
	if v := c.visits.Load(); v != nil {
		v.add(slot)
	}
}

// sizeVisits makes the visit set cover `slots` slots, keeping what it
// noted when it already does.
func (c *Cycle) sizeVisits(slots int) {
	if v := c.visits.Load(); v != nil && len(*v) == (slots+63)/64 {
		return
	}
	v := newVisitSet(slots)
	c.visits.Store(&v)
}
