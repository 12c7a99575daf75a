// One file: fakeHost answers every call the shim makes from one state (its
// table, counters, faults and delays), which the tests steer and read back; the
// label rules below are its whole plugin behaviour.

package shim

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// fakeHost is schedplug-host in a few lines of Go, served on a real unix
// socket. Its plugins decide from labels so tests can steer them:
//   - Filter: node label "reject-<Plugin>" rejects with reason
//     "node(s) are marked reject-<Plugin>"; node label
//     "maxpods-<Plugin>"=N rejects when the node has N or more pods
//     (so a preemption what-if with fewer pods gives another answer).
//   - Skip: pod label "skip-<Plugin>" makes the plugin not apply.
//   - Score: node label "score-<Plugin>" is the score (default 0).
//   - Filter: node label "skipfilter-<Plugin>" makes the filter answer
//     CODE_SKIP (which must not let the node pass).
//   - Slow plugin: pod label "unfinished-<Plugin>" makes the host report
//     that plugin (and, in PreFilter, the filters after it) as unfinished,
//     as the real host does when its deadline runs out.
//   - Scores ahead (scoresAhead): raw scores are the score labels, with
//     normalization NONE unless `normalization` names another for the
//     plugin.
//
// Like the real host it reports its table version in the trailer
// "schedplug-table-version" of every PreFilter that reached the table, and
// it offers its fast-path socket (host.sock.fast), which answers PreFilter
// and PreScore (and Reserve, Unreserve and Permit: fastHooks) with the same
// handlers; fastFault breaks that socket on purpose.
type fakeHost struct {
	pb.UnimplementedHostServer

	mu           sync.Mutex
	plugins      []*pb.PluginInfo
	handshakeErr error
	// lastHandshake is the last HandshakeRequest received.
	lastHandshake *pb.HandshakeRequest
	delay         time.Duration
	sessions      map[string]bool
	sessionSeq    int
	profiles      map[string][]string
	table         map[uint32]*pb.Node
	version       uint64
	calls         map[string]int
	deltas        []*pb.NodeTableDelta
	// failAfterApply: PreFilter applies the delta, then answers this error
	// (as the real host does when its chain runs out of time).
	failAfterApply error
	lastPreScore   *pb.PreScoreRequest
	// filterNodesErr, when set, is FilterNodes' answer.
	filterNodesErr error
	// evaluates: the `evaluate` ranges of every PreFilter and FilterNodes
	// call, in order (nil: every node).
	evaluates [][]uint32
	// targets: the feasible_target of every PreFilter call, in order.
	targets    []uint32
	lastFilter *pb.FilterRequest
	// brokenPromise: nodes the named plugin now rejects in PreFilter
	// although their objects did not change (a plugin breaking the promises
	// verdict reuse rests on).
	brokenPromise map[string]string

	sock   string
	server *grpc.Server

	// offerFast: the Handshake names the fast-path socket.
	offerFast bool
	// noPreScoreDelta: the Handshake does not offer PreScoreRequest.delta
	// (a host that predates it, which ignores the field).
	noPreScoreDelta bool
	// scoresAhead: the Handshake offers scores ahead (PreFilterRequest.
	// score_ahead, PreScoreRequest.raw); normalization is each plugin's
	// (NONE when not listed). placed: every Placement received.
	scoresAhead   bool
	normalization map[string]pb.Normalization
	placed        []*pb.Placement
	// cycleNotes: the Handshake offers NoteCycles (each call's Placements
	// go into `placed` too); notesErr, when set, is its answer.
	cycleNotes bool
	notesErr   error
	// fastHooks: the Handshake offers Reserve, Unreserve and Permit on the
	// fast path.
	fastHooks bool
	// feasibleTarget: the Handshake offers PreFilterRequest.feasible_target
	// (this host stops exactly at the target).
	feasibleTarget bool
	// fastFault, when set, is what the fast-path socket does with the next
	// requests instead of answering: "drop" closes the connection after
	// reading the request, "hang" never answers, "garbage" answers bytes
	// that are not a FastResponse.
	fastFault string
	fastLis   net.Listener
	fastConns map[net.Conn]bool

	// epoch is the fake process's identity (a reset is a restart: a new
	// one); build its plugins' (setBuild swaps them). watchChanged is
	// closed and replaced whenever either changes or sessions are
	// forgotten, which the WatchSession streams wait on.
	epoch, build uint64
	epochSeq     uint64
	watchChanged chan struct{}

	// hookReqs: every hook call's method and plugins, in order;
	// decisions: waiting-pod decisions the next watch events carry
	// (hooks_fakehost_test.go).
	hookReqs  []hookReq
	decisions []*pb.WaitingPodDecision
}

