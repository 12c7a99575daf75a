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
// calls) always goes over gRPC. Every answer's HostIdentity is checked
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
		fastPathFallbacks.WithLabelValues(method).Inc()
		if s.fastFailed.CompareAndSwap(false, true) {
			klog.FromContext(ctx).Info("schedplug-host's fast-path socket could not be reached; calls go over gRPC, which is slower on a busy scheduler", "socket", s.fast.path, "err", err)
		}
		return nil, nil, err
	}
	fastPathCalls.WithLabelValues(method).Inc()
	return resp, version, err
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
