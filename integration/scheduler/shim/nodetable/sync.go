package nodetable

import (
	"google.golang.org/grpc/codes"
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// Sync is the table together with what the host is known to hold: whether
// the next delta must be the whole table, and the last delta sent whose
// fate is unknown. A delta is committed only once the host says it applied
// it, so a failed call leaves the table as the host last confirmed it.
// Callers make one call at a time (they serialize their use of Sync).
type Sync struct {
	Table *Table
	// needFull: the next delta is the full table (a new session, or the
	// host refused a delta).
	needFull bool
	// pending is the last delta sent whose fate is unknown (the call failed
	// without saying which table version the host has). If the host later
	// reports that version, the delta was applied and is committed instead
	// of resending the whole table.
	pending *Plan
}

// NewSync is an empty table whose first delta is the full table.
func NewSync() *Sync { return &Sync{Table: New(), needFull: true} }

// Reset starts over for a new session, whose table on the host is empty.
func (s *Sync) Reset() {
	s.Table.Reset()
	s.needFull = true
	s.pending = nil
}

// SendFull makes the next delta the full table.
func (s *Sync) SendFull() { s.needFull = true }

// Plan is the delta of the next call (the full table when it must be, or
// when full is set), noted as issued.
func (s *Sync) Plan(nodes []fwk.NodeInfo, full, podGroupCycle bool, convert func(fwk.NodeInfo, uint32) *pb.Node) *Plan {
	p := s.Table.PlanDelta(nodes, full || s.needFull, podGroupCycle, convert)
	s.Table.NoteIssued(p.Msg.GetNewVersion())
	return p
}

// Accepted commits p: the host applied it and answered with its table at
// version.
func (s *Sync) Accepted(p *Plan, version uint64) {
	s.Table.Commit(p, version)
	s.needFull = false
	s.pending = nil
}

// Failed notes what a failed call of p says about the host's table:
// hostVersion is the version it reported (nil: no word from the host).
func (s *Sync) Failed(p *Plan, code codes.Code, hostVersion *uint64) {
	if code == codes.FailedPrecondition || code == codes.InvalidArgument {
		return // about the table itself; the caller resyncs
	}
	switch {
	case hostVersion != nil && *hostVersion == p.Msg.GetNewVersion():
		// The host applied the delta (its version says so) and failed
		// afterwards, e.g. its chain ran out of time.
		s.Accepted(p, *hostVersion)
	case hostVersion == nil:
		// Our deadline fired or the connection dropped: the host may or
		// may not have applied the delta.
		s.pending = p
	}
}

// Recover commits the pending delta if hostVersion, which the host
// reported, is its version: the delta whose answer was lost did arrive.
func (s *Sync) Recover(hostVersion *uint64) bool {
	p := s.pending
	if hostVersion == nil || p == nil || *hostVersion != p.Msg.GetNewVersion() {
		return false
	}
	s.Accepted(p, *hostVersion)
	return true
}
