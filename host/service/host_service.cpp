#include "host/service/host_service.hpp"

#include <algorithm>
#include <iterator>
#include <set>
#include <string>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "host/chain/filter_chain.hpp"
#include "host/chain/score_chain.hpp"
#include "host/service/config_skew.hpp"
#include "host/service/handshake_check.hpp"
#include "host/service/node_window.hpp"

namespace schedplug::host {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::duration;
using std::chrono::milliseconds;

const char* code_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    default:
      return "OTHER";
  }
}

double ms(Clock::duration d) { return duration<double, std::milli>(d).count(); }

// At most 128 bytes of `s` (a name over FieldLimits may be huge; calls
// are described before their fields are checked).
std::string clipped(const std::string& s) {
  return s.size() <= 128 ? s : s.substr(0, 128) + "...";
}

std::string pod_label(const v1::Pod& pod) {
  return clipped(pod.namespace_()) + "/" + clipped(pod.name());
}

// "A 0.12 ms (500 nodes), B skipped, ..." for slow-call logs.
std::string runs_summary(const ChainRuns& runs) {
  std::string out;
  for (const PluginRun& run : runs) {
    if (run.plugin == nullptr) continue;
    if (!out.empty()) out += ", ";
    if (run.skipped) {
      out += run.plugin->name() + " skipped";
    } else {
      out += fmt::format("{} {:.3f} ms ({} calls)", run.plugin->name(),
                         ms(run.duration), run.calls);
    }
  }
  return out.empty() ? "no plugin ran" : out;
}

// The applies() answers the shim sent back (PreFilter's), per plugin of
// `plugins`; empty when it sent none, so the chain asks the plugins.
template <class Request>
std::vector<uint8_t> known_applies(
    const Request& request, std::span<const PluginInstance* const> plugins) {
  std::vector<uint8_t> out;
  if (!request.applies_known()) return out;
  out.reserve(plugins.size());
  for (const PluginInstance* p : plugins) {
    const auto& no = request.not_applying();
    out.push_back(std::find(no.begin(), no.end(), p->name()) == no.end() ? 1
                                                                         : 0);
  }
  return out;
}

// "1.50 GiB" for messages.
std::string human_bytes(size_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} bytes", bytes)
                   : fmt::format("{:.2f} {}", value, units[unit]);
}

// A request's `evaluate` as slots.
std::span<const uint32_t> slots_of(
    const google::protobuf::RepeatedField<uint32_t>& evaluate) {
  return {evaluate.data(), static_cast<size_t>(evaluate.size())};
}

// The node views the filters run on: the whole table, or (`evaluate` not
// empty) only its window, in a buffer of the calling thread that the
// chain reads until the call returns.
std::span<const schedplug_node* const> evaluated_views(
    const NodeTable& table,
    const google::protobuf::RepeatedField<uint32_t>& evaluate) {
  if (evaluate.empty()) return table.views();
  thread_local std::vector<const schedplug_node*> window;
  return window_views(table.views(), slots_of(evaluate), window);
}

// The cycle's gates for the shim, which sends them back in case the host
// loses the cycle: the plugins whose Filter and Score gates are both shut.
void report_gates(const PodCycle& cycle, const ProfilePlugins& profile,
                  v1::PreFilterResponse& response) {
  response.set_applies_reported(true);
  for (const PluginInstance* plugin : profile.plugins) {
    const PodScope& scope = *cycle.scope_for(plugin);
    if (scope.error().empty() && !scope.runs_filter() && !scope.runs_score())
      response.add_not_applying(plugin->name());
  }
}

// A PreScore or FilterNodes works on the table its cycle's PreFilter
// answered for; after any change the shim must start over with the full
// table.
grpc::Status table_version_status(const NodeTable& table, uint64_t requested,
                                  std::string_view method) {
  if (requested == table.version()) return grpc::Status::OK;
  return {grpc::StatusCode::FAILED_PRECONDITION,
          fmt::format("node table version mismatch: the node table is at "
                      "version {}, the {} request is for version {}; the "
                      "table changed since this pod's PreFilter: send the "
                      "full node table with the next PreFilter",
                      table.version(), method, requested)};
}

