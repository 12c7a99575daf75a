// The host's call path, whichever transport carried the call (gRPC,
// host/transport/grpc; the fast path, host/transport/fastpath; in-process,
// `schedplug replay`): the session, its call lock, the node-table delta
// and the pod cycle, once for every call (pod_call.hpp), then the call's
// own steps (the chains and the answer: handshake.cpp, filter_calls.cpp,
// score_call.cpp), telling the observers the app registered what happened
// (call_observer.hpp). docs/protocol.md describes how a scheduling cycle
// maps onto these calls.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "host/chain/deadline.hpp"
#include "host/chain/thread_pool.hpp"
#include "host/convert/convert.hpp"
#include "host/explain/recent_cycles.hpp"
#include "host/identity/host_identity.hpp"
#include "host/pipeline/call_context.hpp"
#include "host/pipeline/call_observer.hpp"
#include "host/reload/plugin_generation.hpp"
#include "host/session/sessions.hpp"
#include "schedplug/v1/schedplug.pb.h"

namespace schedplug::host {

// One of the extension points of the v1.6 hooks (hook_calls.cpp).
struct HookPoint;

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
  // The recent cycles behind the Explain call.
  RecentCyclesOptions recent_cycles;
};

// What the pipeline serves from, given at start-up.
struct PipelineContext {
  // The plugins at start-up (a reload swaps in others: swap_plugins). Its
  // `resolved` is the host's reading of config_file: the Handshake's
  // config-skew check compares the scheduler's settings with it.
  std::shared_ptr<const PluginGeneration> plugins;
  std::filesystem::path config_file;
  ThreadPool* pool = nullptr;
  // The fast-path socket's file name, told to every Handshake ("": none).
  std::string fast_path_socket;
};

class CallPipeline {
 public:
  CallPipeline(PipelineContext context, const ServiceOptions& options);

  // Observers are told in the order they were added; add them all before
  // the first call (they are not guarded), and keep them alive as long as
  // the pipeline.
  void add_observer(CallObserver& observer);

  // A Handshake of the caller `peer` names (peer_identity.hpp; "": none).
  grpc::Status handshake(const v1::HandshakeRequest& request,
                         v1::HandshakeResponse& response,
                         const std::string& peer);
  grpc::Status pre_filter(CallContext& context,
                          const v1::PreFilterRequest& request,
                          v1::PreFilterResponse& response);
  grpc::Status filter_nodes(CallContext& context,
                            const v1::FilterNodesRequest& request,
                            v1::PreFilterResponse& response);
  grpc::Status filter(CallContext& context, const v1::FilterRequest& request,
                      v1::FilterResponse& response);
  grpc::Status pre_score(CallContext& context,
                         const v1::PreScoreRequest& request,
                         v1::PreScoreResponse& response);
  grpc::Status note_cycles(CallContext& context, const v1::CycleNotes& request,
                           v1::CycleNotesResponse& response);
  // The v1.6 hooks (hook_calls.cpp): the request's plugins of the profile,
  // in its order.
  grpc::Status reserve(CallContext& context,
                       const v1::PodAtNodeRequest& request,
                       v1::ReserveResponse& response);
  grpc::Status unreserve(CallContext& context,
                         const v1::PodAtNodeRequest& request,
                         v1::UnreserveResponse& response);
  grpc::Status permit(CallContext& context, const v1::PodAtNodeRequest& request,
                      v1::PermitResponse& response);
  grpc::Status pre_bind(CallContext& context,
                        const v1::PodAtNodeRequest& request,
                        v1::PreBindResponse& response);
  grpc::Status pre_enqueue(CallContext& context,
                           const v1::PreEnqueueRequest& request,
                           v1::PreEnqueueResponse& response);
  // Where the plugins' decisions about pods their permit() made wait go
  // (the session watches): every instance served now and after a reload
  // is connected to it.
  void set_waiting_pod_sink(std::shared_ptr<WaitingPodSink> sink);
  // A call that reaches no session (Explain, Status): `answer` fills the
  // response and may set the debug log's summary; the observers see the
  // call end as any other.
  grpc::Status answer(
      const char* method, CallContext& context, std::string what,
      const std::function<grpc::Status(std::string& summary)>& answer);
  // Replaces a session's node table with `table` (a delta with `full` set:
  // a recording's checkpoint, for `schedplug replay`). Not OK: unknown
  // session, or a table the host refuses (as a PreFilter's delta).
  grpc::Status restore_table(const std::string& session_id,
                             const v1::NodeTableDelta& table);

  SessionRegistry& sessions() { return sessions_; }
  const SessionRegistry& sessions() const { return sessions_; }
  // The identity of the answers the current plugin set computes.
  HostIdentity identity() const;
  // The plugin set calls that begin now run on.
  std::shared_ptr<const PluginGeneration> plugins() const;
  // Calls that begin from now on run on `next`; calls in flight and pod
  // cycles already begun finish on the set they began with. The observers
  // are told at once (the session watches tell the shims, which stop
  // trusting what the old set computed).
  void swap_plugins(std::shared_ptr<const PluginGeneration> next);

 private:
  using Clock = std::chrono::steady_clock;
  struct Call;
  struct PodCallPlan;
  struct PodCallState;
  struct HookCallState;

  // The skeleton of the v1.6 hooks' calls: the session and profile, the
  // pod, the request's plugins checked, the node copied out of the table;
  // then `steps`, then finish().
  template <class Request, class Response, class Steps>
  grpc::Status run_hook_call(const HookPoint& point, CallContext& context,
                             const Request& request, Response& response,
                             Steps&& steps);
  // The pod waits on none of the profile's plugins any more.
  void forget_waiting(const ProfilePlugins& profile,
                      const std::string& pod_uid) const;
  // Connects every instance of `set` to the waiting-pod sink.
  void connect_waiting(const PluginGeneration& set) const;

