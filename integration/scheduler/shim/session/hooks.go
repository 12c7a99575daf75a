package session

import (
	"context"
	"errors"

	"google.golang.org/grpc"
	"k8s.io/klog/v2"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// The calls of the ABI v1.6 hooks (Reserve, Unreserve, Permit, PreBind,
// PreEnqueue). They carry no node-table delta; the caller bounds each with
// its deadline, and every answer's HostIdentity is checked against the
// session's, as for the cycle's calls. Reserve, Unreserve and Permit run
// inside kube-scheduler's scheduling cycle, one pod at a time, so they go
// over the fast path when the host takes them there (Session.FastHooks)
// and fall back to gRPC as the cycle's calls do. PreBind runs on the
// binding goroutines and PreEnqueue in the queue, beside the cycles: they
// stay on gRPC.

// Reserve runs the reserve hook of the request's plugins.
func (c *Client) Reserve(ctx context.Context, s *Session, req *pb.PodAtNodeRequest) (*pb.ReserveResponse, error) {
	return fastHookRPC(ctx, c, s, "Reserve", c.grpc.Reserve, req,
		&pb.FastRequest{Call: &pb.FastRequest_Reserve{Reserve: req}}, (*pb.FastResponse).GetReserve)
}

// Unreserve runs the unreserve hook of the request's plugins.
func (c *Client) Unreserve(ctx context.Context, s *Session, req *pb.PodAtNodeRequest) (*pb.UnreserveResponse, error) {
	return fastHookRPC(ctx, c, s, "Unreserve", c.grpc.Unreserve, req,
		&pb.FastRequest{Call: &pb.FastRequest_Unreserve{Unreserve: req}}, (*pb.FastResponse).GetUnreserve)
}

// Permit runs the permit hook of the request's plugins.
func (c *Client) Permit(ctx context.Context, s *Session, req *pb.PodAtNodeRequest) (*pb.PermitResponse, error) {
	return fastHookRPC(ctx, c, s, "Permit", c.grpc.Permit, req,
		&pb.FastRequest{Call: &pb.FastRequest_Permit{Permit: req}}, (*pb.FastResponse).GetPermit)
}

// PreBind runs the pre_bind hook of the request's plugins.
func (c *Client) PreBind(ctx context.Context, s *Session, req *pb.PodAtNodeRequest) (*pb.PreBindResponse, error) {
	return hookRPC(ctx, c, s, "PreBind", c.grpc.PreBind, req)
}

// PreEnqueue runs the pre_enqueue hook of the request's plugins.
func (c *Client) PreEnqueue(ctx context.Context, s *Session, req *pb.PreEnqueueRequest) (*pb.PreEnqueueResponse, error) {
	return hookRPC(ctx, c, s, "PreEnqueue", c.grpc.PreEnqueue, req)
}

// hookRPC makes one hook call over gRPC, counts it and checks the answer's
// identity.
func hookRPC[Q any, R interface{ GetIdentity() *pb.HostIdentity }](ctx context.Context, c *Client, s *Session, method string,
	call func(context.Context, Q, ...grpc.CallOption) (R, error), req Q) (R, error) {
	resp, err := call(ctx, req)
	countRPC(method, err)
	return resp, c.checkAnswer(ctx, s, err, resp.GetIdentity())
}

// fastHookRPC makes one hook call over the fast path when the host takes
// it there, else over gRPC. A call the host did not get (not sent, or the
// connection closed before any answer: fastUnanswered) goes over gRPC, so
// that an Unreserve is not lost to a connection the host dropped. A
// connection that fails after the host may have run the call (no answer
// within the deadline, a broken answer) is the call's error, as the same
// failure over gRPC is: the hook is not run twice.
func fastHookRPC[R interface{ GetIdentity() *pb.HostIdentity }](ctx context.Context, c *Client, s *Session, method string,
	call func(context.Context, *pb.PodAtNodeRequest, ...grpc.CallOption) (R, error), req *pb.PodAtNodeRequest,
	fast *pb.FastRequest, answer func(*pb.FastResponse) R) (R, error) {
	if !s.FastHooks {
		return hookRPC(ctx, c, s, method, call, req)
	}
	fresp, _, err := c.fastCall(ctx, s, method, fast)
	if errors.Is(err, errFastNotSent) {
		return hookRPC(ctx, c, s, method, call, req)
	}
	if unanswered := (fastUnanswered{}); errors.As(err, &unanswered) {
		fastPathFallbacks.WithLabelValues(method).Inc()
		klog.FromContext(ctx).Info("schedplug-host closed the fast-path connection without answering; the call goes over gRPC", "method", method, "err", err)
		return hookRPC(ctx, c, s, method, call, req)
	}
	resp := answer(fresp)
	countRPC(method, err)
	return resp, c.checkAnswer(ctx, s, err, resp.GetIdentity())
}
