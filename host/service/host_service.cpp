#include "host/service/host_service.hpp"

#include <algorithm>
#include <string>

#include <spdlog/spdlog.h>

#include "host/service/call_support.hpp"

namespace schedplug::host {

using namespace call_support;

namespace {

// What a recording says about the plugin set that answers from now on.
v1::RecordedPluginSet recorded_plugin_set(const PluginGeneration& set,
                                          const HostIdentity& identity) {
  v1::RecordedPluginSet out;
  out.set_generation(set.generation);
  identity.to_proto(*out.mutable_identity());
  out.set_config(set.config_bytes);
  for (v1::PluginInfo& info : plugin_infos(set))
    *out.add_plugins() = std::move(info);
  return out;
}

}  // namespace

HostService::HostService(ServiceContext context, ServiceOptions options)
    : context_(std::move(context)),
      options_(options),
      epoch_(new_host_epoch()),
      plugins_(context_.plugins),
      startup_resolved_(plugins_->resolved),
      watches_({.epoch = epoch_, .build = plugins_->build}, options.heartbeat),
      sessions_({.max_sessions = options.max_sessions,
                 .max_sessions_per_peer = options.max_sessions_per_peer,
                 .idle_timeout = options.session_idle_timeout,
                 .max_session_memory = options.max_session_memory,
                 .max_total_session_memory = options.max_total_session_memory,
                 .idle_before_memory_drop = options.idle_before_memory_drop},
                [this](Session& session, const Session::Released& released) {
                  watches_.sessions_ended();
                  if (context_.recorder)
                    context_.recorder->session_closed(session.id);
                  if (context_.metrics == nullptr) return;
                  context_.metrics->node_table_changed(-released.nodes);
                  context_.metrics->session_memory(sessions_.total_memory());
                }),
      recent_(options.recent_cycles) {
  context_.plugins.reset();  // plugins_ is the current set
  if (context_.recorder)
    context_.recorder->plugin_set(recorded_plugin_set(*plugins_, identity()));
}

std::shared_ptr<const PluginGeneration> HostService::plugins() const {
  std::lock_guard lock(plugins_mutex_);
  return plugins_;
}

HostIdentity HostService::identity() const {
  return {.epoch = epoch_, .build = plugins()->build};
}

HostIdentity HostService::identity_of(const Call& call) const {
  return {.epoch = epoch_, .build = call.plugins->build};
}

void HostService::swap_plugins(std::shared_ptr<const PluginGeneration> next) {
  std::shared_ptr<const PluginGeneration>
      previous;  // released outside the lock
  const HostIdentity identity{.epoch = epoch_, .build = next->build};
  {
    std::lock_guard lock(plugins_mutex_);
    previous = std::exchange(plugins_, std::move(next));
  }
  watches_.identity_changed(identity);
  if (context_.recorder) {
    context_.recorder->plugin_set(recorded_plugin_set(*plugins(), identity));
  }
}

void HostService::continue_cycle(Call& call, const PodCycle& cycle,
                                 const ProfilePlugins*& profile) const {
  if (cycle.owner() == nullptr || cycle.owner() == call.plugins) return;
  auto began_with =
      std::static_pointer_cast<const PluginGeneration>(cycle.owner());
  if (const ProfilePlugins* p =
          began_with->created->profile(profile->scheduler_name)) {
    call.plugins = std::move(began_with);
    profile = p;
  }
}

grpc::Status HostService::field_limit_status(const FieldLimitError& e) {
  if (context_.metrics) {
    context_.metrics->request_refused(e.kind() == FieldLimitError::Kind::kString
                                          ? "field_length"
                                          : "list_length");
  }
  return {grpc::StatusCode::INVALID_ARGUMENT, e.what()};
}

grpc::Status HostService::memory_status(const Call& call,
                                        const Session& session,
                                        const NodeTable& table,
                                        const TableDelta& delta,
                                        size_t bytes_after, size_t pod_bytes,
                                        const MemoryLimit& limit) {
  const size_t after = bytes_after + pod_bytes;
  const std::string what = fmt::format(
      "{} for {} refused: session {} would hold about {} after this "
      "node-table delta ({}{} upserts on a table of {} nodes, {}; the pod "
      "{}), ",
      call.method, call.what, session.id, human_bytes(after),
      delta.full ? "full table, " : "", delta.upserts.size(), table.size(),
      human_bytes(table.bytes()), human_bytes(pod_bytes));
  std::string message;
  if (limit.total) {
    if (context_.metrics)
      context_.metrics->request_refused("total_session_memory");
    const size_t others = sessions_.total_memory() > session.memory()
                              ? sessions_.total_memory() - session.memory()
                              : 0;
    message =
        what +
        fmt::format(
            "and all {} sessions together about {}, over "
            "--max-total-session-memory ({}); the table is unchanged at "
            "version "
            "{}. Raise --max-total-session-memory (and the host's memory "
            "limit), "
            "or keep fewer sessions (--max-sessions, --max-sessions-per-peer): "
            "the others hold {}",
            sessions_.size(), human_bytes(others + after),
            human_bytes(options_.max_total_session_memory), table.version(),
            human_bytes(others));
  } else {
    if (context_.metrics) context_.metrics->request_refused("session_memory");
    message =
        what +
        fmt::format(
            "over --max-session-memory ({}); the table is unchanged at version "
            "{}. If the cluster really is this large, raise "
            "--max-session-memory "
            "(and the host's memory limit); otherwise find what makes its "
            "nodes "
            "this big (labels, annotations, pod lists)",
            human_bytes(options_.max_session_memory), table.version());
  }
  spdlog::warn("{}", message);
  return {grpc::StatusCode::RESOURCE_EXHAUSTED, message};
}

Deadline HostService::deadline_for(const CallContext& context,
                                   Clock::time_point start) const {
  const auto caller = context.deadline();
  if (caller == std::chrono::system_clock::time_point::max()) {
    return Deadline::never();
  }
  const auto remaining = caller - std::chrono::system_clock::now();
  if (remaining > std::chrono::hours(24 * 365)) return Deadline::never();
  const auto margin = std::min<std::chrono::nanoseconds>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          remaining * options_.deadline_margin_fraction),
      options_.deadline_margin_max);
  return Deadline::at(
      start + std::chrono::duration_cast<Clock::duration>(remaining - margin));
}