std::string unknown_session(const std::string& id) {
  return "unknown session \"" + id +
         "\": the host restarted or the session expired; handshake again "
         "and send the full node table";
}

}  // namespace

// One RPC in flight: what to log and measure when it ends.
struct HostService::Call {
  Call(const char* method_name, CallContext* call_context)
      : method(method_name), context(call_context) {}
  const char* method;
  CallContext* context;  // nullptr: the Handshake (no deadline, no trailers)
  Clock::time_point start = Clock::now();
  Deadline deadline = Deadline::never();
  std::string what;     // "pod ns/name, profile X"
  std::string summary;  // for the debug log only: left empty unless it is on
};

HostService::HostService(ServiceContext context, ServiceOptions options)
    : context_(std::move(context)),
      options_(options),
      identity_(make_host_identity(context_.config_file, context_.libraries)),
      watches_(identity_, options.heartbeat),
      sessions_({.max_sessions = options.max_sessions,
                 .max_sessions_per_peer = options.max_sessions_per_peer,
                 .idle_timeout = options.session_idle_timeout,
                 .max_session_memory = options.max_session_memory,
                 .max_total_session_memory = options.max_total_session_memory,
                 .idle_before_memory_drop = options.idle_before_memory_drop},
                [this](Session&, const Session::Released& released) {
                  watches_.sessions_ended();
                  if (context_.metrics == nullptr) return;
                  context_.metrics->node_table_changed(-released.nodes);
                  context_.metrics->session_memory(sessions_.total_memory());
                }) {}

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

grpc::Status HostService::find_profile(const std::string& scheduler_name,
                                       const ProfilePlugins*& profile) const {
  profile = context_.created->profile(scheduler_name);
  if (profile != nullptr) return grpc::Status::OK;
  std::string known;
  for (const ProfilePlugins& p : context_.created->profiles()) {
    known += (known.empty() ? "\"" : ", \"") + p.scheduler_name + "\"";
  }
  return {
      grpc::StatusCode::INVALID_ARGUMENT,
      "unknown profile \"" + scheduler_name + "\": the host's config has " +
          (known.empty() ? std::string("no profiles") : "profiles " + known) +
          "; give kube-scheduler and schedplug-host the same --config file"};
}

template <class Request>
grpc::Status HostService::find_session_and_profile(
    const Request& request, std::shared_ptr<Session>& session,
    const ProfilePlugins*& profile) {
  if (auto s = find_session(request.session_id(), session); !s.ok()) return s;
  return find_profile(request.scheduler_name(), profile);
}

