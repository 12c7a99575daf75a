package session

import (
	"context"
	"errors"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// The calls of a scheduling cycle. PreFilter, FilterNodes and PreScore go
// over the session's fast-path socket when the host offered one and fall
// back to gRPC when it cannot be reached; Filter (preemption's single-node
// calls) always goes over gRPC. NoteCycles, made off the cycle, goes the
// first way too. Every answer's HostIdentity is checked
// against the session's (Session.noteAnswer).

// tableVersionTrailer is the trailing metadata key in which the host
// reports its table version after a PreFilter that reached the session's
// table (answered, failed later, or refused the delta).
const tableVersionTrailer = "schedplug-table-version"

// errOtherHost: an answer whose identity is another host process's.
var errOtherHost = status.Error(codes.FailedPrecondition, "the answer came from another schedplug-host process than the one that opened the session; handshake again")

// PreFilter sends the pod and the node-table delta; version is the table
// version the host reported with a failure, when it did.
func (c *Client) PreFilter(ctx context.Context, s *Session, req *pb.PreFilterRequest) (resp *pb.PreFilterResponse, version *uint64, err error) {
	fresp, fversion, err := c.fastCall(ctx, s, "PreFilter", &pb.FastRequest{Call: &pb.FastRequest_PreFilter{PreFilter: req}})
	if errors.Is(err, errFastNotSent) {
		var trailer metadata.MD
		resp, err = c.grpc.PreFilter(ctx, req, grpc.Trailer(&trailer))
		version = trailerVersion(trailer)
	} else {
		resp, version = fresp.GetPreFilter(), fversion
	}
	countRPC("PreFilter", err)
	return resp, version, c.checkAnswer(ctx, s, err, resp.GetIdentity())
}

// FilterNodes runs the cycle's native Filters on more slots of the table.
func (c *Client) FilterNodes(ctx context.Context, s *Session, req *pb.FilterNodesRequest) (*pb.PreFilterResponse, error) {
	fresp, _, err := c.fastCall(ctx, s, "FilterNodes", &pb.FastRequest{Call: &pb.FastRequest_FilterNodes{FilterNodes: req}})
	var resp *pb.PreFilterResponse
	if errors.Is(err, errFastNotSent) {
		resp, err = c.grpc.FilterNodes(ctx, req)
	} else {
		resp = fresp.GetPreFilter()
	}
	countRPC("FilterNodes", err)
	return resp, c.checkAnswer(ctx, s, err, resp.GetIdentity())
}

// PreScore asks for every native Score plugin's scores; version is the
// host's table version when it reported one (a request with a delta).
func (c *Client) PreScore(ctx context.Context, s *Session, req *pb.PreScoreRequest) (resp *pb.PreScoreResponse, version *uint64, err error) {
	fresp, fversion, err := c.fastCall(ctx, s, "PreScore", &pb.FastRequest{Call: &pb.FastRequest_PreScore{PreScore: req}})
	if errors.Is(err, errFastNotSent) {
		var trailer metadata.MD
		resp, err = c.grpc.PreScore(ctx, req, grpc.Trailer(&trailer))
		version = trailerVersion(trailer)
	} else {
		resp, version = fresp.GetPreScore(), fversion
	}
	countRPC("PreScore", err)
	return resp, version, c.checkAnswer(ctx, s, err, resp.GetIdentity())
}

// PendingPreScore is a PreScore sent whose answer is read later (Wait).
type PendingPreScore struct {
	c      *Client
	s      *Session
	cancel context.CancelFunc
	// fast: written to the fast-path socket; Wait reads the answer.
	fast *fastSent
	// Over gRPC the call runs on its own goroutine until done.
	done    chan struct{}
	resp    *pb.PreScoreResponse
	version *uint64
	err     error
}

// StartPreScore sends a PreScore and returns without waiting for its
// answer, so that the host computes while the caller does other work.
// Over the fast path the request is written now and Wait reads the
// answer, polling first as any call does (the wait is on the caller's
// critical path then); over gRPC the call runs on its own goroutine. ctx
// bounds the call until Wait; cancel, called once Wait returns, releases
// it.
func (c *Client) StartPreScore(ctx context.Context, cancel context.CancelFunc, s *Session, req *pb.PreScoreRequest) *PendingPreScore {
	p := &PendingPreScore{c: c, s: s, cancel: cancel}
	if s.fast != nil {
		sent, err := s.fast.send(ctx, "PreScore", &pb.FastRequest{Call: &pb.FastRequest_PreScore{PreScore: req}})
		if err == nil {
			p.fast = sent
			return p
		}
		if !errors.Is(err, errFastNotSent) {
			countRPC("PreScore", err)
			p.err = err
			return p
		}
		c.fastNotSent(ctx, s, "PreScore", err)
	}
	p.done = make(chan struct{})
	go func() {
		defer close(p.done)
		var trailer metadata.MD
		resp, err := c.grpc.PreScore(ctx, req, grpc.Trailer(&trailer))
		countRPC("PreScore", err)
		p.resp, p.version, p.err = resp, trailerVersion(trailer), c.checkAnswer(ctx, s, err, resp.GetIdentity())
	}()
	return p
}

// Wait is the call's outcome, as PreScore returns it. One caller waits.
func (p *PendingPreScore) Wait(ctx context.Context) (*pb.PreScoreResponse, *uint64, error) {
	defer p.cancel()
	switch {
	case p.fast != nil:
		fresp, version, err := p.fast.receive()
		fastPathCalls.WithLabelValues("PreScore").Inc()
		resp := fresp.GetPreScore()
		countRPC("PreScore", err)
		return resp, version, p.c.checkAnswer(ctx, p.s, err, resp.GetIdentity())
	case p.done != nil:
		<-p.done
	}
	return p.resp, p.version, p.err
}

// NoteCycles tells the host what became of the session's recent cycles
// (Session.CycleNotes says it takes them). No answer depends on it, so the
// answer's identity is not checked.
func (c *Client) NoteCycles(ctx context.Context, s *Session, req *pb.CycleNotes) error {
	_, _, err := c.fastCall(ctx, s, "NoteCycles", &pb.FastRequest{Call: &pb.FastRequest_Notes{Notes: req}})
	if errors.Is(err, errFastNotSent) {
		_, err = c.grpc.NoteCycles(ctx, req)
	}
	countRPC("NoteCycles", err)
	return err
}

// Filter evaluates one node whose state the request carries.
func (c *Client) Filter(ctx context.Context, s *Session, req *pb.FilterRequest) (*pb.FilterResponse, error) {
	resp, err := c.grpc.Filter(ctx, req)
	countRPC("Filter", err)
	return resp, c.checkAnswer(ctx, s, err, resp.GetIdentity())
}

// checkAnswer ends the session when an answer comes from another host
// process than the one that opened it.
func (c *Client) checkAnswer(ctx context.Context, s *Session, err error, id *pb.HostIdentity) error {
	if err != nil || s.noteAnswer(id) {
		return err
	}
	c.lose(ctx, s, "an answer came from another host process")
	return errOtherHost
}

// fastCall makes the call over the session's fast path. An error wrapping
// errFastNotSent means the host did not get it: the session has no fast
// path, or its socket could not be reached (logged once per session,
// counted), and the caller makes the call over gRPC.
func (c *Client) fastCall(ctx context.Context, s *Session, method string, req *pb.FastRequest) (*pb.FastResponse, *uint64, error) {
	if s.fast == nil {
		return nil, nil, errFastNotSent
	}
	resp, version, err := s.fast.call(ctx, method, req)
	if errors.Is(err, errFastNotSent) {
		c.fastNotSent(ctx, s, method, err)
		return nil, nil, err
	}
	fastPathCalls.WithLabelValues(method).Inc()
	return resp, version, err
}

// fastNotSent counts a call the fast path could not send (it goes over
// gRPC), and logs the first of the session.
func (c *Client) fastNotSent(ctx context.Context, s *Session, method string, err error) {
	fastPathFallbacks.WithLabelValues(method).Inc()
	if s.fastFailed.CompareAndSwap(false, true) {
		klog.FromContext(ctx).Info("schedplug-host's fast-path socket could not be reached; calls go over gRPC, which is slower on a busy scheduler", "socket", s.fast.path, "err", err)
	}
}

func trailerVersion(md metadata.MD) *uint64 {
	vals := md.Get(tableVersionTrailer)
	if len(vals) == 0 {
		return nil
	}
	v, err := strconv.ParseUint(vals[len(vals)-1], 10, 64)
	if err != nil {
		return nil
	}
	return &v
}
