// One file: the cycle's calls and the placement notes all work on Host's fields
// (the node table, the call ahead, what was placed), and the order in which
// they settle one another reads top to bottom.

package cycle

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/nodetable"
	"schedplug.dev/integration/scheduler/shim/session"
	"schedplug.dev/integration/scheduler/shim/wire"
)

// Host makes a cycle's calls to schedplug-host on the client's current
// session and keeps the node table in step: each PreFilter carries the
// delta since the last one the host applied, and a host that lost the
// session or the table gets the whole table again.
type Host struct {
	client *session.Client
	// mu serializes the calls that use the node table (PreFilter,
	// FilterNodes, PreScore); scheduling cycles run one at a time, so it
	// is not contended there.
	mu    sync.Mutex
	table *nodetable.Sync
	// tableOf is the session whose table `table` mirrors; another session
	// starts with an empty one.
	tableOf *session.Session
	// ahead is the score-only cycle's PreScore sent from PreFilter whose
	// answer is not read yet: every call that uses the table reads it
	// first (settle), since the next delta depends on its outcome.
	ahead *aheadCall
	// placed: what became of recent cycles (kube-scheduler reserved or
	// unreserved a node, scored nodes, found none) that the host was not
	// told yet, for its recent cycles (`schedplug explain`). The
	// next PreFilter or PreScore carries them; a host that takes notes
	// (Session.CycleNotes) gets those no call carried soon in a note
	// (noteSoon).
	placedMu sync.Mutex
	placed   []*pb.Placement
	// noting: a note is due (noteSoon) or being sent (sendNotes).
	noting atomic.Bool
}

// maxPlacements bounds the placements waiting for a call (a profile whose
// pods need no host call for a while): the oldest go first.
const maxPlacements = 256

// noteTimeout bounds one NoteCycles call; it runs off the scheduling
// cycle, so only the placements it carries wait for it.
const noteTimeout = 5 * time.Second

// noteLinger is how long placements wait for the next call to carry them
// before a note of their own goes: a busy scheduler's next cycle comes
// sooner and no note is needed; in a quiet cluster the host learns what
// became of the last cycle this much later.
const noteLinger = 20 * time.Millisecond

// Placed notes that kube-scheduler reserved `node` for the pod `uid`, for
// the next call or a note (noteSoon).
func (h *Host) Placed(uid, node string) {
	h.place(&pb.Placement{PodUid: uid, Node: node})
	h.noteSoon()
}

// Unreserved notes that kube-scheduler undid the reservation of `node`
// for the pod `uid`.
func (h *Host) Unreserved(uid, node string) {
	h.place(&pb.Placement{PodUid: uid, Node: node, Unreserved: true})
	h.noteSoon()
}

// Unschedulable notes that kube-scheduler found no node for the pod `uid`
// (`message`: what its filters said).
func (h *Host) Unschedulable(uid, message string) {
	h.place(&pb.Placement{PodUid: uid, Unschedulable: true, Message: message})
	h.noteSoon()
}

// Scored notes that the shim normalized the pod's scores ahead over the
// nodes at `positions` of them (Placement.scored). It goes with the
// cycle's Reserve (Placed), which follows at once.
func (h *Host) Scored(uid string, positions []uint32) {
	h.place(&pb.Placement{PodUid: uid, Scored: positions})
}

func (h *Host) place(p *pb.Placement) {
	h.placedMu.Lock()
	defer h.placedMu.Unlock()
	if len(h.placed) >= maxPlacements {
		h.placed = h.placed[1:]
	}
	h.placed = append(h.placed, p)
}

// takePlaced returns the waiting placements and forgets them: the host
// keeps no answer from them, so one lost with a failed call only leaves a
// cycle's outcome unknown.
func (h *Host) takePlaced() []*pb.Placement {
	h.placedMu.Lock()
	defer h.placedMu.Unlock()
	out := h.placed
	h.placed = nil
	return out
}