  // The skeleton every pod call shares (pod_call.hpp): the session and
  // profile, the request's pod (and delta) decoded, the session's call
  // lock, the delta or the table version, what became of earlier cycles,
  // and the pod cycle; then `steps`, then finish().
  template <class Request, class Response, class Check, class Steps>
  grpc::Status run_pod_call(const PodCallPlan& plan, CallContext& context,
                            const Request& request, Response& response,
                            Check&& check, Steps&& steps);
  // A call of `method`, arrived now: its plugin set and deadline.
  Call begin_call(const char* method, CallContext& context) const;
  // The chain's deadline for a call that arrived at `start`.
  Deadline deadline_for(const CallContext& context,
                        Clock::time_point start) const;
  // Finds the session or says why not (FAILED_PRECONDITION).
  grpc::Status find_session(const std::string& id,
                            std::shared_ptr<Session>& session);
  // In the call's plugin set (Call::plugins).
  grpc::Status find_profile(const Call& call, const std::string& scheduler_name,
                            const ProfilePlugins*& profile) const;
  // Both, in that order.
  grpc::Status find_session_and_profile(const Call& call,
                                        const std::string& session_id,
                                        const std::string& scheduler_name,
                                        std::shared_ptr<Session>& session,
                                        const ProfilePlugins*& profile);
  HostIdentity identity_of(const Call& call) const;
  // A call that continues `cycle` runs on the plugin set the cycle began
  // with: switches the call's set and `profile` to it when a reload came
  // in between.
  void continue_cycle(Call& call, const PodCycle& cycle,
                      const ProfilePlugins*& profile) const;
  // Per plugin: the call's deadline, or earlier when the plugin's own
  // timeout (from `start`) ends first.
  std::vector<Deadline> plugin_deadlines(const Call& call,
                                         const std::vector<int>& timeouts_ms,
                                         Clock::time_point start) const;
  // Logs the plugins that did not finish; the observers count them.
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
  // The filter chain's answer as PreFilter and FilterNodes send it (the
  // profile's filters, skipped, unfinished, reasons and rejections), and
  // the slow-call log of its unfinished plugins.
  void fill_filter_response(Call& call, const ProfilePlugins& profile,
                            FilterOutcome& outcome,
                            v1::PreFilterResponse& response);
  // The filter chain on `views` of the call's table, told to the
  // observers; PreFilter and FilterNodes.
  FilterOutcome run_filter_step(Call& call, const PodCallState& state,
                                std::span<const schedplug_node* const> views,
                                std::span<const uint8_t> applies,
                                bool begins_cycle);
  // The filter chain on `views`, not told to the observers.
  FilterOutcome run_filter_chain(Call& call, const PodCallState& state,
                                 std::span<const schedplug_node* const> views,
                                 std::span<const uint8_t> applies);
  // What the filter chain did, told to the observers.
  void tell_filters_ran(Call& call, const PodCallState& state,
                        std::span<const schedplug_node* const> views,
                        const FilterOutcome& outcome, bool begins_cycle);
  // PreFilter with a feasible_target: the filter chain on `evaluate`'s
  // walk in steps until `target` nodes passed (FilterWalk), told to the
  // observers once.
  struct FilterWalk {
    FilterOutcome outcome;
    // The views of the slots evaluated (a buffer of the calling thread).
    std::span<const schedplug_node* const> views;
    // Those slots as [first, end) pairs in walk order.
    std::vector<uint32_t> evaluated;
  };
  FilterWalk run_filter_walk(Call& call, const PodCallState& state,
                             std::span<const uint32_t> evaluate, size_t target);
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
  // the profile has no scorer, a filter did not finish, or an observer
  // needs normalized scores.
  void score_ahead(Call& call, const PodCallState& state,
                   std::span<const schedplug_node* const> views,
                   const FilterOutcome& filtered,
                   std::span<const uint8_t> applies,
                   v1::PreFilterResponse& response);
  // Some observer needs the profile's normalized scores.
  bool needs_normalized_scores(const ProfilePlugins& profile) const;
  // A pod or node over FieldLimits: INVALID_ARGUMENT, counted.
  grpc::Status field_limit_status(const FieldLimitError& e);
  // A delta that would take the session past `limit`: RESOURCE_EXHAUSTED.
  grpc::Status memory_status(const Call& call, const Session& session,
                             const NodeTable& table, const TableDelta& delta,
                             size_t bytes_after, size_t pod_bytes,
                             const MemoryLimit& limit);
  // Ends the call: tells the observers, logs it; returns `status`.
  grpc::Status finish(Call& call, grpc::Status status);

  // Each observer's `what` with `args`, in order.
  template <class F, class... Args>
  void tell(F what, const Args&... args) {
    for (CallObserver* o : observers_) (o->*what)(args...);
  }

  PipelineContext context_;
  const ServiceOptions options_;
  const uint64_t epoch_;
  mutable std::mutex plugins_mutex_;  // guards plugins_ (a pointer swap)
  std::shared_ptr<const PluginGeneration> plugins_;
  // The configuration as read at start-up, which kube-scheduler still has
  // after a reload changed plugin args (the Handshake's skew check).
  const std::vector<ResolvedProfile> startup_resolved_;
  std::vector<CallObserver*> observers_;
  bool keeps_raw_scores_ = false;                 // some observer does
  std::shared_ptr<WaitingPodSink> waiting_sink_;  // guarded by plugins_mutex_
  SessionRegistry sessions_;
};

}  // namespace schedplug::host