grpc::Status HostService::find_session(const std::string& id,
                                       std::shared_ptr<Session>& session) {
  session = sessions_.find(id);
  if (session == nullptr) {
    return {grpc::StatusCode::FAILED_PRECONDITION, unknown_session(id)};
  }
  return grpc::Status::OK;
}

grpc::Status HostService::find_profile(const Call& call,
                                       const std::string& scheduler_name,
                                       const ProfilePlugins*& profile) const {
  profile = call.plugins->created->profile(scheduler_name);
  if (profile != nullptr) return grpc::Status::OK;
  std::string known;
  for (const ProfilePlugins& p : call.plugins->created->profiles()) {
    known += (known.empty() ? "\"" : ", \"") + p.scheduler_name + "\"";
  }
  return {
      grpc::StatusCode::INVALID_ARGUMENT,
      "unknown profile \"" + scheduler_name + "\": the host's config has " +
          (known.empty() ? std::string("no profiles") : "profiles " + known) +
          "; give kube-scheduler and schedplug-host the same --config file"};
}

void HostService::record_runs(const ChainRuns& runs,
                              std::string_view extension_point) {
  if (context_.metrics == nullptr) return;
  for (const PluginRun& run : runs)
    context_.metrics->plugin_ran(run, extension_point);
}

void HostService::record_begins(const PodCycle& cycle) {
  if (context_.metrics == nullptr) return;
  for (const PluginRun& run : cycle.begin_runs())
    context_.metrics->hooks_ran(run);
}

std::vector<Deadline> HostService::plugin_deadlines(
    const Call& call, const std::vector<int>& timeouts_ms,
    Clock::time_point start) const {
  std::vector<Deadline> out;
  out.reserve(timeouts_ms.size());
  for (int ms : timeouts_ms) {
    if (ms <= 0) {
      out.push_back(call.deadline);
      continue;
    }
    const auto timeout = std::chrono::duration_cast<Clock::duration>(
        std::chrono::milliseconds(ms));
    const auto margin = std::min<Clock::duration>(
        std::chrono::duration_cast<Clock::duration>(
            timeout * options_.deadline_margin_fraction),
        std::chrono::duration_cast<Clock::duration>(
            options_.deadline_margin_max));
    Clock::time_point when = start + timeout - margin;
    if (auto call_when = call.deadline.when()) {
      when = std::min(when, *call_when);
    }
    out.push_back(Deadline::at(when));
  }
  return out;
}

void HostService::note_unfinished(Call& call,
                                  const std::vector<std::string>& reasons,
                                  const std::vector<std::string>& plugins,
                                  const ChainRuns& runs) {
  if (reasons.empty()) return;
  std::string all;
  for (size_t i = 0; i < reasons.size(); ++i) {
    if (context_.metrics) context_.metrics->deadline_exceeded(plugins[i]);
    all += (all.empty() ? "" : "; ") + reasons[i];
  }
  spdlog::warn("slow call: {} {}: {} after {:.1f} ms; per plugin: {}",
               call.method, call.what, all, ms(Clock::now() - call.start),
               runs_summary(runs));
}