// putBack returns placements a note could not deliver, ahead of those
// noted since, for the next call to carry.
func (h *Host) putBack(ps []*pb.Placement) {
	h.placedMu.Lock()
	defer h.placedMu.Unlock()
	h.placed = append(ps, h.placed...)
	if over := len(h.placed) - maxPlacements; over > 0 {
		h.placed = h.placed[over:]
	}
}

// NotesIdle says whether no note is due or being sent: the placements of a
// note that failed are back, for the next call to carry, by then.
func (h *Host) NotesIdle() bool { return !h.noting.Load() }

func (h *Host) placedWaiting() bool {
	h.placedMu.Lock()
	defer h.placedMu.Unlock()
	return len(h.placed) > 0
}

// noteSoon sends the waiting placements noteLinger from now, on a
// goroutine of their own, unless a send is due already: the scheduling
// cycle never waits for the host here. A host without notes gets them
// with the next call instead.
func (h *Host) noteSoon() {
	if s := h.client.Current(); s == nil || !s.CycleNotes {
		return
	}
	if h.noting.CompareAndSwap(false, true) {
		time.AfterFunc(noteLinger, h.sendNotes)
	}
}

// sendNotes sends NoteCycles until no placement waits (a call may have
// carried them all). One that fails leaves its placements to the next
// call.
func (h *Host) sendNotes() {
	for {
		s := h.client.Current()
		var batch []*pb.Placement
		if s != nil && s.CycleNotes {
			batch = h.takePlaced()
		}
		if len(batch) == 0 {
			h.noting.Store(false)
			// A placement noted after the take but before the flag
			// cleared found the flag set and started no goroutine.
			if h.placedWaiting() && s != nil && s.CycleNotes && h.noting.CompareAndSwap(false, true) {
				continue
			}
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), noteTimeout)
		err := h.client.NoteCycles(ctx, s, &pb.CycleNotes{SessionId: s.ID, Placed: batch})
		cancel()
		if err != nil {
			h.putBack(batch)
			h.noting.Store(false)
			return
		}
	}
}

// NewHost makes the calls on client's sessions.
func NewHost(client *session.Client) *Host {
	return &Host{client: client, table: nodetable.NewSync()}
}

// SlotOf is the node's slot in the session's node table.
func (h *Host) SlotOf(name string) (uint32, bool) { return h.table.Table.SlotOf(name) }

// Nodes is the number of nodes in the session's node table.
func (h *Host) Nodes() int { return h.table.Table.Size() }

// Client is the session client the calls go through.
func (h *Host) Client() *session.Client { return h.client }

// session is the current session, with the table reset when it is new.
// Callers hold h.mu.
func (h *Host) session() (*session.Session, error) {
	s := h.client.Current()
	if s == nil {
		return nil, session.ErrNoSession
	}
	if s != h.tableOf {
		h.table.Reset()
		h.tableOf = s
	}
	return s, nil
}

// renew handshakes again after the host lost `stale`. Callers hold h.mu.
func (h *Host) renew(ctx context.Context, stale *session.Session) (*session.Session, error) {
	if _, err := h.client.Renew(ctx, stale); err != nil {
		return nil, err
	}
	return h.session()
}

// preFilterCall is one cycle's PreFilter.
type preFilterCall struct {
	profile       string
	pod           *pb.Pod
	nodes         []fwk.NodeInfo
	podGroupCycle bool
	timeout       time.Duration
	// window chooses the slots the host evaluates (nil: every node).
	window windowFunc
	// snapshot finds a node of the cycle's snapshot by name (nil: none).
	snapshot func(name string) fwk.NodeInfo
	// rawScores asks PreScore for the scores before normalization too.
	rawScores bool
	// scoreAhead asks for the raw scores of the nodes no native Filter
	// rejects (ahead.go).
	scoreAhead bool
}