// watchHeartbeat is the fake host's heartbeat on WatchSession streams.
const watchHeartbeat = 100 * time.Millisecond

func (h *fakeHost) identity() *pb.HostIdentity {
	return &pb.HostIdentity{Epoch: h.epoch, Build: h.build}
}

// kickWatches wakes every WatchSession stream. Callers hold h.mu.
func (h *fakeHost) kickWatches() {
	if h.watchChanged != nil {
		close(h.watchChanged)
	}
	h.watchChanged = make(chan struct{})
}

// setBuild swaps the host's plugin build (as a hot reload would).
func (h *fakeHost) setBuild(b uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.build = b
	h.kickWatches()
}

func newFakeHost(t testing.TB, plugins ...*pb.PluginInfo) *fakeHost {
	t.Helper()
	dir, err := os.MkdirTemp("", "sp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	h := &fakeHost{plugins: plugins, sock: filepath.Join(dir, "host.sock"), offerFast: true}
	h.reset()
	h.start(t)
	t.Cleanup(h.stop)
	return h
}

func (h *fakeHost) target() string { return "unix://" + h.sock }

// reset forgets sessions and the table, as a restarted host would.
func (h *fakeHost) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sessions = map[string]bool{}
	h.profiles = map[string][]string{}
	h.table = map[uint32]*pb.Node{}
	h.version = 0
	h.calls = map[string]int{}
	h.deltas = nil
	h.evaluates = nil
	h.targets = nil
	h.filterNodesErr = nil
	h.failAfterApply = nil
	h.epochSeq++
	h.epoch = 0xfeed0000 + h.epochSeq
	h.kickWatches()
}

func (h *fakeHost) start(t testing.TB) {
	t.Helper()
	_ = os.Remove(h.sock)
	lis, err := net.Listen("unix", h.sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	pb.RegisterHostServer(srv, h)
	h.server = srv
	go func() { _ = srv.Serve(lis) }()
	_ = os.Remove(h.sock + ".fast")
	fastLis, err := net.Listen("unix", h.sock+".fast")
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	h.fastLis = fastLis
	h.fastConns = map[net.Conn]bool{}
	h.mu.Unlock()
	go func() {
		for {
			c, err := fastLis.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.fastConns[c] = true
			h.mu.Unlock()
			go h.serveFast(c)
		}
	}()
}

func (h *fakeHost) stop() {
	if h.server != nil {
		h.server.Stop()
		h.server = nil
	}
	h.closeFast()
}

// closeFast takes the fast-path socket away (gRPC keeps serving).
func (h *fakeHost) closeFast() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fastLis != nil {
		h.fastLis.Close()
		h.fastLis = nil
	}
	for c := range h.fastConns {
		c.Close()
	}
	h.fastConns = nil
	_ = os.Remove(h.sock + ".fast")
}

// fastTrailer carries a fast-path call's table-version trailer from the
// handlers (which set it with setTableVersion) to the answer frame.
type fastTrailer struct{ version *uint64 }

func setTableVersion(ctx context.Context, v uint64) {
	if ft, ok := ctx.Value(fastTrailer{}).(*fastTrailer); ok {
		ft.version = &v
		return
	}
	_ = grpc.SetTrailer(ctx, metadata.Pairs("schedplug-table-version", strconv.FormatUint(v, 10)))
}