grpc::Status HostService::busy_with_delta(Call& call, CallContext& context,
                                          const Session& session,
                                          const SessionCall& lock) {
  // The delta was not applied: the trailer says where the table is.
  context.add_trailer("schedplug-table-version",
                      std::to_string(session.last_table_version()));
  return busy_status(call, lock);
}

grpc::Status HostService::apply_delta(Call& call, CallContext& context,
                                      Session& session, const TableDelta& delta,
                                      size_t pod_bytes) {
  const NodeTable& table = session.table;
  const AppliedDelta applied = sessions_.apply_delta(session, delta, pod_bytes);
  call.saw_table(table);
  if (const auto& e = applied.error) {
    // The table did not change; its version tells the shim whether a delta
    // of an earlier call whose answer it lost was applied, and marks the
    // refusal as one about the table (the shim then resyncs after
    // INVALID_ARGUMENT; after RESOURCE_EXHAUSTED it keeps its delta and
    // sends it again with the next pod).
    context.add_trailer("schedplug-table-version",
                        std::to_string(table.version()));
    if (e->kind() == DeltaError::Kind::kTooLarge) {
      return memory_status(call, session, table, delta, e->bytes_after(),
                           pod_bytes, applied.limit);
    }
    const auto code = e->kind() == DeltaError::Kind::kVersionMismatch
                          ? grpc::StatusCode::FAILED_PRECONDITION
                          : grpc::StatusCode::INVALID_ARGUMENT;
    return {code, e->what()};
  }
  if (context_.metrics) {
    context_.metrics->session_memory(sessions_.total_memory());
    context_.metrics->node_table_changed(applied.nodes_added);
    if (delta.full) context_.metrics->resync();
  }
  if (delta.full) {
    spdlog::info("session {}: full node table received ({} nodes, version {})",
                 session.id, table.size(), table.version());
  }
  // A failed call after this still moved the table; the shim can read
  // where to.
  context.add_trailer("schedplug-table-version",
                      std::to_string(table.version()));
  return grpc::Status::OK;
}

grpc::Status HostService::restore_table(const std::string& session_id,
                                        const v1::NodeTableDelta& table) {
  // A call of its own, not recorded: replay restores what a recording's
  // checkpoint says the table was.
  InProcessCallContext context;
  Call call("RestoreTable", &context);
  call.plugins = plugins();
  call.what = "session " + clipped(session_id);
  std::shared_ptr<Session> session;
  if (auto s = find_session(session_id, session); !s.ok()) return s;
  TableDelta delta;
  try {
    delta = delta_from_proto(table);
  } catch (const FieldLimitError& e) {
    return field_limit_status(e);
  }
  const SessionCall lock(*session, call.deadline, "RestoreTable");
  if (!lock.owns()) return busy_status(call, lock);
  return apply_delta(call, context, *session, delta, 0);
}

grpc::Status HostService::busy_status(Call& call, const SessionCall& lock) {
  const std::string message =
      fmt::format("{} for {}: {} (waited {:.1f} ms)", call.method, call.what,
                  lock.busy_message(), ms(Clock::now() - call.start));
  spdlog::warn("{}", message);
  return {grpc::StatusCode::DEADLINE_EXCEEDED, message};
}

grpc::Status HostService::finish(Call& call, grpc::Status status) {
  const auto took = Clock::now() - call.start;
  if (context_.recorder != nullptr &&
      call.recorded.method != v1::RECORDED_METHOD_UNSPECIFIED) {
    const Call::Recorded& r = call.recorded;
    context_.recorder->call(r.method, *r.session_id, *r.request, *r.response,
                            status, r.table_version, r.table_nodes, took,
                            r.delta);
  }
  if (context_.metrics) {
    context_.metrics->rpc_done(call.method, code_name(status.error_code()),
                               duration<double>(took).count());
  }
  if (status.ok()) {
    spdlog::debug("{} {}: {} in {:.3f} ms", call.method, call.what,
                  call.summary, ms(took));
    if ((call.context != nullptr && call.context->cancelled()) ||
        call.deadline.expired()) {
      spdlog::warn("slow call: {} {} answered after its deadline ({:.1f} ms)",
                   call.method, call.what, ms(took));
    }
  } else if (status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
    spdlog::info("{} {} refused ({}): {}", call.method, call.what,
                 code_name(status.error_code()), status.error_message());
  }
  return status;
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

grpc::ServerWriteReactor<v1::SessionEvent>* HostService::WatchSession(
    grpc::CallbackServerContext*, const v1::WatchSessionRequest* request) {
  return watches_.open(sessions_.find(request->session_id()),
                       clipped(request->session_id()));
}

}  // namespace schedplug::host