// preFilter sends the pod and the node-table delta and returns every
// native Filter's verdicts.
func (h *Host) preFilter(ctx context.Context, c preFilterCall) (*callResult, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.settle(ctx)
	var res *callResult
	err := h.withDelta(ctx, c.profile, func(s *session.Session, full bool) (version *uint64, err error) {
		res, version, err = h.sendPreFilter(ctx, s, c, full)
		return version, err
	})
	return res, err
}

// withDelta makes a call that carries the node-table delta (send, on
// session s; full: the whole table) and keeps the table in step when the
// host refuses it:
//
//   - FAILED_PRECONDITION: if the host reports the version of the last
//     delta whose answer was lost, that delta was applied: it is committed
//     and the call repeated with a delta from there (same session, no full
//     upload). Otherwise the shim opens a new session and sends the full
//     table once.
//   - INVALID_ARGUMENT for a delta the host refused (it reports its table
//     version): the tables disagree in a way a delta cannot fix, so the
//     full table is sent once, on the same session.
//
// Callers hold h.mu.
func (h *Host) withDelta(ctx context.Context, profile string, send func(s *session.Session, full bool) (*uint64, error)) error {
	s, err := h.session()
	if err != nil {
		return err
	}
	hostVersion, err := send(s, false)
	switch status.Code(err) {
	case codes.FailedPrecondition:
		if h.table.Recover(hostVersion) {
			deltasRecovered.Inc()
			klog.FromContext(ctx).V(2).Info("schedplug-host had applied the delta of a failed call; continuing from its table version", "profile", profile, "version", *hostVersion)
			if _, err = send(s, false); status.Code(err) != codes.FailedPrecondition {
				return err
			}
		}
		klog.FromContext(ctx).Info("schedplug-host lost the session or node table; resynchronising", "profile", profile, "err", status.Convert(err).Message())
		if s, err = h.renew(ctx, s); err != nil {
			return err
		}
		_, err = send(s, true)
	case codes.InvalidArgument:
		if hostVersion == nil {
			// Not about the table (e.g. an unknown profile): a resync
			// cannot help.
			return err
		}
		klog.FromContext(ctx).Info("schedplug-host refused the node-table delta; sending the full table", "profile", profile, "err", status.Convert(err).Message())
		session.CountResync()
		h.table.SendFull()
		_, err = send(s, true)
	}
	return err
}

// sendPreFilter makes one PreFilter call and returns the table version the
// host reported, if it did. Callers hold h.mu.
func (h *Host) sendPreFilter(ctx context.Context, s *session.Session, c preFilterCall, full bool) (*callResult, *uint64, error) {
	plan := h.table.Plan(c.nodes, full, c.podGroupCycle, func(ni fwk.NodeInfo, slot uint32) *pb.Node { return wire.Node(ni, slot, s.Data) })
	timeout := c.timeout
	if plan.Msg.GetFull() {
		timeout = max(timeout, h.client.Config().ResyncTimeout)
	}
	req := &pb.PreFilterRequest{SessionId: s.ID, SchedulerName: c.profile, Pod: c.pod, Delta: plan.Msg, Placed: h.takePlaced(), ScoreAhead: c.scoreAhead && s.ScoresAhead}
	var wp windowPlan
	if c.window != nil {
		wp = c.window(plan, h.table.Table, s.FeasibleTarget)
	}
	req.Evaluate, req.FeasibleTarget = wp.ranges, wp.target
	window := wp.slots
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, hostVersion, err := h.client.PreFilter(cctx, s, req)
	if err != nil {
		h.table.Failed(plan, status.Code(err), hostVersion)
		return nil, hostVersion, err
	}
	h.table.Accepted(plan, resp.GetTableVersion())
	if window != nil && resp.GetWindowed() {
		filterWindows.Inc()
		if evaluated := resp.GetEvaluated(); wp.target > 0 && len(evaluated) > 0 {
			// The host walked only part of the window.
			window = slotSetOf(evaluated, plan.States.Size())
		}
	} else {
		window = nil // a host that predates windows evaluated every node
	}
	return newCallResult(s, resp, plan, window), nil, nil
}

