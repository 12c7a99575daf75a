#include "host/pipeline/call_pipeline.hpp"

#include <algorithm>
#include <string>

#include <spdlog/spdlog.h>

#include "host/pipeline/pod_call.hpp"

namespace schedplug::host {

using namespace call_support;

CallPipeline::CallPipeline(PipelineContext context,
                           const ServiceOptions& options)
    : context_(std::move(context)),
      options_(options),
      epoch_(new_host_epoch()),
      plugins_(std::move(context_.plugins)),
      startup_resolved_(plugins_->resolved),
      sessions_({.max_sessions = options.max_sessions,
                 .max_sessions_per_peer = options.max_sessions_per_peer,
                 .idle_timeout = options.session_idle_timeout,
                 .max_session_memory = options.max_session_memory,
                 .max_total_session_memory = options.max_total_session_memory,
                 .idle_before_memory_drop = options.idle_before_memory_drop},
                [this](Session& session, const Session::Released& released) {
                  tell(&CallObserver::session_closed, session, released);
                }) {}

void CallPipeline::add_observer(CallObserver& observer) {
  observers_.push_back(&observer);
  keeps_raw_scores_ = keeps_raw_scores_ || observer.keeps_raw_scores();
}

std::shared_ptr<const PluginGeneration> CallPipeline::plugins() const {
  std::lock_guard lock(plugins_mutex_);
  return plugins_;
}

HostIdentity CallPipeline::identity() const {
  return {.epoch = epoch_, .build = plugins()->build};
}

HostIdentity CallPipeline::identity_of(const Call& call) const {
  return {.epoch = epoch_, .build = call.plugins->build};
}

void CallPipeline::connect_waiting(const PluginGeneration& set) const {
  for (const ProfilePlugins& profile : set.created->profiles()) {
    for (const PluginInstance* p : profile.plugins) {
      if (p->library().has_permit())
        p->waiting().connect(profile.scheduler_name, waiting_sink_);
    }
  }
}

void CallPipeline::set_waiting_pod_sink(std::shared_ptr<WaitingPodSink> sink) {
  std::lock_guard lock(plugins_mutex_);
  waiting_sink_ = std::move(sink);
  connect_waiting(*plugins_);
}

void CallPipeline::swap_plugins(std::shared_ptr<const PluginGeneration> next) {
  const HostIdentity identity{.epoch = epoch_, .build = next->build};
  std::shared_ptr<const PluginGeneration> current = next;
  std::shared_ptr<const PluginGeneration>
      previous;  // released outside the lock
  {
    std::lock_guard lock(plugins_mutex_);
    // Before any call can reach them: a permit() of the new set may make a
    // pod wait.
    connect_waiting(*next);
    previous = std::exchange(plugins_, std::move(next));
  }
  tell(&CallObserver::plugins_swapped, *current, identity);
}

bool CallPipeline::needs_normalized_scores(
    const ProfilePlugins& profile) const {
  for (const CallObserver* o : observers_) {
    if (o->needs_normalized_scores(profile)) return true;
  }
  return false;
}

grpc::Status CallPipeline::answer(
    const char* method, CallContext& context, std::string what,
    const std::function<grpc::Status(std::string& summary)>& answer) {
  Call call(method, &context);
  call.what = std::move(what);
  grpc::Status status = answer(call.summary);
  return finish(call, std::move(status));
}

grpc::Status CallPipeline::note_cycles(CallContext& context,
                                       const v1::CycleNotes& request,
                                       v1::CycleNotesResponse& response) {
  Call call("NoteCycles", &context);
  call.what = "session " + clipped(request.session_id());
  // Only a session's scheduler says what became of its cycles.
  std::shared_ptr<Session> session;
  if (auto s = find_session(request.session_id(), session); !s.ok())
    return finish(call, s);
  tell(&CallObserver::placed, request.placed());
  identity().to_proto(*response.mutable_identity());
  call.summary = fmt::format("{} notes", request.placed_size());
  return finish(call, grpc::Status::OK);
}

void CallPipeline::continue_cycle(Call& call, const PodCycle& cycle,
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

grpc::Status CallPipeline::field_limit_status(const FieldLimitError& e) {
  tell(&CallObserver::refused,
       std::string_view(e.kind() == FieldLimitError::Kind::kString
                            ? "field_length"
                            : "list_length"));
  return {grpc::StatusCode::INVALID_ARGUMENT, e.what()};
}

grpc::Status CallPipeline::memory_status(const Call& call,
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
    tell(&CallObserver::refused, std::string_view("total_session_memory"));
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
    tell(&CallObserver::refused, std::string_view("session_memory"));
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

Deadline CallPipeline::deadline_for(const CallContext& context,
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

grpc::Status CallPipeline::find_session(const std::string& id,
                                        std::shared_ptr<Session>& session) {
  session = sessions_.find(id);
  if (session == nullptr) {
    return {grpc::StatusCode::FAILED_PRECONDITION, unknown_session(id)};
  }
  return grpc::Status::OK;
}

grpc::Status CallPipeline::find_profile(const Call& call,
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

grpc::Status CallPipeline::find_session_and_profile(
    const Call& call, const std::string& session_id,
    const std::string& scheduler_name, std::shared_ptr<Session>& session,
    const ProfilePlugins*& profile) {
  if (auto s = find_session(session_id, session); !s.ok()) return s;
  return find_profile(call, scheduler_name, profile);
}

std::vector<Deadline> CallPipeline::plugin_deadlines(
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

void CallPipeline::note_unfinished(Call& call,
                                   const std::vector<std::string>& reasons,
                                   const std::vector<std::string>& plugins,
                                   const ChainRuns& runs) {
  if (reasons.empty()) return;
  std::string all;
  for (size_t i = 0; i < reasons.size(); ++i) {
    tell(&CallObserver::plugin_unfinished, plugins[i]);
    all += (all.empty() ? "" : "; ") + reasons[i];
  }
  spdlog::warn("slow call: {} {}: {} after {:.1f} ms; per plugin: {}",
               call.method, call.what, all, ms(Clock::now() - call.start),
               runs_summary(runs));
}

grpc::Status CallPipeline::busy_with_delta(Call& call, CallContext& context,
                                           const Session& session,
                                           const SessionCall& lock) {
  // The delta was not applied: the trailer says where the table is.
  context.add_trailer("schedplug-table-version",
                      std::to_string(session.last_table_version()));
  return busy_status(call, lock);
}

grpc::Status CallPipeline::apply_delta(Call& call, CallContext& context,
                                       Session& session,
                                       const TableDelta& delta,
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
  tell(&CallObserver::table_changed, session, delta, applied);
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

grpc::Status CallPipeline::restore_table(const std::string& session_id,
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

grpc::Status CallPipeline::busy_status(Call& call, const SessionCall& lock) {
  const std::string message =
      fmt::format("{} for {}: {} (waited {:.1f} ms)", call.method, call.what,
                  lock.busy_message(), ms(Clock::now() - call.start));
  spdlog::warn("{}", message);
  return {grpc::StatusCode::DEADLINE_EXCEEDED, message};
}

grpc::Status CallPipeline::finish(Call& call, grpc::Status status) {
  const auto took = Clock::now() - call.start;
  CallEnded& ended = call.ended;
  ended.status = &status;
  ended.took = took;
  tell(&CallObserver::call_ended, ended);
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

}  // namespace schedplug::host
