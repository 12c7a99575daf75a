package shim

import (
	"sync"
	"sync/atomic"

	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// CycleState keys shared by all shim plugins of a profile: the first native
// plugin to run makes the call, the others read its result.
const (
	filterStateKey fwk.StateKey = "schedplug.dev/prefilter"
	scoreStateKey  fwk.StateKey = "schedplug.dev/prescore"
)

// filterState is the cycle's PreFilter outcome. Preemption copies the
// CycleState (Clone), and the copies share it: its verdicts only grow (a
// FilterNodes answer merged in) and are swapped in whole.
type filterState struct {
	pod   *pb.Pod
	nodes []fwk.NodeInfo
	// err: the host did not answer; each plugin applies its failurePolicy.
	err error
	res *prefilterResult
	// plugins: the native Filter plugins of the verdicts, in profile order
	// (res.resp.Plugins; see indexOf).
	plugins []string
	// verdicts: the rejections known so far; replaced, never modified.
	verdicts atomic.Pointer[verdictTable]
	// visits: the snapshot nodes this cycle's Filter asked about, from
	// which the next cycle's window is predicted (window.go).
	visits visitSet
	// rest guards the cycle's one FilterNodes call for the nodes outside
	// the window; restDone and restErr are its outcome.
	rest     sync.Mutex
	restDone atomic.Bool // set under rest; read without it by windowOutcome
	restErr  error
	// dryRuns: the host's answers for NodeInfos that are not the
	// snapshot's (dryrun.go).
	dryRuns dryRunCache
	// podGroupCycle: the cycle is one of a pod group's (planDelta).
	podGroupCycle bool
	// profile and nominated: the cycle's profile and the pod's nominated
	// node; sig: the pod's signature when the profile may reuse verdicts
	// ("" otherwise; reuse.go).
	profile   string
	nominated string
	sig       string
	// reused: the kept verdicts this cycle answers from instead of a
	// PreFilter call; late, made under lateMu, is the call the cycle made
	// after all (callForReuseCycle), which every later Filter uses.
	reused *reusedVerdicts
	lateMu sync.Mutex
	late   atomic.Pointer[filterState]
}

func (s *filterState) Clone() fwk.StateData { return s }

// reusedFilterState is a cycle that answers from kept verdicts.
func reusedFilterState(pod *pb.Pod, nodes []fwk.NodeInfo, r *reusedVerdicts) *filterState {
	return &filterState{pod: pod, nodes: nodes, reused: r, plugins: r.plugins, visits: newVisitSet(len(r.bySlot))}
}

// skipped says whether applies() said no for the plugin at index i (its
// PreFilter returns Skip).
func (s *filterState) skipped(i int) bool {
	var sk []bool
	switch {
	case s.res != nil:
		sk = s.res.resp.GetSkipped()
	case s.reused != nil:
		sk = s.reused.skipped
	}
	return i < len(sk) && sk[i]
}

// verdictTable is the host's rejections, indexed by slot.
type verdictTable struct {
	// rejection[slot]: index into the arrays below, -1 if the node passed
	// every native Filter (or was not evaluated, see window).
	rejection []int32
	// Parallel arrays, as in PreFilterResponse; reason indexes reasons.
	rejectedBy []uint32
	codes      []pb.Code
	reason     []uint32
	reasons    []string
	// unfinished: plugin index -> the host's sentence saying why that
	// plugin has no verdict for the window's nodes it did not reject;
	// unfinishedRest the same for the nodes outside the window.
	unfinished     map[int]string
	unfinishedRest map[int]string
	// window: the slots PreFilter evaluated; nil when it evaluated every
	// node. rest: FilterNodes evaluated the others.
	window slotSet
	rest   bool
}

func newFilterState(pod *pb.Pod, nodes []fwk.NodeInfo, res *prefilterResult, err error) *filterState {
	s := &filterState{pod: pod, nodes: nodes, err: err, res: res}
	if err != nil {
		return s
	}
	resp := res.resp
	s.plugins = resp.GetPlugins()
	s.visits = newVisitSet(res.states.size)
	vt := &verdictTable{
		rejection:  make([]int32, res.states.size),
		rejectedBy: resp.GetRejectedBy(),
		codes:      resp.GetCodes(),
		reason:     resp.GetReason(),
		reasons:    resp.GetReasons(),
		unfinished: s.unfinishedOf(resp),
	}
	if resp.GetWindowed() && res.window != nil {
		// Only the window was evaluated (a host that predates windows
		// evaluates every node and says so).
		vt.window = res.window
	}
	for i := range vt.rejection {
		vt.rejection[i] = -1
	}
	for i, slot := range resp.GetRejectedNodes() {
		if int(slot) < len(vt.rejection) {
			vt.rejection[slot] = int32(i)
		}
	}
	s.verdicts.Store(vt)
	return s
}

// windowOutcome says whether PreFilter evaluated a window and whether the
// cycle went beyond it (the next PreFilter records it in Manager.windows).
func (s *filterState) windowOutcome() (windowed, missed bool) {
	if vt := s.verdicts.Load(); vt == nil || vt.window == nil {
		return false, false
	}
	// Not under s.rest: the caller holds Manager.mu, which evaluateRest
	// takes while holding s.rest.
	return true, s.restDone.Load()
}

// unfinishedOf maps the answer's unfinished plugins to their index.
func (s *filterState) unfinishedOf(resp *pb.PreFilterResponse) map[int]string {
	var out map[int]string
	for _, u := range resp.GetUnfinished() {
		if i, ok := s.indexOf(u.GetPlugin()); ok {
			if out == nil {
				out = map[int]string{}
			}
			out[i] = u.GetReason()
		}
	}
	return out
}

// withRest is the table with a FilterNodes answer for the nodes outside
// the window merged in.
func (vt *verdictTable) withRest(s *filterState, resp *pb.PreFilterResponse) *verdictTable {
	out := *vt
	out.rest = true
	out.unfinishedRest = s.unfinishedOf(resp)
	out.rejection = append([]int32(nil), vt.rejection...)
	base := len(vt.rejectedBy)
	out.rejectedBy = append(append([]uint32(nil), vt.rejectedBy...), resp.GetRejectedBy()...)
	out.codes = append(append([]pb.Code(nil), vt.codes...), resp.GetCodes()...)
	out.reasons = append(append([]string(nil), vt.reasons...), resp.GetReasons()...)
	out.reason = append([]uint32(nil), vt.reason...)
	for _, r := range resp.GetReason() {
		out.reason = append(out.reason, r+uint32(len(vt.reasons)))
	}
	for i, slot := range resp.GetRejectedNodes() {
		if int(slot) < len(out.rejection) && !vt.window.has(slot) {
			out.rejection[slot] = int32(base + i)
		}
	}
	return &out
}

// indexOf is the position of a native Filter plugin in the verdicts. A
// profile has a few of them: comparing names beats hashing one, which every
// Filter call of every node does.
func (s *filterState) indexOf(plugin string) (int, bool) {
	for i, name := range s.plugins {
		if name == plugin {
			return i, true
		}
	}
	return 0, false
}

// appliesAnswer is what the shim sends back to the host with PreScore and
// single-node Filter calls so that applies() is asked once per cycle.
func (s *filterState) appliesAnswer() (known bool, notApplying []string) {
	if s != nil && s.reused != nil && s.res == nil {
		if !s.reused.appliesReported {
			return false, nil
		}
		return true, s.reused.notApplying
	}
	if s == nil || s.err != nil || s.res == nil || !s.res.resp.GetAppliesReported() {
		return false, nil
	}
	return true, s.res.resp.GetNotApplying()
}

// verdict is the PreFilter answer for one plugin on one node.
type verdict struct {
	code   pb.Code
	reason string
	// unfinished: the plugin has no verdict for this node; reason says why
	// and the plugin's failurePolicy decides.
	unfinished bool
}

// lookup returns the plugin's verdict on the node in `slot` if the host
// evaluated exactly this state of it (see nodeState); ok=false means the
// caller must ask the host about this NodeInfo explicitly. outside: the
// state is the one sent, but the node is outside the window PreFilter
// evaluated and FilterNodes has not been asked yet (see evaluateRest).
func (s *filterState) lookup(pluginIdx int, slot uint32, st nodeState) (v verdict, ok, outside bool) {
	return s.verdictAt(pluginIdx, slot, st, false)
}

// ownVerdict is lookup, except that it knows nothing (ok=false) when an
// earlier native plugin rejected the node: the host never ran this one
// there, so there is no verdict of its own to reuse on a changed copy of
// the node, on which the earlier plugin may pass.
func (s *filterState) ownVerdict(pluginIdx int, slot uint32, st nodeState) (v verdict, ok, outside bool) {
	return s.verdictAt(pluginIdx, slot, st, true)
}

func (s *filterState) verdictAt(pluginIdx int, slot uint32, st nodeState, own bool) (v verdict, ok, outside bool) {
	if s.res == nil {
		return verdict{}, false, false
	}
	vt := s.verdicts.Load()
	if int(slot) >= len(vt.rejection) {
		return verdict{}, false, false
	}
	if held, ok := s.res.states.at(slot); !ok || held != st {
		return verdict{}, false, false
	}
	unfinished := vt.unfinished
	if vt.window != nil && !vt.window.has(slot) {
		if !vt.rest {
			return verdict{}, false, true
		}
		unfinished = vt.unfinishedRest
	}
	i := vt.rejection[slot]
	notRejectedHere := func() verdict {
		if why, ok := unfinished[pluginIdx]; ok {
			return verdict{unfinished: true, reason: why}
		}
		return verdict{code: pb.Code_CODE_SUCCESS}
	}
	if i < 0 || int(i) >= len(vt.rejectedBy) {
		return notRejectedHere(), true, false
	}
	if by := int(vt.rejectedBy[i]); by < pluginIdx {
		// Rejected by an earlier native plugin of the profile: the
		// framework stops at the first rejection in profile order, as the
		// host did, so this plugin's answer does not matter.
		if own {
			return verdict{}, false, false
		}
		return verdict{code: pb.Code_CODE_SUCCESS}, true, false
	} else if by > pluginIdx {
		// A later plugin rejected it, so this one passed it, unless this
		// one did not finish (the host still runs later plugins then).
		return notRejectedHere(), true, false
	}
	v.code = pb.Code_CODE_UNSCHEDULABLE
	if int(i) < len(vt.codes) {
		v.code = vt.codes[i]
	}
	if int(i) < len(vt.reason) {
		if r := vt.reason[i]; int(r) < len(vt.reasons) {
			v.reason = vt.reasons[r]
		}
	}
	return v, true, false
}

// scoreState is the cycle's PreScore outcome.
type scoreState struct {
	// lazy: made by NormalizeScore because no native plugin of the profile
	// is enabled at preScore; Score returned placeholders.
	lazy bool
	err  error
	// position: node name -> index into each plugin's scores.
	position map[string]int
	plugins  map[string]*pb.PluginScores
}

func (s *scoreState) Clone() fwk.StateData { return s }

func newScoreState(feasible []string, resp *pb.PreScoreResponse, err error) *scoreState {
	s := &scoreState{err: err}
	if err != nil {
		return s
	}
	s.position = make(map[string]int, len(feasible))
	for i, name := range feasible {
		s.position[name] = i
	}
	s.plugins = make(map[string]*pb.PluginScores, len(resp.GetPlugins()))
	for _, p := range resp.GetPlugins() {
		s.plugins[p.GetPlugin()] = p
	}
	return s
}