// serveFast answers FastRequest frames on one fast-path connection.
func (h *fakeHost) serveFast(c net.Conn) {
	defer c.Close()
	for {
		var header [4]byte
		if _, err := io.ReadFull(c, header[:]); err != nil {
			return
		}
		body := make([]byte, binary.LittleEndian.Uint32(header[:]))
		if _, err := io.ReadFull(c, body); err != nil {
			return
		}
		h.mu.Lock()
		h.calls["fast"]++
		fault := h.fastFault
		h.mu.Unlock()
		switch fault {
		case "drop":
			return
		case "hang":
			_, _ = io.Copy(io.Discard, c)
			return
		case "garbage":
			_, _ = c.Write([]byte{3, 0, 0, 0, 0xff, 0xff, 0xff})
			continue
		}
		req := &pb.FastRequest{}
		if err := proto.Unmarshal(body, req); err != nil {
			return
		}
		ft := &fastTrailer{}
		ctx := context.WithValue(context.Background(), fastTrailer{}, ft)
		resp := &pb.FastResponse{}
		var err error
		switch call := req.Call.(type) {
		case *pb.FastRequest_PreFilter:
			var a *pb.PreFilterResponse
			if a, err = h.PreFilter(ctx, call.PreFilter); err == nil {
				resp.Answer = &pb.FastResponse_PreFilter{PreFilter: a}
			}
		case *pb.FastRequest_FilterNodes:
			var a *pb.PreFilterResponse
			if a, err = h.FilterNodes(ctx, call.FilterNodes); err == nil {
				resp.Answer = &pb.FastResponse_PreFilter{PreFilter: a}
			}
		case *pb.FastRequest_PreScore:
			var a *pb.PreScoreResponse
			if a, err = h.PreScore(ctx, call.PreScore); err == nil {
				resp.Answer = &pb.FastResponse_PreScore{PreScore: a}
			}
		case *pb.FastRequest_Notes:
			var a *pb.CycleNotesResponse
			if a, err = h.NoteCycles(ctx, call.Notes); err == nil {
				resp.Answer = &pb.FastResponse_Notes{Notes: a}
			}
		case *pb.FastRequest_Reserve:
			var a *pb.ReserveResponse
			if a, err = h.Reserve(ctx, call.Reserve); err == nil {
				resp.Answer = &pb.FastResponse_Reserve{Reserve: a}
			}
		case *pb.FastRequest_Unreserve:
			var a *pb.UnreserveResponse
			if a, err = h.Unreserve(ctx, call.Unreserve); err == nil {
				resp.Answer = &pb.FastResponse_Unreserve{Unreserve: a}
			}
		case *pb.FastRequest_Permit:
			var a *pb.PermitResponse
			if a, err = h.Permit(ctx, call.Permit); err == nil {
				resp.Answer = &pb.FastResponse_Permit{Permit: a}
			}
		default:
			err = status.Error(codes.InvalidArgument, "no call")
		}
		if err != nil {
			st := status.Convert(err)
			resp.Code, resp.Message = int32(st.Code()), st.Message()
		}
		if ft.version != nil {
			resp.HasTableVersion, resp.TableVersion = true, *ft.version
		}
		out, _ := proto.Marshal(resp)
		frame := binary.LittleEndian.AppendUint32(nil, uint32(len(out)))
		if _, err := c.Write(append(frame, out...)); err != nil {
			return
		}
	}
}

func (h *fakeHost) setFastFault(fault string) {
	h.mu.Lock()
	h.fastFault = fault
	h.mu.Unlock()
}

func (h *fakeHost) count(method string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[method]
}

func (h *fakeHost) lastDelta() *pb.NodeTableDelta {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.deltas) == 0 {
		return nil
	}
	return h.deltas[len(h.deltas)-1]
}

func (h *fakeHost) setDelay(d time.Duration) {
	h.mu.Lock()
	h.delay = d
	h.mu.Unlock()
}

func (h *fakeHost) begin(method string) (release func()) {
	h.mu.Lock()
	h.calls[method]++
	d := h.delay
	h.mu.Unlock()
	if d > 0 {
		time.Sleep(d)
	}
	h.mu.Lock()
	return h.mu.Unlock
}

func (h *fakeHost) info(name string) *pb.PluginInfo {
	for _, p := range h.plugins {
		if p.Name == name {
			return p
		}
	}
	return nil
}

