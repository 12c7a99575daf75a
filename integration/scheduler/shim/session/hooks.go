package session

import (
	"context"

	"google.golang.org/grpc"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// The calls of the ABI v1.6 hooks (Reserve, Unreserve, Permit, PreBind,
// PreEnqueue). They carry no node-table delta and go over gRPC only; the
// caller bounds each with its deadline, and every answer's HostIdentity is
// checked against the session's, as for the cycle's calls.

// Reserve runs the reserve hook of the request's plugins.
func (c *Client) Reserve(ctx context.Context, s *Session, req *pb.PodAtNodeRequest) (*pb.ReserveResponse, error) {
	return hookRPC(ctx, c, s, "Reserve", c.grpc.Reserve, req)
}

// Unreserve runs the unreserve hook of the request's plugins.
func (c *Client) Unreserve(ctx context.Context, s *Session, req *pb.PodAtNodeRequest) (*pb.UnreserveResponse, error) {
	return hookRPC(ctx, c, s, "Unreserve", c.grpc.Unreserve, req)
}

// Permit runs the permit hook of the request's plugins.
func (c *Client) Permit(ctx context.Context, s *Session, req *pb.PodAtNodeRequest) (*pb.PermitResponse, error) {
	return hookRPC(ctx, c, s, "Permit", c.grpc.Permit, req)
}

// PreBind runs the pre_bind hook of the request's plugins.
func (c *Client) PreBind(ctx context.Context, s *Session, req *pb.PodAtNodeRequest) (*pb.PreBindResponse, error) {
	return hookRPC(ctx, c, s, "PreBind", c.grpc.PreBind, req)
}

// PreEnqueue runs the pre_enqueue hook of the request's plugins.
func (c *Client) PreEnqueue(ctx context.Context, s *Session, req *pb.PreEnqueueRequest) (*pb.PreEnqueueResponse, error) {
	return hookRPC(ctx, c, s, "PreEnqueue", c.grpc.PreEnqueue, req)
}

// hookRPC makes one hook call, counts it and checks the answer's identity.
func hookRPC[Q any, R interface{ GetIdentity() *pb.HostIdentity }](ctx context.Context, c *Client, s *Session, method string,
	call func(context.Context, Q, ...grpc.CallOption) (R, error), req Q) (R, error) {
	resp, err := call(ctx, req)
	countRPC(method, err)
	return resp, c.checkAnswer(ctx, s, err, resp.GetIdentity())
}
