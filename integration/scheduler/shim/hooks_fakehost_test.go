package shim

import (
	"context"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// The fake host's ABI v1.6 hooks, steered by pod labels:
//   - "reservefail-<Plugin>": its reserve answers UNSCHEDULABLE "no devices
//     left on <node>".
//   - "wait-<Plugin>"=ms: its permit answers WAIT with that timeout;
//     "permitreject-<Plugin>": UNSCHEDULABLE "quota exhausted".
//   - "prebindfail-<Plugin>": its pre_bind answers ERROR; otherwise each
//     plugin sets the annotation "<plugin>.example/node"=<node> and the
//     label "<plugin>.example/bound"="yes", unless the pod has "nopatch".
//   - "gate-<Plugin>": its pre_enqueue keeps the pod out with "gated by
//     <Plugin>".

// hookReq is one hook call as the fake host saw it.
type hookReq struct {
	method  string
	plugins []string
}

// hookBegin counts a hook call and checks its session, as the real host
// does. Callers hold nothing; the release unlocks h.mu.
func (h *fakeHost) hookBegin(method, sessionID string, plugins []string) (release func(), err error) {
	release = h.begin(method)
	h.hookReqs = append(h.hookReqs, hookReq{method, append([]string(nil), plugins...)})
	if !h.sessions[sessionID] {
		return release, status.Errorf(codes.FailedPrecondition, "unknown session %q", sessionID)
	}
	return release, nil
}

func (h *fakeHost) hookCalls() []hookReq {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookReq(nil), h.hookReqs...)
}

// decide queues a waiting-pod decision for the watch streams.
func (h *fakeHost) decide(d *pb.WaitingPodDecision) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.decisions = append(h.decisions, d)
	h.kickWatches()
}

func (h *fakeHost) Reserve(_ context.Context, req *pb.PodAtNodeRequest) (*pb.ReserveResponse, error) {
	release, err := h.hookBegin("Reserve", req.SessionId, req.Plugins)
	defer release()
	if err != nil {
		return nil, err
	}
	resp := &pb.ReserveResponse{Identity: h.identity()}
	for _, p := range req.Plugins {
		if _, ok := label(req.Pod.Labels, "reservefail-"+p); ok {
			resp.Failed = &pb.HookStatus{Plugin: p, Code: int32(pb.Code_CODE_UNSCHEDULABLE), Reason: "no devices left on " + req.NodeName}
			break
		}
	}
	return resp, nil
}

func (h *fakeHost) Unreserve(_ context.Context, req *pb.PodAtNodeRequest) (*pb.UnreserveResponse, error) {
	release, err := h.hookBegin("Unreserve", req.SessionId, req.Plugins)
	defer release()
	if err != nil {
		return nil, err
	}
	return &pb.UnreserveResponse{Identity: h.identity()}, nil
}

func (h *fakeHost) Permit(_ context.Context, req *pb.PodAtNodeRequest) (*pb.PermitResponse, error) {
	release, err := h.hookBegin("Permit", req.SessionId, req.Plugins)
	defer release()
	if err != nil {
		return nil, err
	}
	resp := &pb.PermitResponse{Identity: h.identity()}
	for _, p := range req.Plugins {
		if _, ok := label(req.Pod.Labels, "permitreject-"+p); ok {
			resp.Failed = &pb.HookStatus{Plugin: p, Code: int32(pb.Code_CODE_UNSCHEDULABLE), Reason: "quota exhausted"}
			break
		}
		if v, ok := label(req.Pod.Labels, "wait-"+p); ok {
			ms, _ := strconv.ParseUint(v, 10, 64)
			resp.Waits = append(resp.Waits, &pb.PermitWait{Plugin: p, TimeoutMs: ms})
		}
	}
	return resp, nil
}

func (h *fakeHost) PreBind(_ context.Context, req *pb.PodAtNodeRequest) (*pb.PreBindResponse, error) {
	release, err := h.hookBegin("PreBind", req.SessionId, req.Plugins)
	defer release()
	if err != nil {
		return nil, err
	}
	resp := &pb.PreBindResponse{Identity: h.identity()}
	for _, p := range req.Plugins {
		if _, ok := label(req.Pod.Labels, "prebindfail-"+p); ok {
			return &pb.PreBindResponse{Identity: h.identity(), Failed: &pb.HookStatus{Plugin: p, Code: int32(pb.Code_CODE_ERROR), Reason: "holds no reservation for the pod"}}, nil
		}
		if _, ok := label(req.Pod.Labels, "nopatch"); ok {
			continue
		}
		resp.Annotations = append(resp.Annotations, &pb.KeyValue{Key: p + ".example/node", Value: req.NodeName})
		resp.AnnotationsSetBy = append(resp.AnnotationsSetBy, p)
		resp.Labels = append(resp.Labels, &pb.KeyValue{Key: p + ".example/bound", Value: "yes"})
		resp.LabelsSetBy = append(resp.LabelsSetBy, p)
	}
	return resp, nil
}

func (h *fakeHost) PreEnqueue(_ context.Context, req *pb.PreEnqueueRequest) (*pb.PreEnqueueResponse, error) {
	release, err := h.hookBegin("PreEnqueue", req.SessionId, req.Plugins)
	defer release()
	if err != nil {
		return nil, err
	}
	resp := &pb.PreEnqueueResponse{Identity: h.identity()}
	for _, p := range req.Plugins {
		if _, ok := label(req.Pod.Labels, "gate-"+p); ok {
			resp.Gated = &pb.HookStatus{Plugin: p, Code: int32(pb.Code_CODE_UNSCHEDULABLE_AND_UNRESOLVABLE), Reason: "gated by " + p}
			break
		}
	}
	return resp, nil
}