func (h *fakeHost) Handshake(_ context.Context, req *pb.HandshakeRequest) (*pb.HandshakeResponse, error) {
	defer h.begin("Handshake")()
	h.lastHandshake = req
	if h.handshakeErr != nil {
		return nil, h.handshakeErr
	}
	for _, p := range req.Profiles {
		for _, n := range p.Plugins {
			if h.info(n) == nil {
				return nil, status.Errorf(codes.InvalidArgument, "profile %q enables plugin %q but no loaded .so reports that name", p.SchedulerName, n)
			}
		}
		h.profiles[p.SchedulerName] = p.Plugins
	}
	h.sessionSeq++
	id := fmt.Sprintf("s%d", h.sessionSeq)
	h.sessions[id] = true
	// A new session starts with an empty table.
	h.table = map[uint32]*pb.Node{}
	h.version = 0
	resp := &pb.HandshakeResponse{ProtocolVersion: pb.ProtocolVersion_PROTOCOL_VERSION_1, SessionId: id, Plugins: h.plugins, Identity: h.identity()}
	if h.offerFast {
		resp.FastPathSocket = filepath.Base(h.sock) + ".fast"
	}
	resp.PreScoreDelta = !h.noPreScoreDelta
	resp.ScoresAhead = h.scoresAhead
	resp.CycleNotes = h.cycleNotes
	resp.FastHooks = h.fastHooks
	resp.FeasibleTarget = h.feasibleTarget
	return resp, nil
}

func (h *fakeHost) NoteCycles(_ context.Context, req *pb.CycleNotes) (*pb.CycleNotesResponse, error) {
	defer h.begin("NoteCycles")()
	if h.notesErr != nil {
		return nil, h.notesErr
	}
	if !h.sessions[req.SessionId] {
		return nil, status.Errorf(codes.FailedPrecondition, "unknown session %q", req.SessionId)
	}
	h.placed = append(h.placed, req.Placed...)
	return &pb.CycleNotesResponse{Identity: h.identity()}, nil
}

// placements is every Placement received so far.
func (h *fakeHost) placements() []*pb.Placement {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*pb.Placement(nil), h.placed...)
}

func (h *fakeHost) applyDelta(d *pb.NodeTableDelta) error {
	h.deltas = append(h.deltas, d)
	if d.Full {
		h.table = map[uint32]*pb.Node{}
	} else if d.BaseVersion != h.version {
		return status.Errorf(codes.FailedPrecondition, "delta applies to table version %d, host has %d", d.BaseVersion, h.version)
	}
	removed := map[uint32]bool{}
	for _, s := range d.Removed {
		if _, ok := h.table[s]; !ok {
			return status.Errorf(codes.InvalidArgument, "removed slot %d is not in use", s)
		}
		removed[s] = true
	}
	for _, s := range d.Removed {
		delete(h.table, s)
	}
	names := map[string]uint32{}
	for s, n := range h.table {
		names[n.Name] = s
	}
	for _, n := range d.Upserts {
		if old, ok := h.table[n.Index]; ok && old.Name != n.Name && !removed[n.Index] {
			return status.Errorf(codes.InvalidArgument, "slot %d holds %q, cannot take %q", n.Index, old.Name, n.Name)
		}
		if s, ok := names[n.Name]; ok && s != n.Index {
			return status.Errorf(codes.InvalidArgument, "node %q is in slot %d and %d", n.Name, s, n.Index)
		}
		h.table[n.Index] = n
		names[n.Name] = n.Index
	}
	h.version = d.NewVersion
	return nil
}

