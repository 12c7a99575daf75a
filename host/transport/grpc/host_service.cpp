#include "host/transport/grpc/host_service.hpp"

#include <fmt/format.h>

namespace schedplug::host {

HostService::HostService(CallPipeline& pipeline, GrpcServiceContext context)
    : pipeline_(pipeline),
      context_(context),
      watches_(pipeline.identity(), context.heartbeat) {
  pipeline_.add_observer(watch_observer_);
  pipeline_.set_waiting_pod_sink(waiting_pods_);
}

HostService::~HostService() { waiting_pods_->detach(); }

bool HostService::WaitingPodWatches::decided(std::string_view profile,
                                             std::string_view plugin,
                                             std::string_view pod_uid,
                                             bool allow,
                                             std::string_view reason) {
  v1::WaitingPodDecision decision;
  decision.set_scheduler_name(std::string(profile));
  decision.set_plugin(std::string(plugin));
  decision.set_pod_uid(std::string(pod_uid));
  decision.set_allow(allow);
  decision.set_reason(std::string(reason));
  std::lock_guard lock(mutex_);
  return watches_ != nullptr && watches_->waiting_pod_decided(decision) > 0;
}

void HostService::WaitingPodWatches::detach() {
  std::lock_guard lock(mutex_);
  watches_ = nullptr;
}

grpc::Status HostService::refuse_read_only(const grpc::ServerContext& context,
                                           const char* method) const {
  if (context_.peers == nullptr || !context_.peers->read_only(context))
    return grpc::Status::OK;
  if (context_.metrics) context_.metrics->request_refused("read_only");
  return {grpc::StatusCode::PERMISSION_DENIED,
          fmt::format("{}: {} may only read from this host (--read-only-uid, "
                      "--read-only-group): Explain, Status and the health "
                      "check; a scheduler needs --allow-uid",
                      method, context_.peers->identify(context))};
}

template <class Request, class Response>
grpc::Status HostService::serve(const char* method,
                                grpc::ServerContext* context,
                                const Request& request, Response& response,
                                grpc::Status (CallPipeline::*call)(
                                    CallContext&, const Request&, Response&)) {
  if (grpc::Status s = refuse_read_only(*context, method); !s.ok()) return s;
  GrpcCallContext call_context(context);
  return (pipeline_.*call)(call_context, request, response);
}

grpc::Status HostService::Handshake(grpc::ServerContext* context,
                                    const v1::HandshakeRequest* request,
                                    v1::HandshakeResponse* response) {
  if (grpc::Status s = refuse_read_only(*context, "Handshake"); !s.ok())
    return s;
  const std::string peer = context_.peers != nullptr
                               ? context_.peers->identify(*context)
                               : std::string();
  return pipeline_.handshake(*request, *response, peer);
}

grpc::Status HostService::PreFilter(grpc::ServerContext* context,
                                    const v1::PreFilterRequest* request,
                                    v1::PreFilterResponse* response) {
  return serve("PreFilter", context, *request, *response,
               &CallPipeline::pre_filter);
}

grpc::Status HostService::FilterNodes(grpc::ServerContext* context,
                                      const v1::FilterNodesRequest* request,
                                      v1::PreFilterResponse* response) {
  return serve("FilterNodes", context, *request, *response,
               &CallPipeline::filter_nodes);
}

grpc::Status HostService::Filter(grpc::ServerContext* context,
                                 const v1::FilterRequest* request,
                                 v1::FilterResponse* response) {
  return serve("Filter", context, *request, *response, &CallPipeline::filter);
}

grpc::Status HostService::PreScore(grpc::ServerContext* context,
                                   const v1::PreScoreRequest* request,
                                   v1::PreScoreResponse* response) {
  return serve("PreScore", context, *request, *response,
               &CallPipeline::pre_score);
}

grpc::Status HostService::NoteCycles(grpc::ServerContext* context,
                                     const v1::CycleNotes* request,
                                     v1::CycleNotesResponse* response) {
  return serve("NoteCycles", context, *request, *response,
               &CallPipeline::note_cycles);
}

grpc::Status HostService::Reserve(grpc::ServerContext* context,
                                  const v1::PodAtNodeRequest* request,
                                  v1::ReserveResponse* response) {
  return serve("Reserve", context, *request, *response, &CallPipeline::reserve);
}

grpc::Status HostService::Unreserve(grpc::ServerContext* context,
                                    const v1::PodAtNodeRequest* request,
                                    v1::UnreserveResponse* response) {
  return serve("Unreserve", context, *request, *response,
               &CallPipeline::unreserve);
}

grpc::Status HostService::Permit(grpc::ServerContext* context,
                                 const v1::PodAtNodeRequest* request,
                                 v1::PermitResponse* response) {
  return serve("Permit", context, *request, *response, &CallPipeline::permit);
}

grpc::Status HostService::PreBind(grpc::ServerContext* context,
                                  const v1::PodAtNodeRequest* request,
                                  v1::PreBindResponse* response) {
  return serve("PreBind", context, *request, *response,
               &CallPipeline::pre_bind);
}

grpc::Status HostService::PreEnqueue(grpc::ServerContext* context,
                                     const v1::PreEnqueueRequest* request,
                                     v1::PreEnqueueResponse* response) {
  return serve("PreEnqueue", context, *request, *response,
               &CallPipeline::pre_enqueue);
}

grpc::ServerWriteReactor<v1::SessionEvent>* HostService::WatchSession(
    grpc::CallbackServerContext*, const v1::WatchSessionRequest* request) {
  const std::string& id = request->session_id();
  return watches_.open(pipeline_.sessions().find(id),
                       id.size() <= 128 ? id : id.substr(0, 128) + "...");
}

}  // namespace schedplug::host
