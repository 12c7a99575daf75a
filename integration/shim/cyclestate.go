package shim

import (
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/gen/schedplugv1"
)

// CycleState keys shared by all shim plugins of a profile: the first native
// plugin to run makes the call, the others read its result.
const (
	filterStateKey fwk.StateKey = "schedplug.dev/prefilter"
	scoreStateKey  fwk.StateKey = "schedplug.dev/prescore"
)

// filterState is the cycle's PreFilter outcome. It is never changed after
// PreFilter, so Clone (preemption copies the CycleState) shares it.
type filterState struct {
	pod   *pb.Pod
	nodes []fwk.NodeInfo
	// err: the host did not answer; each plugin applies its failurePolicy.
	err error
	res *prefilterResult
	// plugins: the native Filter plugins of the verdicts, in profile order
	// (res.resp.Plugins; see indexOf).
	plugins []string
	// rejection[slot]: index into the response's rejection arrays, -1 if
	// the node passed every native Filter.
	rejection []int32
	// unfinished: plugin index -> the host's sentence saying why that
	// plugin has no verdict for the nodes it did not reject.
	unfinished map[int]string
	// dryRuns: the host's answers for NodeInfos that are not the
	// snapshot's (dryrun.go).
	dryRuns dryRunCache
	// podGroupCycle: the cycle is one of a pod group's (planDelta).
	podGroupCycle bool
}

func (s *filterState) Clone() fwk.StateData { return s }

func newFilterState(pod *pb.Pod, nodes []fwk.NodeInfo, res *prefilterResult, err error) *filterState {
	s := &filterState{pod: pod, nodes: nodes, err: err, res: res}
	if err != nil {
		return s
	}
	resp := res.resp
	s.plugins = resp.GetPlugins()
	s.rejection = make([]int32, res.states.size)
	for i := range s.rejection {
		s.rejection[i] = -1
	}
	for i, slot := range resp.GetRejectedNodes() {
		if int(slot) < len(s.rejection) {
			s.rejection[slot] = int32(i)
		}
	}
	for _, u := range resp.GetUnfinished() {
		if i, ok := s.indexOf(u.GetPlugin()); ok {
			if s.unfinished == nil {
				s.unfinished = map[int]string{}
			}
			s.unfinished[i] = u.GetReason()
		}
	}
	return s
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
// caller must ask the host about this NodeInfo explicitly.
func (s *filterState) lookup(pluginIdx int, slot uint32, st nodeState) (v verdict, ok bool) {
	return s.verdictAt(pluginIdx, slot, st, false)
}

// ownVerdict is lookup, except that it knows nothing (ok=false) when an
// earlier native plugin rejected the node: the host never ran this one
// there, so there is no verdict of its own to reuse on a changed copy of
// the node, on which the earlier plugin may pass.
func (s *filterState) ownVerdict(pluginIdx int, slot uint32, st nodeState) (v verdict, ok bool) {
	return s.verdictAt(pluginIdx, slot, st, true)
}

func (s *filterState) verdictAt(pluginIdx int, slot uint32, st nodeState, own bool) (v verdict, ok bool) {
	if s.res == nil || int(slot) >= len(s.rejection) {
		return verdict{}, false
	}
	if held, ok := s.res.states.at(slot); !ok || held != st {
		return verdict{}, false
	}
	i := s.rejection[slot]
	notRejectedHere := func() verdict {
		if why, ok := s.unfinished[pluginIdx]; ok {
			return verdict{unfinished: true, reason: why}
		}
		return verdict{code: pb.Code_CODE_SUCCESS}
	}
	if i < 0 {
		return notRejectedHere(), true
	}
	resp := s.res.resp
	if int(i) >= len(resp.GetRejectedBy()) {
		return notRejectedHere(), true
	}
	if by := int(resp.GetRejectedBy()[i]); by < pluginIdx {
		// Rejected by an earlier native plugin of the profile: the
		// framework stops at the first rejection in profile order, as the
		// host did, so this plugin's answer does not matter.
		if own {
			return verdict{}, false
		}
		return verdict{code: pb.Code_CODE_SUCCESS}, true
	} else if by > pluginIdx {
		// A later plugin rejected it, so this one passed it, unless this
		// one did not finish (the host still runs later plugins then).
		return notRejectedHere(), true
	}
	v.code = pb.Code_CODE_UNSCHEDULABLE
	if int(i) < len(resp.GetCodes()) {
		v.code = resp.GetCodes()[i]
	}
	if int(i) < len(resp.GetReason()) {
		if r := resp.GetReason()[i]; int(r) < len(resp.GetReasons()) {
			v.reason = resp.GetReasons()[r]
		}
	}
	return v, true
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