void HostService::record_runs(const ChainRuns& runs,
                              std::string_view extension_point) {
  if (context_.metrics == nullptr) return;
  for (const PluginRun& run : runs)
    context_.metrics->plugin_ran(run, extension_point);
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

grpc::Status HostService::busy_status(Call& call, const SessionCall& lock) {
  const std::string message =
      fmt::format("{} for {}: {} (waited {:.1f} ms)", call.method, call.what,
                  lock.busy_message(), ms(Clock::now() - call.start));
  spdlog::warn("{}", message);
  return {grpc::StatusCode::DEADLINE_EXCEEDED, message};
}

grpc::Status HostService::finish(Call& call, grpc::Status status) {
  const auto took = Clock::now() - call.start;
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

grpc::Status HostService::Handshake(grpc::ServerContext* context,
                                    const v1::HandshakeRequest* request,
                                    v1::HandshakeResponse* response) {
  Call call("Handshake", nullptr);
  call.what = "client \"" + request->client_id() + "\"";
  if (request->protocol_version() != v1::PROTOCOL_VERSION_1) {
    if (context_.metrics) {
      context_.metrics->handshake_refused("protocol_version");
    }
    return finish(call,
                  {grpc::StatusCode::INVALID_ARGUMENT,
                   fmt::format("unsupported protocol version {}: this "
                               "host speaks version 1 "
                               "(PROTOCOL_VERSION_1); use a shim and "
                               "host from the same schedplug release",
                               static_cast<int>(request->protocol_version()))});
  }
  HandshakeFindings findings = check_handshake(
      *request, *context_.created, context_.libraries, context_.config_file);
  if (!findings.errors.empty()) {
    std::string message = fmt::format(
        "handshake refused: the scheduler's plugins do not match the host's "
        "({} problem{}):",
        findings.errors.size(), findings.errors.size() == 1 ? "" : "s");
    for (const std::string& e : findings.errors) message += "\n  error: " + e;
    if (context_.metrics) context_.metrics->handshake_refused("plugin_names");
    return finish(call, {grpc::StatusCode::INVALID_ARGUMENT, message});
  }
  const SkewFindings skew =
      check_config_skew(*request, context_.resolved, context_.config_file);
  if (!skew.unchecked_profiles.empty()) {
    std::string profiles;
    for (const std::string& p : skew.unchecked_profiles) {
      profiles += (profiles.empty() ? "\"" : ", \"") + p + "\"";
    }
    spdlog::info(
        "Handshake {}: the scheduler sent no plugin settings for profile{} "
        "{} (a shim older than the config-skew check); their weights, "
        "policies and args are not compared",
        call.what, skew.unchecked_profiles.size() == 1 ? "" : "s", profiles);
  }
  if (!skew.errors.empty()) {
    std::string message = fmt::format(
        "handshake refused: kube-scheduler and schedplug-host read different "
        "KubeSchedulerConfigurations ({} difference{}):",
        skew.errors.size(), skew.errors.size() == 1 ? "" : "s");
    for (const std::string& e : skew.errors) message += "\n  error: " + e;
    if (context_.metrics) context_.metrics->handshake_refused("config_skew");
    return finish(call, {grpc::StatusCode::INVALID_ARGUMENT, message});
  }
  const std::string peer = context_.peers != nullptr
                               ? context_.peers->identify(*context)
                               : std::string();
  auto session = sessions_.create(request->client_id(), peer);
  response->set_protocol_version(v1::PROTOCOL_VERSION_1);
  response->set_session_id(session->id);
  response->set_fast_path_socket(context_.fast_path_socket);
  identity_.to_proto(*response->mutable_identity());
  for (const auto& lib : context_.libraries) {
    v1::PluginInfo* info = response->add_plugins();
    info->set_name(lib->name());
    info->set_version(lib->version());
    info->set_file(lib->file().string());
    info->set_sha256(lib->sha256());
    info->set_has_filter(lib->has_filter());
    info->set_has_score(lib->has_score());
    // One pass over the plugin's instances (create() may set each of these
    // from its args):
    //  - events: the union, 0 (every event) when any instance asks for
    //    every event; no instance (enabled nowhere): the descriptor's;
    //  - data, the pod and node data they read (plugin.h v1.2): the union;
    //  - hints are promises (plugin.h v1.3): only what every instance
    //    promised;
    //  - the keys of SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS (plugin.h
    //    v1.4): the union, sorted.
    uint64_t events = 0, data = 0, hints = ~uint64_t{0};
    bool every_event = false, enabled = false;
    std::set<std::string> label_keys, annotation_keys;
    for (const auto& profile : context_.created->profiles()) {
      for (const PluginInstance* p : profile.plugins) {
        if (&p->library() != lib.get()) continue;
        const schedplug_settings& settings = p->settings();
        enabled = true;
        every_event = every_event || settings.events == 0;
        events |= settings.events;
        data |= settings.data;
        hints &= settings.hints;
        label_keys.insert(p->pod_keys().labels().begin(),
                          p->pod_keys().labels().end());
        annotation_keys.insert(p->pod_keys().annotations().begin(),
                               p->pod_keys().annotations().end());
      }
    }
    info->set_events(!enabled      ? lib->descriptor().events
                     : every_event ? 0
                                   : events);
    info->set_data(data);
    response->set_data(response->data() | data);
    info->set_hints(enabled ? hints : 0);
    for (const std::string& k : label_keys) info->add_pod_label_keys(k);
    for (const std::string& k : annotation_keys) {
      info->add_pod_annotation_keys(k);
    }
  }
  for (const std::string& w : context_.startup_warnings)
    response->add_warnings(w);
  for (const std::string& w : findings.warnings) {
    spdlog::warn("handshake of {}: {}", request->client_id(), w);
    response->add_warnings(w);
  }
  spdlog::info("session {} started for client \"{}\" ({}, {} profiles)",
               session->id, request->client_id(),
               peer.empty() ? "in-process" : peer, request->profiles_size());
  call.summary = "session " + session->id;
  return finish(call, grpc::Status::OK);
}

grpc::Status HostService::PreFilter(grpc::ServerContext* context,
                                    const v1::PreFilterRequest* request,
                                    v1::PreFilterResponse* response) {
  GrpcCallContext call_context(context);
  return pre_filter(call_context, *request, *response);
}

grpc::Status HostService::pre_filter(CallContext& context,
                                     const v1::PreFilterRequest& request,
                                     v1::PreFilterResponse& response) {
  Call call("PreFilter", &context);
  call.deadline = deadline_for(context, call.start);
  call.what = "pod " + pod_label(request.pod()) + " (profile \"" +
              request.scheduler_name() + "\")";
  std::shared_ptr<Session> session;
  const ProfilePlugins* profile = nullptr;
  if (auto s = find_session_and_profile(request, session, profile); !s.ok()) {
    return finish(call, s);
  }
  PodData pod_data;
  TableDelta delta;
  try {
    pod_data = pod_from_proto(request.pod());
    // Refused before the table is reached, so without the table-version
    // trailer: a resync would send the same node again.
    delta = delta_from_proto(request.delta());
  } catch (const FieldLimitError& e) {
    return finish(call, field_limit_status(e));
  }
  // Also before the table: the delta is not applied.
  if (std::string error = window_error(slots_of(request.evaluate()),
                                       "PreFilter", /*required=*/false);
      !error.empty()) {
    return finish(call, {grpc::StatusCode::INVALID_ARGUMENT, error});
  }
  const size_t pod_bytes = estimated_bytes(pod_data);
  auto pod = std::make_unique<const PodRecord>(std::move(pod_data));

  const SessionCall lock(*session, call.deadline, "PreFilter " + call.what);
  if (!lock.owns()) {
    // The delta was not applied: the trailer says where the table is.
    context.add_trailer("schedplug-table-version",
                        std::to_string(session->last_table_version()));
    return finish(call, busy_status(call, lock));
  }
  if (session->evicted()) {
    return finish(call, {grpc::StatusCode::FAILED_PRECONDITION,
                         unknown_session(request.session_id())});
  }
  const NodeTable& table = session->table;
  const AppliedDelta applied =
      sessions_.apply_delta(*session, delta, pod_bytes);
  if (const auto& e = applied.error) {
    // The table did not change; its version tells the shim whether a delta
    // of an earlier call whose answer it lost was applied, and marks the
    // refusal as one about the table (the shim then resyncs after
    // INVALID_ARGUMENT; after RESOURCE_EXHAUSTED it keeps its delta and
    // sends it again with the next pod).
    context.add_trailer("schedplug-table-version",
                        std::to_string(table.version()));
    if (e->kind() == DeltaError::Kind::kTooLarge) {
      return finish(
          call, memory_status(call, *session, table, delta, e->bytes_after(),
                              pod_bytes, applied.limit));
    }
    const auto code = e->kind() == DeltaError::Kind::kVersionMismatch
                          ? grpc::StatusCode::FAILED_PRECONDITION
                          : grpc::StatusCode::INVALID_ARGUMENT;
    return finish(call, {code, e->what()});
  }
  if (context_.metrics) {
    context_.metrics->session_memory(sessions_.total_memory());
    context_.metrics->node_table_changed(applied.nodes_added);
    if (delta.full) context_.metrics->resync();
  }
  if (delta.full) {
    spdlog::info("session {}: full node table received ({} nodes, version {})",
                 session->id, table.size(), table.version());
  }
  // A failed call below still moved the table; the shim can read where to.
  context.add_trailer("schedplug-table-version",
                      std::to_string(table.version()));
  response.set_table_version(table.version());
  identity_.to_proto(*response.mutable_identity());

  // A new pod cycle: the previous one (a pod that never reached PreScore)
  // ends first, then every native plugin of the profile begins this pod
  // once (pod_begin, or applies() for a plugin without it). The single-node
  // Filter and PreScore calls of this cycle use the same per-pod states;
  // the shim also gets the gates (not_applying) in case the host loses the
  // cycle.
  session->end_cycle();
  const std::string key = cycle_key(request.scheduler_name(), pod->data());
  const auto cycle =
      std::make_shared<const PodCycle>(key, std::move(pod), profile->plugins);
  report_gates(*cycle, *profile, response);
  session->begin_cycle(cycle);
  const auto chain_start = Clock::now();
  const std::vector<Deadline> deadlines =
      plugin_deadlines(call, profile->filter_timeout_ms, chain_start);
  // With `evaluate`, only its window (FilterNodes may ask about the rest).
  response.set_windowed(!request.evaluate().empty());
  FilterOutcome outcome = run_filters(
      profile->filters, cycle->pod().view(),
      evaluated_views(table, request.evaluate()), *context_.pool, call.deadline,
      {.plugin_deadlines = deadlines,
       .applies = {},
       .keep_raw_scores = false,
       .cycle = cycle.get()});
  record_runs(outcome.runs, "filter");
  fill_filter_response(call, *profile, outcome, response);
  if (spdlog::should_log(spdlog::level::debug)) {  // only finish() reads it
    call.summary = fmt::format(
        "{} nodes{} (delta +{} -{}{}), {} rejected, table version {}",
        table.size(), response.windowed() ? " (windowed)" : "",
        delta.upserts.size(), delta.removed.size(), delta.full ? ", full" : "",
        response.rejected_nodes_size(), table.version());
  }
  return finish(call, grpc::Status::OK);
}

void HostService::fill_filter_response(Call& call,
                                       const ProfilePlugins& profile,
                                       FilterOutcome& outcome,
                                       v1::PreFilterResponse& response) {
  for (size_t i = 0; i < profile.filters.size(); ++i) {
    response.add_plugins(profile.filters[i]->name());
    response.add_skipped(outcome.skipped[i]);
  }
  {
    std::vector<std::string> reasons, names;
    for (const UnfinishedPlugin& u : outcome.unfinished) {
      v1::UnfinishedPlugin* out = response.add_unfinished();
      out->set_plugin(u.instance->name());
      out->set_reason(u.reason);
      reasons.push_back(u.reason);
      names.push_back(u.instance->name());
    }
    note_unfinished(call, reasons, names, outcome.runs);
  }
  for (std::string& reason : outcome.reasons)
    response.add_reasons(std::move(reason));
  const int n = static_cast<int>(outcome.rejections.size());
  response.mutable_rejected_nodes()->Reserve(n);
  response.mutable_rejected_by()->Reserve(n);
  response.mutable_codes()->Reserve(n);
  response.mutable_reason()->Reserve(n);
  for (const FilterRejection& r : outcome.rejections) {
    response.add_rejected_nodes(r.node);
    response.add_rejected_by(r.plugin);
    response.add_codes(static_cast<v1::Code>(r.code));
    response.add_reason(r.reason);
  }
}

grpc::Status HostService::FilterNodes(grpc::ServerContext* context,
                                      const v1::FilterNodesRequest* request,
                                      v1::PreFilterResponse* response) {
  GrpcCallContext call_context(context);
  return filter_nodes(call_context, *request, *response);
}

grpc::Status HostService::filter_nodes(CallContext& context,
                                       const v1::FilterNodesRequest& request,
                                       v1::PreFilterResponse& response) {
  Call call("FilterNodes", &context);
  call.deadline = deadline_for(context, call.start);
  call.what = "pod " + pod_label(request.pod()) + " (profile \"" +
              request.scheduler_name() + "\")";
  std::shared_ptr<Session> session;
  const ProfilePlugins* profile = nullptr;
  if (auto s = find_session_and_profile(request, session, profile); !s.ok()) {
    return finish(call, s);
  }
  if (std::string error = window_error(slots_of(request.evaluate()),
                                       "FilterNodes", /*required=*/true);
      !error.empty()) {
    return finish(call, {grpc::StatusCode::INVALID_ARGUMENT, error});
  }
  PodData pod_data;
  try {
    pod_data = pod_from_proto(request.pod());
  } catch (const FieldLimitError& e) {
    return finish(call, field_limit_status(e));
  }
  const PodRecord pod(std::move(pod_data));

  const SessionCall lock(*session, call.deadline, "FilterNodes " + call.what);
  if (!lock.owns()) return finish(call, busy_status(call, lock));
  if (session->evicted()) {
    return finish(call, {grpc::StatusCode::FAILED_PRECONDITION,
                         unknown_session(request.session_id())});
  }
  const NodeTable& table = session->table;
  if (grpc::Status s =
          table_version_status(table, request.table_version(), "FilterNodes");
      !s.ok()) {
    return finish(call, s);
  }
  response.set_table_version(table.version());
  identity_.to_proto(*response.mutable_identity());
  // The cycle PreFilter began, when the host still holds it: its per-pod
  // states, and it stays the session's (PreScore follows). Without it,
  // each plugin begins and ends the pod within this run, as for Filter,
  // with the shim's gates for plugins without pod_begin.
  const auto cycle =
      session->cycle(cycle_key(request.scheduler_name(), pod.data()));
  if (cycle) report_gates(*cycle, *profile, response);
  const std::vector<uint8_t> applies = known_applies(request, profile->filters);
  const std::vector<Deadline> deadlines =
      plugin_deadlines(call, profile->filter_timeout_ms, Clock::now());
  response.set_windowed(true);
  FilterOutcome outcome = run_filters(
      profile->filters, pod.view(), evaluated_views(table, request.evaluate()),
      *context_.pool, call.deadline,
      {.plugin_deadlines = deadlines,
       .applies = applies,
       .keep_raw_scores = false,
       .cycle = cycle.get()});
  record_runs(outcome.runs, "filter");
  fill_filter_response(call, *profile, outcome, response);
  if (spdlog::should_log(spdlog::level::debug)) {  // only finish() reads it
    call.summary = fmt::format(
        "{} evaluate pairs on {} nodes, {} rejected, table version {}, {}",
        request.evaluate_size() / 2, table.size(),
        response.rejected_nodes_size(), table.version(),
        cycle ? "the cycle's pod states" : "no cycle held");
  }
  return finish(call, grpc::Status::OK);
}

grpc::Status HostService::Filter(grpc::ServerContext* context,
                                 const v1::FilterRequest* request,
                                 v1::FilterResponse* response) {
  GrpcCallContext call_context(context);
  Call call("Filter", &call_context);
  call.deadline = deadline_for(call_context, call.start);
  call.what = "pod " + pod_label(request->pod()) + " on node \"" +
              clipped(request->node().name()) + "\" (profile \"" +
              request->scheduler_name() + "\")";
  std::shared_ptr<Session> session;
  const ProfilePlugins* profile = nullptr;
  if (auto s = find_session_and_profile(*request, session, profile); !s.ok()) {
    return finish(call, s);
  }
  std::vector<const PluginInstance*> filters;
  if (request->plugins().empty()) {
    filters = profile->filters;
  } else {
    for (const std::string& name : request->plugins()) {
      const PluginInstance* plugin = profile->filter_named(name);
      if (plugin == nullptr) {
        std::string known;
        for (const PluginInstance* f : profile->filters) {
          known += (known.empty() ? "\"" : ", \"") + f->name() + "\"";
        }
        return finish(
            call, {grpc::StatusCode::INVALID_ARGUMENT,
                   "unknown plugin \"" + name + "\": profile \"" +
                       profile->scheduler_name +
                       "\" has no native Filter plugin of that name (it has " +
                       (known.empty() ? std::string("none") : known) + ")"});
      }
      filters.push_back(plugin);
    }
  }
  if (request->node().name().empty()) {
    return finish(call, {grpc::StatusCode::INVALID_ARGUMENT,
                         "Filter: the node has no name"});
  }
  PodData pod_data;
  NodeData node_data;
  try {
    pod_data = pod_from_proto(request->pod());
    node_data = node_from_proto(request->node());
  } catch (const FieldLimitError& e) {
    return finish(call, field_limit_status(e));
  }
  const PodRecord pod(std::move(pod_data));
  const NodeRecord node(std::move(node_data));
  std::vector<int> timeouts;
  for (const PluginInstance* f : filters) {
    int t = 0;
    for (size_t i = 0; i < profile->filters.size(); ++i) {
      if (profile->filters[i] == f && i < profile->filter_timeout_ms.size())
        t = profile->filter_timeout_ms[i];
    }
    timeouts.push_back(t);
  }
  const std::vector<Deadline> deadlines =
      plugin_deadlines(call, timeouts, Clock::now());
  const std::vector<uint8_t> applies = known_applies(*request, filters);
  // The cycle's per-pod states, when PreFilter began this pod's cycle.
  const auto cycle =
      session->cycle(cycle_key(request->scheduler_name(), pod.data()));
  SingleFilterResult result =
      run_filters_on_node(filters, pod.view(), node.view(), call.deadline,
                          {.plugin_deadlines = deadlines,
                           .applies = applies,
                           .keep_raw_scores = false,
                           .cycle = cycle.get()});
  record_runs(result.runs, "filter");
  {
    std::vector<std::string> reasons, names;
    for (const UnfinishedPlugin& u : result.unfinished) {
      v1::UnfinishedPlugin* out = response->add_unfinished();
      out->set_plugin(u.instance->name());
      out->set_reason(u.reason);
      reasons.push_back(u.reason);
      names.push_back(u.instance->name());
    }
    note_unfinished(call, reasons, names, result.runs);
  }
  identity_.to_proto(*response->mutable_identity());
  response->set_code(static_cast<v1::Code>(result.verdict.code));
  if (result.plugin != nullptr) response->set_plugin(result.plugin->name());
  response->set_reason(result.verdict.reason);
  call.summary = result.plugin == nullptr
                     ? std::string("fits")
                     : "rejected by " + result.plugin->name();
  return finish(call, grpc::Status::OK);
}

grpc::Status HostService::PreScore(grpc::ServerContext* context,
                                   const v1::PreScoreRequest* request,
                                   v1::PreScoreResponse* response) {
  GrpcCallContext call_context(context);
  return pre_score(call_context, *request, *response);
}

grpc::Status HostService::pre_score(CallContext& context,
                                    const v1::PreScoreRequest& request,
                                    v1::PreScoreResponse& response) {
  Call call("PreScore", &context);
  call.deadline = deadline_for(context, call.start);
  call.what = "pod " + pod_label(request.pod()) + " (profile \"" +
              request.scheduler_name() + "\")";
  std::shared_ptr<Session> session;
  const ProfilePlugins* profile = nullptr;
  if (auto s = find_session_and_profile(request, session, profile); !s.ok()) {
    return finish(call, s);
  }
  PodData pod_data;
  try {
    pod_data = pod_from_proto(request.pod());
  } catch (const FieldLimitError& e) {
    return finish(call, field_limit_status(e));
  }
  const PodRecord pod(std::move(pod_data));

  const SessionCall lock(*session, call.deadline, "PreScore " + call.what);
  if (!lock.owns()) return finish(call, busy_status(call, lock));
  if (session->evicted()) {
    return finish(call, {grpc::StatusCode::FAILED_PRECONDITION,
                         unknown_session(request.session_id())});
  }
  const NodeTable& table = session->table;
  if (grpc::Status s =
          table_version_status(table, request.table_version(), "PreScore");
      !s.ok()) {
    return finish(call, s);
  }
  std::vector<const schedplug_node*> nodes;
  nodes.reserve(static_cast<size_t>(request.nodes_size()));
  for (uint32_t slot : request.nodes()) {
    const CompactNode* record = table.at(slot);
    if (record == nullptr) {
      return finish(call, {grpc::StatusCode::INVALID_ARGUMENT,
                           fmt::format("PreScore: node index {} holds no node "
                                       "in table version {}",
                                       slot, table.version())});
    }
    nodes.push_back(&record->view());
  }
  const std::vector<uint8_t> applies = known_applies(request, profile->scorers);
  const std::vector<Deadline> deadlines =
      plugin_deadlines(call, profile->scorer_timeout_ms, Clock::now());
  const auto cycle =
      session->cycle(cycle_key(request.scheduler_name(), pod.data()));
  ScoreOutcome outcome = run_scores(profile->scorers, pod.view(), nodes,
                                    *context_.pool, call.deadline,
                                    {.plugin_deadlines = deadlines,
                                     .applies = applies,
                                     .keep_raw_scores = false,
                                     .cycle = cycle.get()});
  identity_.to_proto(*response.mutable_identity());
  // PreScore is the cycle's last call: its per-pod states end now.
  if (cycle) session->end_cycle(cycle.get());
  record_runs(outcome.runs, "score");
  size_t failed = 0;
  std::vector<std::string> reasons, names;
  for (size_t i = 0; i < profile->scorers.size(); ++i) {
    PluginScoreOutcome& o = outcome.plugins[i];
    v1::PluginScores* out = response.add_plugins();
    out->set_plugin(profile->scorers[i]->name());
    out->set_skipped(o.skipped);
    out->mutable_scores()->Add(o.scores.begin(), o.scores.end());
    if (!o.error.empty()) {
      ++failed;
      spdlog::warn("PreScore {}: {}", call.what, o.error);
      out->set_error(std::move(o.error));
    }
    if (!o.unfinished.empty()) {
      ++failed;
      reasons.push_back(o.unfinished);
      names.push_back(profile->scorers[i]->name());
      out->set_unfinished(std::move(o.unfinished));
    }
  }
  note_unfinished(call, reasons, names, outcome.runs);
  if (spdlog::should_log(spdlog::level::debug)) {
    call.summary = fmt::format("{} nodes scored by {} plugins, {} failed",
                               nodes.size(), profile->scorers.size(), failed);
  }
  return finish(call, grpc::Status::OK);
}

grpc::ServerWriteReactor<v1::SessionEvent>* HostService::WatchSession(
    grpc::CallbackServerContext*, const v1::WatchSessionRequest* request) {
  return watches_.open(sessions_.find(request->session_id()),
                       clipped(request->session_id()));
}

}  // namespace schedplug::host
