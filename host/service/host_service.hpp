// The schedplug.v1.Host gRPC service: sessions, the node table, and the
// filter/score chains behind Handshake, PreFilter, FilterNodes, Filter and
// PreScore; WatchSession streams (session_watch.hpp); the host's identity
// in every answer (host_identity.hpp). The handlers are in handshake.cpp,
// filter_calls.cpp (PreFilter, FilterNodes, Filter) and score_call.cpp;
// host_service.cpp has what every call shares (sessions, deadlines, the
// end-of-call log and metrics).
// docs/protocol.md describes how a scheduling cycle maps onto these calls.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "host/chain/deadline.hpp"
#include "host/chain/filter_chain.hpp"
#include "host/chain/score_chain.hpp"
#include "host/chain/thread_pool.hpp"
#include "host/explain/recent_cycles.hpp"
#include "host/loader/plugin_library.hpp"
#include "host/metrics/host_metrics.hpp"
#include "host/plugin/created_plugins.hpp"
#include "host/reload/plugin_generation.hpp"
#include "host/reload/reload_status.hpp"
#include "host/security/peer_identity.hpp"
#include "host/service/call_context.hpp"
#include "host/service/convert.hpp"
#include "host/service/host_identity.hpp"
#include "host/service/session_watch.hpp"
#include "host/service/sessions.hpp"
#include "host/shadow/shadow_runner.hpp"
#include "schedplug/v1/schedplug.grpc.pb.h"