// preScore asks for every native Score plugin's normalized scores on the
// feasible nodes. allNodes is the cycle's snapshot, sent again when the
// host lost the table.
func (h *Host) preScore(ctx context.Context, c preFilterCall, feasible []string, applies appliesInfo) (*pb.PreScoreResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.settle(ctx)
	s, err := h.session()
	if err != nil {
		return nil, err
	}
	resp, err := h.sendPreScore(ctx, s, c, feasible, applies)
	if status.Code(err) != codes.FailedPrecondition {
		return resp, err
	}
	klog.FromContext(ctx).Info("schedplug-host lost the session or node table; resynchronising", "profile", c.profile, "err", status.Convert(err).Message())
	if s, err = h.renew(ctx, s); err != nil {
		return nil, err
	}
	c.window = nil
	if _, _, err := h.sendPreFilter(ctx, s, c, true); err != nil {
		return nil, err
	}
	return h.sendPreScore(ctx, s, c, feasible, applies)
}

// preScoreAlone is the PreScore of a profile without native Filter
// plugins, the cycle's only call: it carries the node-table delta (the
// host began no cycle for the pod, and asks the plugins' gates itself).
func (h *Host) preScoreAlone(ctx context.Context, c preFilterCall, feasible []string) (*pb.PreScoreResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.settle(ctx)
	var resp *pb.PreScoreResponse
	err := h.withDelta(ctx, c.profile, func(s *session.Session, full bool) (version *uint64, err error) {
		resp, _, version, err = h.sendPreScoreAlone(ctx, s, c, full, false, func(plan *nodetable.Plan) ([]uint32, error) {
			return plannedSlots(plan, c.nodes, feasible, c.snapshot)
		})
		return version, err
	})
	return resp, err
}

// aheadCall is the PreScore of a profile without native Filter plugins
// sent ahead of kube-scheduler's PreScore (from its PreFilter), for raw
// scores of the nodes `choose` picks from the planned table, which the
// shim normalizes once kube-scheduler says which nodes it scores
// (ahead.go). Its answer is read when the cycle needs it
// (finishScoresAhead) or by the next call that uses the table.
type aheadCall struct {
	c       preFilterCall
	choose  func(*nodetable.Plan) []uint32
	plan    *nodetable.Plan
	slots   []uint32
	pending *session.PendingPreScore
	// Once read: the scores, or why there are none.
	out *aheadScores
	err error
}

// startScoresAhead plans the node-table delta and sends the PreScore with
// it, raw, for the nodes choose picks; it does not wait for the answer.
func (h *Host) startScoresAhead(ctx context.Context, c preFilterCall, choose func(*nodetable.Plan) []uint32) *aheadCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.settle(ctx)
	a := &aheadCall{c: c, choose: choose}
	s, err := h.session()
	if err != nil {
		a.err = err
		return a
	}
	a.plan = h.table.Plan(c.nodes, false, c.podGroupCycle, func(ni fwk.NodeInfo, slot uint32) *pb.Node { return wire.Node(ni, slot, s.Data) })
	a.slots = choose(a.plan)
	timeout := c.timeout
	if a.plan.Msg.GetFull() {
		timeout = max(timeout, h.client.Config().ResyncTimeout)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	a.pending = h.client.StartPreScore(cctx, cancel, s, &pb.PreScoreRequest{
		SessionId: s.ID, SchedulerName: c.profile, Pod: c.pod, Delta: a.plan.Msg, Nodes: a.slots,
		Placed: h.takePlaced(), Raw: s.ScoresAhead,
	})
	h.ahead = a
	return a
}

// finishScoresAhead is a's outcome: its answer read now if no call did it
// first.
func (h *Host) finishScoresAhead(ctx context.Context, a *aheadCall) (*aheadScores, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.settle(ctx)
	return a.out, a.err
}

