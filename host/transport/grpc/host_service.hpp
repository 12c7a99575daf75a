// The schedplug.v1.Host gRPC service: each method refuses read-only peers
// where it must, then hands the decoded request to the call pipeline
// (host/pipeline/call_pipeline.hpp), which answers it. Besides: the
// WatchSession streams (session_watch.hpp), Explain (from the
// recent cycles) and Status (explain_status.cpp).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <grpcpp/grpcpp.h>

#include "host/explain/recent_cycles.hpp"
#include "host/metrics/host_metrics.hpp"
#include "host/pipeline/call_observer.hpp"
#include "host/pipeline/call_pipeline.hpp"
#include "host/reload/reload_status.hpp"
#include "host/security/peer_identity.hpp"
#include "host/session/session_watch.hpp"
#include "schedplug/v1/schedplug.grpc.pb.h"

namespace schedplug::host {

// What the gRPC service answers from besides the pipeline.
struct GrpcServiceContext {
  // Names the peer of a Handshake (nullptr: every caller is one peer).
  const PeerIdentities* peers = nullptr;
  HostMetrics* metrics = nullptr;               // counts read-only refusals
  const RecentCycles* recent_cycles = nullptr;  // Explain's
  const ReloadStatus* reload_status = nullptr;  // Status'
  std::chrono::milliseconds heartbeat{2000};    // of WatchSession streams
};

// WatchSession is a callback method (an open stream holds no thread); the
// others are synchronous.
class HostService final
    : public v1::Host::WithCallbackMethod_WatchSession<v1::Host::Service> {
 public:
  // Registers its session watches as an observer of `pipeline`.
  HostService(CallPipeline& pipeline, GrpcServiceContext context);

  grpc::Status Handshake(grpc::ServerContext* context,
                         const v1::HandshakeRequest* request,
                         v1::HandshakeResponse* response) override;
  grpc::Status PreFilter(grpc::ServerContext* context,
                         const v1::PreFilterRequest* request,
                         v1::PreFilterResponse* response) override;
  grpc::Status FilterNodes(grpc::ServerContext* context,
                           const v1::FilterNodesRequest* request,
                           v1::PreFilterResponse* response) override;
  grpc::Status Filter(grpc::ServerContext* context,
                      const v1::FilterRequest* request,
                      v1::FilterResponse* response) override;
  grpc::Status PreScore(grpc::ServerContext* context,
                        const v1::PreScoreRequest* request,
                        v1::PreScoreResponse* response) override;
  grpc::ServerWriteReactor<v1::SessionEvent>* WatchSession(
      grpc::CallbackServerContext* context,
      const v1::WatchSessionRequest* request) override;
  grpc::Status Explain(grpc::ServerContext* context,
                       const v1::ExplainRequest* request,
                       v1::ExplainResponse* response) override;
  grpc::Status NoteCycles(grpc::ServerContext* context,
                          const v1::CycleNotes* request,
                          v1::CycleNotesResponse* response) override;
  grpc::Status Status(grpc::ServerContext* context,
                      const v1::StatusRequest* request,
                      v1::StatusResponse* response) override;
  grpc::Status Reserve(grpc::ServerContext* context,
                       const v1::PodAtNodeRequest* request,
                       v1::ReserveResponse* response) override;
  grpc::Status Unreserve(grpc::ServerContext* context,
                         const v1::PodAtNodeRequest* request,
                         v1::UnreserveResponse* response) override;
  grpc::Status Permit(grpc::ServerContext* context,
                      const v1::PodAtNodeRequest* request,
                      v1::PermitResponse* response) override;
  grpc::Status PreBind(grpc::ServerContext* context,
                       const v1::PodAtNodeRequest* request,
                       v1::PreBindResponse* response) override;
  grpc::Status PreEnqueue(grpc::ServerContext* context,
                          const v1::PreEnqueueRequest* request,
                          v1::PreEnqueueResponse* response) override;
  ~HostService() override;

  // Ends every WatchSession stream (UNAVAILABLE): before the server's
  // Shutdown, which would otherwise wait for them.
  void stop_watches() { watches_.stop(); }
  size_t open_watches() const { return watches_.open_watches(); }

 private:
  // Tells the watches what the pipeline did to sessions and plugins.
  class WatchObserver final : public CallObserver {
   public:
    explicit WatchObserver(SessionWatches& watches) : watches_(watches) {}
    void plugins_swapped(const PluginGeneration&,
                         const HostIdentity& identity) override {
      watches_.identity_changed(identity);
    }
    void session_closed(const Session&, const Session::Released&) override {
      watches_.sessions_ended();
    }

   private:
    SessionWatches& watches_;
  };

  // The plugins' decisions about waiting pods, onto the session watches;
  // detached when the service goes (an instance may outlive it).
  class WaitingPodWatches final : public WaitingPodSink {
   public:
    explicit WaitingPodWatches(SessionWatches& watches) : watches_(&watches) {}
    bool decided(std::string_view profile, std::string_view plugin,
                 std::string_view pod_uid, bool allow,
                 std::string_view reason) override;
    void detach();

   private:
    std::mutex mutex_;
    SessionWatches* watches_;  // guarded by mutex_; nullptr once detached
  };

  // PERMISSION_DENIED for a peer that may only read (--read-only-uid,
  // --read-only-group), naming `method`; OK for everyone else.
  grpc::Status refuse_read_only(const grpc::ServerContext& context,
                                const char* method) const;
  // A pipeline call from `context`, unless its peer may only read.
  template <class Request, class Response>
  grpc::Status serve(const char* method, grpc::ServerContext* context,
                     const Request& request, Response& response,
                     grpc::Status (CallPipeline::*call)(CallContext&,
                                                        const Request&,
                                                        Response&));

  CallPipeline& pipeline_;
  GrpcServiceContext context_;
  SessionWatches watches_;
  WatchObserver watch_observer_{watches_};
  std::shared_ptr<WaitingPodWatches> waiting_pods_ =
      std::make_shared<WaitingPodWatches>(watches_);
};

}  // namespace schedplug::host