namespace schedplug::host {

class CycleRecorder;

struct ServiceOptions {
  size_t max_sessions = 16;
  // A peer (peer_identity.hpp) holding this many sessions loses its own
  // least recently used one when it opens another.
  size_t max_sessions_per_peer = 8;
  std::chrono::seconds session_idle_timeout{3600};
  // What one session, and all sessions together, may hold (node tables
  // and current pods, as NodeTable::bytes() and estimated_bytes() account
  // them); a PreFilter whose delta would pass either is refused with
  // RESOURCE_EXHAUSTED. 0: no bound. docs/security.md gives the figures
  // behind the defaults.
  static constexpr size_t kDefaultMaxSessionMemory = size_t{1} << 30;
  static constexpr size_t kDefaultMaxTotalSessionMemory = size_t{2} << 30;
  size_t max_session_memory = kDefaultMaxSessionMemory;
  size_t max_total_session_memory = kDefaultMaxTotalSessionMemory;
  // Over max_total_session_memory, sessions of the caller's own peer idle
  // this long are dropped to make room (e.g. the one a restarted scheduler
  // left behind). Sooner, two live schedulers sharing an identity would
  // take turns evicting each other.
  std::chrono::seconds idle_before_memory_drop{30};
  // The host stops this share of a call's remaining time (at most
  // deadline_margin_max) before the caller's deadline, so that its answer
  // naming the slow plugin arrives before the caller gives up.
  double deadline_margin_fraction = 0.2;
  std::chrono::milliseconds deadline_margin_max{100};
  // The longest a WatchSession stream stays silent; the shim takes a host
  // silent for three of these for gone.
  std::chrono::milliseconds heartbeat{2000};
  // The record of recent cycles behind the Explain call.
  RecentCyclesOptions recent_cycles;
};

// What the service serves from, given at start-up (a reload swaps the
// plugins: HostService::swap_plugins).
struct ServiceContext {
  // The plugins at start-up (a reload swaps in others: swap_plugins). Its
  // `resolved` is the host's reading of config_file: the Handshake's
  // config-skew check compares the scheduler's settings with it.
  std::shared_ptr<const PluginGeneration> plugins;
  std::filesystem::path config_file;
  ThreadPool* pool = nullptr;
  HostMetrics* metrics = nullptr;
  // Names the peer of a Handshake (nullptr: every caller is one peer).
  const PeerIdentities* peers = nullptr;
  // The fast-path socket's file name, told to every Handshake ("": none).
  std::string fast_path_socket;
  // Runs the profiles' shadow candidates (nullptr: none run).
  ShadowRunner* shadow = nullptr;
  // Records every pod call (--record; nullptr: none).
  CycleRecorder* recorder = nullptr;
};

// WatchSession is a callback method (an open stream holds no thread); the
// others are synchronous.
class HostService final
    : public v1::Host::WithCallbackMethod_WatchSession<v1::Host::Service> {
 public:
  HostService(ServiceContext context, ServiceOptions options);

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

  // The Handshake of a caller `peer` names (peer_identity.hpp; "": none),
  // in-process (Handshake above, and `schedplug replay`).
  grpc::Status handshake(const v1::HandshakeRequest& request,
                         v1::HandshakeResponse& response,
                         const std::string& peer);
  // The PreFilter, FilterNodes and PreScore of a call from either
  // transport (gRPC's overrides above and the fast path call these).
  grpc::Status pre_filter(CallContext& context,
                          const v1::PreFilterRequest& request,
                          v1::PreFilterResponse& response);
  grpc::Status filter_nodes(CallContext& context,
                            const v1::FilterNodesRequest& request,
                            v1::PreFilterResponse& response);
  grpc::Status pre_score(CallContext& context,
                         const v1::PreScoreRequest& request,
                         v1::PreScoreResponse& response);
  // NoteCycles from either transport.
  grpc::Status note_cycles(CallContext& context, const v1::CycleNotes& request,
                           v1::CycleNotesResponse& response);
  // Filter in-process (`schedplug replay`).
  grpc::Status filter(CallContext& context, const v1::FilterRequest& request,
                      v1::FilterResponse& response);
  // Replaces a session's node table with `table` (a delta with `full` set:
  // a recording's checkpoint, for `schedplug replay`). Not OK: unknown
  // session, or a table the host refuses (as a PreFilter's delta).
  grpc::Status restore_table(const std::string& session_id,
                             const v1::NodeTableDelta& table);

  // PERMISSION_DENIED for a peer that may only read (--read-only-uid,
  // --read-only-group), naming `method`; OK for everyone else.
  grpc::Status refuse_read_only(const grpc::ServerContext& context,
                                const char* method) const;

  const SessionRegistry& sessions() const { return sessions_; }
  const RecentCycles& recent_cycles() const { return recent_; }
  // What hot reload did (the reloader writes it, Status reads it).
  ReloadStatus& reload_status() { return reload_status_; }
  // The identity of the answers the current plugin set computes.
  HostIdentity identity() const;
  // The plugin set calls that begin now run on.
  std::shared_ptr<const PluginGeneration> plugins() const;
  // Calls that begin from now on run on `next`; calls in flight and pod
  // cycles already begun finish on the set they began with. Every session
  // watch is told the new identity at once (its build changes), so the
  // shims stop trusting what the old set computed.
  void swap_plugins(std::shared_ptr<const PluginGeneration> next);
  // Ends every WatchSession stream (UNAVAILABLE): before the server's
  // Shutdown, which would otherwise wait for them.
  void stop_watches() { watches_.stop(); }
  size_t open_watches() const { return watches_.open_watches(); }

 private:
  using Clock = std::chrono::steady_clock;
  struct Call;

  // A pod's call of `method`, arrived now: its deadline and description.
  template <class Request>
  Call pod_call(const char* method, CallContext& context,
                const Request& request) const;
  // The chain's deadline for a call that arrived at `start`.
  Deadline deadline_for(const CallContext& context,
                        Clock::time_point start) const;
  // Finds the session or says why not (FAILED_PRECONDITION).
  grpc::Status find_session(const std::string& id,
                            std::shared_ptr<Session>& session);
  // The identity of the answers of the call's plugin set.
  HostIdentity identity_of(const Call& call) const;
  // In the call's plugin set (Call::plugins).
  grpc::Status find_profile(const Call& call, const std::string& scheduler_name,
                            const ProfilePlugins*& profile) const;
  // A call that continues `cycle` runs on the plugin set the cycle began
  // with: switches the call's set and `profile` to it when a reload came
  // in between.
  void continue_cycle(Call& call, const PodCycle& cycle,
                      const ProfilePlugins*& profile) const;
  // Both of the above, for a request that names a session and a profile.
  template <class Request>
  grpc::Status find_session_and_profile(const Call& call,
                                        const Request& request,
                                        std::shared_ptr<Session>& session,
                                        const ProfilePlugins*& profile);
  // Per plugin: the call's deadline, or earlier when the plugin's own
  // timeout (from `start`) ends first.
  std::vector<Deadline> plugin_deadlines(const Call& call,
                                         const std::vector<int>& timeouts_ms,
                                         Clock::time_point start) const;
  // Logs and counts the plugins that did not finish.
  void note_unfinished(Call& call, const std::vector<std::string>& reasons,
                       const std::vector<std::string>& plugins,
                       const ChainRuns& runs);
  // The session's call lock was not free before the call's deadline.
  grpc::Status busy_status(Call& call, const SessionCall& lock);
  // busy_status for a call that carried a node-table delta, which was not
  // applied: the trailer tells the shim the table's version.
  grpc::Status busy_with_delta(Call& call, CallContext& context,
                               const Session& session, const SessionCall& lock);
  // Applies a call's node-table delta to the session's table (the caller
  // holds the session's call lock). Not OK: the table did not change, and
  // the status says why (FAILED_PRECONDITION for another base version,
  // INVALID_ARGUMENT, RESOURCE_EXHAUSTED over the memory limit). Either way
  // the "schedplug-table-version" trailer carries the table's version.
  grpc::Status apply_delta(Call& call, CallContext& context, Session& session,
                           const TableDelta& delta, size_t pod_bytes);
  void record_runs(const ChainRuns& runs, std::string_view extension_point);
  // The begin_pod times of a cycle PreFilter began.
  void record_begins(const PodCycle& cycle);
  // The filter chain's answer as PreFilter and FilterNodes send it (the
  // profile's filters, skipped, unfinished, reasons and rejections), and
  // the slow-call log of its unfinished plugins.
  void fill_filter_response(Call& call, const ProfilePlugins& profile,
                            FilterOutcome& outcome,
                            v1::PreFilterResponse& response);
  // The score chain's answer, one entry per scorer (raw where the chain
  // left it raw; raw beside normalized too with `with_raw`), and the
  // slow-call log of its unfinished plugins; returns how many plugins
  // failed.
  size_t fill_scores(Call& call, const ProfilePlugins& profile,
                     ScoreOutcome& outcome, bool with_raw,
                     google::protobuf::RepeatedPtrField<v1::PluginScores>& out);
  // Scores ahead (PreFilterRequest.score_ahead): the profile's scorers, raw,
  // on the nodes of `views` (by slot) that `filtered` did not reject, with
  // the cycle's per-pod states, into response.scores_ahead; left out when
  // the profile has no scorer, a filter did not finish, or scorer shadows
  // run.
  void score_ahead(Call& call, const Session& session,
                   const ProfilePlugins& profile, const v1::Pod& pod_message,
                   const PodCycle* cycle, const schedplug_pod& pod,
                   const NodeTable& table,
                   std::span<const schedplug_node* const> views,
                   const FilterOutcome& filtered,
                   std::span<const uint8_t> applies,
                   v1::PreFilterResponse& response);
  grpc::Status finish(Call& call, grpc::Status status);
  // The record of recent cycles (explain_call.cpp). `filtered`: the node
  // evaluations the filters made; `starts`: the call begins the pod's
  // cycle.
  void record_filters(const Call& call, const Session& session,
                      const ProfilePlugins& profile, const v1::Pod& pod,
                      const NodeTable& table, const FilterOutcome& outcome,
                      size_t filtered, bool starts);
  // `ahead`: scores ahead, kept raw until the shim says which of the
  // nodes kube-scheduler scored (Placement.scored).
  void record_scores(const Call& call, const Session& session,
                     const ProfilePlugins& profile, const v1::Pod& pod,
                     const NodeTable& table,
                     std::span<const schedplug_node* const> nodes,
                     const ScoreOutcome& outcome, bool starts, bool ahead);
  // What became of earlier cycles (PreFilterRequest.placed,
  // PreScoreRequest.placed, CycleNotes.placed), into the record.
  template <class Request>
  void record_placements(const Request& request) {
    if (!recent_.enabled()) return;
    for (const v1::Placement& p : request.placed()) record_placement(p);
  }
  void record_placement(const v1::Placement& placement);
  void store(const Session& session, bool starts, CycleRecord part);
  // Shadow mode (shadow_calls.cpp): queues the profile's candidates on
  // what the live filters or scorers just answered, when it has any.
  void submit_shadow_filters(const Call& call, const ProfilePlugins& profile,
                             const v1::Pod& pod, const NodeTable& table,
                             std::span<const schedplug_node* const> views,
                             const FilterOutcome& outcome);
  // The profile's scorers have shadow candidates that run.
  bool shadows_scores(const ProfilePlugins& profile) const;
  void submit_shadow_scores(const Call& call, const ProfilePlugins& profile,
                            const v1::Pod& pod, const NodeTable& table,
                            std::span<const uint32_t> slots,
                            const ScoreOutcome& outcome);
  // A pod or node over FieldLimits: INVALID_ARGUMENT, counted.
  grpc::Status field_limit_status(const FieldLimitError& e);
  // A delta that would take the session past `limit`: RESOURCE_EXHAUSTED.
  grpc::Status memory_status(const Call& call, const Session& session,
                             const NodeTable& table, const TableDelta& delta,
                             size_t bytes_after, size_t pod_bytes,
                             const MemoryLimit& limit);

  ServiceContext context_;
  ServiceOptions options_;
  const uint64_t epoch_;
  mutable std::mutex plugins_mutex_;  // guards plugins_ (a pointer swap)
  std::shared_ptr<const PluginGeneration> plugins_;
  // The configuration as read at start-up, which kube-scheduler still has
  // after a reload changed plugin args (the Handshake's skew check).
  const std::vector<ResolvedProfile> startup_resolved_;
  SessionWatches watches_;  // before sessions_: its on_evict tells them
  SessionRegistry sessions_;
  RecentCycles recent_;
  ReloadStatus reload_status_;
};

}  // namespace schedplug::host