// settle reads the answer of the PreScore sent ahead, if one is pending,
// and keeps the table in step as withDelta does: a delta the host refused
// (FAILED_PRECONDITION, INVALID_ARGUMENT) is the synchronous call's
// business, made now, with its recovery and resync. Callers hold h.mu.
func (h *Host) settle(ctx context.Context) {
	a := h.ahead
	if a == nil {
		return
	}
	h.ahead = nil
	resp, hostVersion, err := a.pending.Wait(ctx)
	if err == nil {
		h.table.Accepted(a.plan, resp.GetTableVersion())
		a.out = newAheadScores(&pb.ScoresAhead{Nodes: a.slots, Plugins: resp.GetPlugins()}, a.plan)
		return
	}
	h.table.Failed(a.plan, status.Code(err), hostVersion)
	switch status.Code(err) {
	case codes.FailedPrecondition, codes.InvalidArgument:
		// A refused delta changed nothing on the host: the call made the
		// way every call with a delta is made.
		a.out, a.err = h.preScoreAhead(ctx, a.c, a.choose)
	default:
		a.err = err
	}
}

// preScoreAhead is the PreScore of startScoresAhead made and waited for
// at once, through withDelta. Callers hold h.mu.
func (h *Host) preScoreAhead(ctx context.Context, c preFilterCall, choose func(*nodetable.Plan) []uint32) (*aheadScores, error) {
	var out *aheadScores
	err := h.withDelta(ctx, c.profile, func(s *session.Session, full bool) (version *uint64, err error) {
		var resp *pb.PreScoreResponse
		var plan *nodetable.Plan
		var slots []uint32
		resp, plan, version, err = h.sendPreScoreAlone(ctx, s, c, full, true, func(p *nodetable.Plan) ([]uint32, error) {
			plan, slots = p, choose(p)
			return slots, nil
		})
		if err == nil {
			out = newAheadScores(&pb.ScoresAhead{Nodes: slots, Plugins: resp.GetPlugins()}, plan)
		}
		return version, err
	})
	return out, err
}

