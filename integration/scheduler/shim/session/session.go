package session

import (
	"sync"
	"sync/atomic"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/abi"
)

// Session is what one Handshake opened: its id, what the host reported of
// its plugins, the identity of the host that answers, and whether the
// session still stands. Answers computed in a session may be kept beyond
// their scheduling cycle only while Trusted says so.
type Session struct {
	ID string
	// Data: the SCHEDPLUG_DATA_* bits the host's plugins declared; the shim
	// converts and sends only those extra pod and node fields.
	Data abi.DataBits
	// PreScoreDelta: the host applies a node-table delta sent with
	// PreScore, so a profile without native Filter plugins needs no
	// PreFilter call.
	PreScoreDelta bool
	// ScoresAhead: the host scores ahead of PreScore on request (raw
	// scores the shim normalizes over kube-scheduler's feasible nodes) and
	// reads Placement.scored.
	ScoresAhead bool
	// CycleNotes: the host takes NoteCycles, so what became of a cycle
	// goes to it as soon as kube-scheduler decides, not with the next call.
	CycleNotes bool
	// FastHooks: the host takes Reserve, Unreserve and Permit on the fast
	// path too.
	FastHooks bool
	// FeasibleTarget: the host takes PreFilterRequest.feasible_target, so
	// a window may be the whole node list, walked until enough nodes pass.
	FeasibleTarget bool

	plugins  atomic.Pointer[map[string]*pb.PluginInfo]
	identity atomic.Pointer[Identity]
	// fast: the host's fast-path socket (nil: gRPC only); fastFailed: it
	// could not be reached once in this session (logged once).
	fast       *fastPath
	fastFailed atomic.Bool
	// watched: the host's WatchSession stream is open and has spoken.
	watched atomic.Bool
	ended   chan struct{}
	endOnce sync.Once
}

// Identity is which host process, with which plugin builds and
// configuration, answered (schedplug.proto's HostIdentity).
type Identity struct {
	Epoch, Build uint64
}

func identityOf(id *pb.HostIdentity) Identity {
	return Identity{Epoch: id.GetEpoch(), Build: id.GetBuild()}
}

func newSession(resp *pb.HandshakeResponse, fast *fastPath) *Session {
	s := &Session{ID: resp.GetSessionId(), Data: resp.GetData(), PreScoreDelta: resp.GetPreScoreDelta(), ScoresAhead: resp.GetScoresAhead(), CycleNotes: resp.GetCycleNotes(), FastHooks: resp.GetFastHooks(), FeasibleTarget: resp.GetFeasibleTarget(), fast: fast, ended: make(chan struct{})}
	s.setPlugins(resp.GetPlugins())
	id := identityOf(resp.GetIdentity())
	s.identity.Store(&id)
	return s
}

func (s *Session) setPlugins(infos []*pb.PluginInfo) {
	m := make(map[string]*pb.PluginInfo, len(infos))
	for _, p := range infos {
		m[p.GetName()] = p
	}
	s.plugins.Store(&m)
}

// Plugin is what the host reported for the plugin `name` (nil: nothing).
func (s *Session) Plugin(name string) *pb.PluginInfo {
	if s == nil {
		return nil
	}
	return (*s.plugins.Load())[name]
}

// Identity is the identity of the host that answers in this session.
func (s *Session) Identity() Identity { return *s.identity.Load() }

// Trusted says whether answers of this session may be used beyond their
// cycle: the session has not ended and the host's watch stream is open, so
// a host that exits, restarts or is cut off ends the session at once.
func (s *Session) Trusted() bool {
	return s != nil && s.watched.Load() && !s.Ended()
}

// Ended says whether the session ended (the host lost it or went away, or
// a new Handshake replaced it).
func (s *Session) Ended() bool {
	select {
	case <-s.ended:
		return true
	default:
		return false
	}
}

func (s *Session) end() {
	s.endOnce.Do(func() {
		close(s.ended)
		s.fast.close()
	})
}

// noteAnswer takes the identity an answer carries: a changed build (a
// plugin or the configuration swapped on the host) replaces the session's,
// so that nothing computed by the old build counts as the session's any
// more. It reports false for an answer from another host process than the
// session's, which cannot belong to it.
func (s *Session) noteAnswer(id *pb.HostIdentity) bool {
	if id == nil {
		return true // a host that predates identities; never Trusted
	}
	cur := s.Identity()
	got := identityOf(id)
	if got == cur {
		return true
	}
	if got.Epoch != cur.Epoch {
		return false
	}
	s.identity.Store(&got)
	buildChanges.Inc()
	return true
}

// HasFastPath says whether the session's calls go over the host's
// fast-path socket.
func (s *Session) HasFastPath() bool { return s.fast != nil }