func label(kvs []*pb.KeyValue, key string) (string, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

func evalFilter(plugin string, pod *pb.Pod, node *pb.Node) (pb.Code, string) {
	if _, ok := label(node.Labels, "skipfilter-"+plugin); ok {
		return pb.Code_CODE_SKIP, ""
	}
	if _, ok := label(node.Labels, "reject-"+plugin); ok {
		return pb.Code_CODE_UNSCHEDULABLE, "node(s) are marked reject-" + plugin
	}
	if v, ok := label(node.Labels, "maxpods-"+plugin); ok {
		max, _ := strconv.Atoi(v)
		if int(node.PodCount) >= max {
			return pb.Code_CODE_UNSCHEDULABLE, "node(s) have too many pods for " + plugin
		}
	}
	return pb.Code_CODE_SUCCESS, ""
}

func skips(plugin string, pod *pb.Pod) bool {
	_, ok := label(pod.Labels, "skip-"+plugin)
	return ok
}

func (h *fakeHost) PreFilter(ctx context.Context, req *pb.PreFilterRequest) (*pb.PreFilterResponse, error) {
	defer h.begin("PreFilter")()
	if !h.sessions[req.SessionId] {
		return nil, status.Errorf(codes.FailedPrecondition, "unknown session %q", req.SessionId)
	}
	err := h.applyDelta(req.Delta)
	setTableVersion(ctx, h.version)
	if err != nil {
		return nil, err
	}
	if h.failAfterApply != nil {
		return nil, h.failAfterApply
	}
	h.evaluates = append(h.evaluates, req.Evaluate)
	h.targets = append(h.targets, req.FeasibleTarget)
	h.placed = append(h.placed, req.Placed...)
	evaluate := req.Evaluate
	walked := h.feasibleTarget && req.FeasibleTarget > 0 && len(evaluate) > 0
	if walked {
		evaluate = h.walk(req.SchedulerName, req.Pod, evaluate, int(req.FeasibleTarget))
	}
	resp := h.verdicts(req.SchedulerName, req.Pod, evaluate)
	if walked {
		resp.Evaluated = evaluate
	}
	if req.ScoreAhead && h.scoresAhead {
		resp.ScoresAhead = h.ahead(req.SchedulerName, req.Pod, evaluate, resp)
	}
	return resp, nil
}

// walk is the prefix of the `evaluate` pairs, in the order sent, up to the
// slot at which `target` nodes passed every filter. Callers hold h.mu.
func (h *fakeHost) walk(profile string, pod *pb.Pod, evaluate []uint32, target int) []uint32 {
	rejected := map[uint32]bool{}
	for _, s := range h.verdicts(profile, pod, evaluate).RejectedNodes {
		rejected[s] = true
	}
	var out []uint32
	passed := 0
	for i := 0; i+1 < len(evaluate); i += 2 {
		for s := evaluate[i]; s < evaluate[i+1]; s++ {
			if _, ok := h.table[s]; ok && !rejected[s] {
				passed++
			}
			if passed == target {
				return append(out, evaluate[i], s+1)
			}
		}
		out = append(out, evaluate[i], evaluate[i+1])
	}
	return out
}

// ahead is the raw scores of the evaluated slots no filter rejected in
// resp. Callers hold h.mu.
func (h *fakeHost) ahead(profile string, pod *pb.Pod, evaluate []uint32, resp *pb.PreFilterResponse) *pb.ScoresAhead {
	if len(resp.Unfinished) > 0 {
		return nil
	}
	rejected := map[uint32]bool{}
	for _, s := range resp.RejectedNodes {
		rejected[s] = true
	}
	out := &pb.ScoresAhead{}
	for _, s := range h.slots(evaluate) {
		if !rejected[s] {
			out.Nodes = append(out.Nodes, s)
		}
	}
	plugins, err := h.scores(profile, pod, out.Nodes, true, false)
	if err != nil || len(plugins) == 0 {
		return nil
	}
	out.Plugins = plugins
	return out
}

// FilterNodes answers like PreFilter on the requested slots, without
// touching the table.
func (h *fakeHost) FilterNodes(_ context.Context, req *pb.FilterNodesRequest) (*pb.PreFilterResponse, error) {
	defer h.begin("FilterNodes")()
	if !h.sessions[req.SessionId] {
		return nil, status.Errorf(codes.FailedPrecondition, "unknown session %q", req.SessionId)
	}
	if h.filterNodesErr != nil {
		return nil, h.filterNodesErr
	}
	if req.TableVersion != h.version {
		return nil, status.Errorf(codes.FailedPrecondition, "the node table is at version %d, the request is for %d", h.version, req.TableVersion)
	}
	if len(req.Evaluate) == 0 || len(req.Evaluate)%2 != 0 {
		return nil, status.Error(codes.InvalidArgument, "evaluate must hold [first, end) pairs")
	}
	h.evaluates = append(h.evaluates, req.Evaluate)
	resp := h.verdicts(req.SchedulerName, req.Pod, req.Evaluate)
	if req.ScoreAhead && h.scoresAhead {
		resp.ScoresAhead = h.ahead(req.SchedulerName, req.Pod, req.Evaluate, resp)
	}
	return resp, nil
}

// slots are the table's slots in `evaluate` (every slot when it is
// empty), ascending. Callers hold h.mu.
func (h *fakeHost) slots(evaluate []uint32) []uint32 {
	slots := make([]uint32, 0, len(h.table))
	for s := range h.table {
		if len(evaluate) == 0 || inRanges(evaluate, s) {
			slots = append(slots, s)
		}
	}
	sort.Slice(slots, func(i, j int) bool { return slots[i] < slots[j] })
	return slots
}

// inRanges: slot is in one of the [first, end) pairs.
func inRanges(ranges []uint32, slot uint32) bool {
	for i := 0; i+1 < len(ranges); i += 2 {
		if ranges[i] <= slot && slot < ranges[i+1] {
			return true
		}
	}
	return false
}

// verdicts evaluates the profile's filters on the table's slots (those in
// `evaluate` when it is not empty). Callers hold h.mu.
func (h *fakeHost) verdicts(profile string, pod *pb.Pod, evaluate []uint32) *pb.PreFilterResponse {
	resp := &pb.PreFilterResponse{TableVersion: h.version, AppliesReported: true, Windowed: len(evaluate) > 0, Identity: h.identity()}
	for _, n := range h.profiles[profile] {
		if skips(n, pod) {
			resp.NotApplying = append(resp.NotApplying, n)
		}
	}
	var filters []string
	for _, n := range h.profiles[profile] {
		if h.info(n).HasFilter {
			filters = append(filters, n)
		}
	}
	resp.Plugins = filters
	reasonIdx := map[string]uint32{}
	slots := h.slots(evaluate)
	slow := len(filters)
	for i, p := range filters {
		resp.Skipped = append(resp.Skipped, skips(p, pod))
		if _, ok := label(pod.Labels, "unfinished-"+p); ok && slow == len(filters) {
			slow = i
		}
	}
	for i := slow; i < len(filters); i++ {
		why := fmt.Sprintf("plugin %q did not finish filter within 80.0 ms on schedplug-host", filters[i])
		if i > slow {
			why = fmt.Sprintf("plugin %q did not run: plugin %q before it used up the deadline", filters[i], filters[slow])
		}
		resp.Unfinished = append(resp.Unfinished, &pb.UnfinishedPlugin{Plugin: filters[i], Reason: why})
	}
	for _, s := range slots {
		for i, p := range filters[:slow] {
			if resp.Skipped[i] {
				continue
			}
			code, reason := evalFilter(p, pod, h.table[s])
			if h.brokenPromise[h.table[s].GetName()] == p {
				code, reason = pb.Code_CODE_UNSCHEDULABLE, "node(s) changed their mind about "+p
			}
			if code == pb.Code_CODE_SUCCESS {
				continue
			}
			r, ok := reasonIdx[reason]
			if !ok {
				r = uint32(len(resp.Reasons))
				reasonIdx[reason] = r
				resp.Reasons = append(resp.Reasons, reason)
			}
			resp.RejectedNodes = append(resp.RejectedNodes, s)
			resp.RejectedBy = append(resp.RejectedBy, uint32(i))
			resp.Codes = append(resp.Codes, code)
			resp.Reason = append(resp.Reason, r)
			break
		}
	}
	return resp
}

func (h *fakeHost) Filter(_ context.Context, req *pb.FilterRequest) (*pb.FilterResponse, error) {
	defer h.begin("Filter")()
	h.lastFilter = req
	if !h.sessions[req.SessionId] {
		return nil, status.Errorf(codes.FailedPrecondition, "unknown session %q", req.SessionId)
	}
	for _, p := range req.Plugins {
		if skips(p, req.Pod) {
			continue
		}
		if _, ok := label(req.Pod.Labels, "unfinished-"+p); ok {
			return &pb.FilterResponse{Identity: h.identity(), Code: pb.Code_CODE_SUCCESS, Unfinished: []*pb.UnfinishedPlugin{{Plugin: p, Reason: fmt.Sprintf("plugin %q did not finish filter within 80.0 ms on schedplug-host", p)}}}, nil
		}
		if code, reason := evalFilter(p, req.Pod, req.Node); code != pb.Code_CODE_SUCCESS {
			return &pb.FilterResponse{Identity: h.identity(), Code: code, Plugin: p, Reason: reason}, nil
		}
	}
	return &pb.FilterResponse{Identity: h.identity(), Code: pb.Code_CODE_SUCCESS}, nil
}

func (h *fakeHost) PreScore(ctx context.Context, req *pb.PreScoreRequest) (*pb.PreScoreResponse, error) {
	defer h.begin("PreScore")()
	h.lastPreScore = req
	if !h.sessions[req.SessionId] {
		return nil, status.Errorf(codes.FailedPrecondition, "unknown session %q", req.SessionId)
	}
	if h.filterNodesErr != nil {
		return nil, h.filterNodesErr
	}
	resp := &pb.PreScoreResponse{Identity: h.identity()}
	switch {
	case req.Delta != nil && !h.noPreScoreDelta:
		err := h.applyDelta(req.Delta)
		setTableVersion(ctx, h.version)
		if err != nil {
			return nil, err
		}
		resp.TableVersion = h.version
	case req.TableVersion != h.version:
		return nil, status.Errorf(codes.FailedPrecondition, "table version %d, host has %d", req.TableVersion, h.version)
	}
	h.placed = append(h.placed, req.Placed...)
	plugins, err := h.scores(req.SchedulerName, req.Pod, req.Nodes, req.Raw && h.scoresAhead, req.WantRawScores)
	resp.Plugins = plugins
	return resp, err
}

// scores is every Score plugin's scores of the profile on the slots (raw:
// as raw scores with their normalization; withRaw: normalized with the
// raw ones beside them, from the nodes' raw-<plugin> labels). Callers hold
// h.mu.
func (h *fakeHost) scores(profile string, pod *pb.Pod, slots []uint32, raw, withRaw bool) ([]*pb.PluginScores, error) {
	var out []*pb.PluginScores
	for _, n := range h.profiles[profile] {
		if !h.info(n).HasScore {
			continue
		}
		ps := &pb.PluginScores{Plugin: n, Skipped: skips(n, pod)}
		if _, ok := label(pod.Labels, "unfinished-"+n); ok && !ps.Skipped {
			ps.Unfinished = fmt.Sprintf("plugin %q did not finish score within 80.0 ms on schedplug-host", n)
		} else if !ps.Skipped {
			var scores, rawScores []int64
			for _, s := range slots {
				node, ok := h.table[s]
				if !ok {
					return nil, status.Errorf(codes.InvalidArgument, "unknown node slot %d", s)
				}
				v, _ := label(node.Labels, "score-"+n)
				score, _ := strconv.ParseInt(v, 10, 64)
				scores = append(scores, score)
				if withRaw {
					v, _ := label(node.Labels, "raw-"+n)
					r, _ := strconv.ParseInt(v, 10, 64)
					rawScores = append(rawScores, r)
				}
			}
			switch {
			case raw:
				ps.Raw, ps.Normalization = scores, pb.Normalization_NORMALIZATION_NONE
				if norm, ok := h.normalization[n]; ok {
					ps.Normalization = norm
				}
			case withRaw:
				ps.Scores, ps.Raw = scores, rawScores
			default:
				ps.Scores = scores
			}
		}
		out = append(out, ps)
	}
	return out, nil
}

// WatchSession holds the session's stream as the real host does: an event
// at once, one on every identity change, heartbeats meanwhile, and the end
// (FAILED_PRECONDITION) when the session is forgotten.
func (h *fakeHost) WatchSession(req *pb.WatchSessionRequest, stream pb.Host_WatchSessionServer) error {
	h.mu.Lock()
	h.calls["WatchSession"]++
	known, id, changed := h.sessions[req.SessionId], h.identity(), h.watchChanged
	h.mu.Unlock()
	for {
		if !known {
			return status.Errorf(codes.FailedPrecondition, "unknown session %q", req.SessionId)
		}
		h.mu.Lock()
		decisions := h.decisions
		h.decisions = nil
		h.mu.Unlock()
		if err := stream.Send(&pb.SessionEvent{Identity: id, HeartbeatMs: uint32(watchHeartbeat / time.Millisecond), WaitingPods: decisions}); err != nil {
			return err
		}
		select {
		case <-stream.Context().Done():
			return nil
		case <-changed:
		case <-time.After(watchHeartbeat):
		}
		h.mu.Lock()
		known, id, changed = h.sessions[req.SessionId], h.identity(), h.watchChanged
		h.mu.Unlock()
	}
}