// sendPreScoreAlone makes one PreScore call with the delta for the slots
// `nodes` picks from the planned table (raw: asking for raw scores).
// Callers hold h.mu.
func (h *Host) sendPreScoreAlone(ctx context.Context, s *session.Session, c preFilterCall, full, raw bool, nodes func(*nodetable.Plan) ([]uint32, error)) (*pb.PreScoreResponse, *nodetable.Plan, *uint64, error) {
	plan := h.table.Plan(c.nodes, full, c.podGroupCycle, func(ni fwk.NodeInfo, slot uint32) *pb.Node { return wire.Node(ni, slot, s.Data) })
	slots, err := nodes(plan)
	if err != nil {
		return nil, nil, nil, err
	}
	timeout := c.timeout
	if plan.Msg.GetFull() {
		timeout = max(timeout, h.client.Config().ResyncTimeout)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, hostVersion, err := h.client.PreScore(cctx, s, &pb.PreScoreRequest{
		SessionId: s.ID, SchedulerName: c.profile, Pod: c.pod, Delta: plan.Msg, Nodes: slots,
		Placed: h.takePlaced(), Raw: raw && s.ScoresAhead, WantRawScores: c.rawScores,
	})
	if err != nil {
		h.table.Failed(plan, status.Code(err), hostVersion)
		return nil, nil, hostVersion, err
	}
	h.table.Accepted(plan, resp.GetTableVersion())
	return resp, plan, nil, nil
}

// plannedSlots are the slots the feasible nodes have once plan is applied:
// found through the snapshot (a lookup by name, then the plan's slot of
// that NodeInfo), or, without a snapshot, by the cycle's node list.
func plannedSlots(plan *nodetable.Plan, nodes []fwk.NodeInfo, feasible []string, snapshot func(string) fwk.NodeInfo) ([]uint32, error) {
	slots := make([]uint32, len(feasible))
	var byName map[string]uint32
	for i, name := range feasible {
		if snapshot != nil {
			if slot, ok := plan.SlotOfInfo[snapshot(name)]; ok {
				slots[i] = slot
				continue
			}
		}
		if byName == nil {
			byName = make(map[string]uint32, len(nodes))
			for j, ni := range nodes {
				if ni.Node() != nil && plan.Order[j] != nodetable.NoSlot {
					byName[ni.Node().Name] = plan.Order[j]
				}
			}
		}
		slot, ok := byName[name]
		if !ok {
			return nil, status.Errorf(codes.Internal, "node %q is not in the node table sent to schedplug-host", name)
		}
		slots[i] = slot
	}
	return slots, nil
}

func (h *Host) sendPreScore(ctx context.Context, s *session.Session, c preFilterCall, feasible []string, applies appliesInfo) (*pb.PreScoreResponse, error) {
	slots := make([]uint32, len(feasible))
	for i, name := range feasible {
		slot, ok := h.table.Table.SlotOf(name)
		if !ok {
			return nil, status.Errorf(codes.Internal, "node %q is not in the node table sent to schedplug-host", name)
		}
		slots[i] = slot
	}
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, _, err := h.client.PreScore(cctx, s, &pb.PreScoreRequest{
		SessionId: s.ID, SchedulerName: c.profile, Pod: c.pod, TableVersion: h.table.Table.Version(),
		Nodes: slots, AppliesKnown: applies.known, NotApplying: applies.notApplying,
		Placed: h.takePlaced(), WantRawScores: c.rawScores,
	})
	return resp, err
}

// filterNodes runs every native Filter on the given slots (as [first, end)
// pairs) for the cycle's pod, on the table the cycle's PreFilter answered
// for.
func (h *Host) filterNodes(ctx context.Context, s *session.Session, c preFilterCall, tableVersion uint64, ranges []uint32, applies appliesInfo, scoreAhead bool) (*pb.PreFilterResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.settle(ctx)
	if s != h.client.Current() {
		return nil, status.Error(codes.FailedPrecondition, "the session of the cycle's PreFilter has ended; the nodes outside its window were not evaluated")
	}
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	return h.client.FilterNodes(cctx, s, &pb.FilterNodesRequest{
		SessionId: s.ID, SchedulerName: c.profile, Pod: c.pod, TableVersion: tableVersion,
		Evaluate: ranges, AppliesKnown: applies.known, NotApplying: applies.notApplying,
		ScoreAhead: scoreAhead,
	})
}

// filterOne evaluates `plugins`, in order, on one node whose state is sent
// explicitly; the node table is not involved. The call may take `timeout`,
// the sum of the plugins' own: the host stops each at its own deadline.
func (h *Host) filterOne(ctx context.Context, profile string, plugins []string, pod *pb.Pod, ni fwk.NodeInfo, applies appliesInfo, timeout time.Duration) (*pb.FilterResponse, error) {
	s := h.client.Current()
	if s == nil {
		return nil, session.ErrNoSession
	}
	req := &pb.FilterRequest{SchedulerName: profile, Pod: pod, Node: wire.Node(ni, 0, s.Data), Plugins: plugins,
		AppliesKnown: applies.known, NotApplying: applies.notApplying}
	call := func(s *session.Session) (*pb.FilterResponse, error) {
		if s == nil {
			return nil, session.ErrNoSession
		}
		req.SessionId = s.ID
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return h.client.Filter(cctx, s, req)
	}
	resp, err := call(s)
	if status.Code(err) != codes.FailedPrecondition {
		return resp, err
	}
	ns, err := h.client.Renew(ctx, s)
	if err != nil {
		return nil, err
	}
	return call(ns)
}

// appliesInfo is the cycle's applies() answers, sent back to the host.
type appliesInfo struct {
	known       bool
	notApplying []string
}
