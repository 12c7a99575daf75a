// `schedplug replay` (replayer.hpp): Replay walks a recording's files in order,
// mirrors each session's node table, replays every call on an in-process host
// and compares the answers. One file: the replay of calls, the table mirroring
// and the comparisons all read Replay's per-session state.
#include "host/record/replayer.hpp"

#include <stdlib.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "host/app/host_app.hpp"
#include "host/record/record_file.hpp"
#include "host/record/replay_compare.hpp"
#include "host/record/table_mirror.hpp"

namespace schedplug::host {
namespace {

using Clock = std::chrono::steady_clock;

// A temporary directory for the in-process host's socket and, when the
// recording's configuration is used, its file.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = "/tmp/schedplug-replay-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw ReplayError(
          "cannot create a temporary directory under /tmp for the replay's "
          "host");
    }
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string pod_name(const v1::Pod& pod) {
  return pod.namespace_() + "/" + pod.name();
}

using replay::Best;
using replay::best_nodes;
using replay::describe;
using replay::filter_failure;
using replay::rejections;
using replay::score_failure;

// In-process calls whose "schedplug-table-version" trailer is kept: the
// session's table version after the call, or after a delta it refused
// (none when the call was refused before the table was reached).
class ReplayCallContext final : public CallContext {
 public:
  std::chrono::system_clock::time_point deadline() const override {
    return std::chrono::system_clock::time_point::max();
  }
  bool cancelled() const override { return false; }
  void add_trailer(const std::string& key, const std::string& value) override {
    if (key != "schedplug-table-version") return;
    uint64_t version = 0;
    const auto [end, ec] =
        std::from_chars(value.data(), value.data() + value.size(), version);
    if (ec == std::errc() && end == value.data() + value.size())
      table_version = version;
  }
  std::optional<uint64_t> table_version;
};

class Replay {
 public:
  Replay(const ReplayOptions& options, std::ostream& diagnostics)
      : options_(options), diagnostics_(diagnostics) {}

  ReplayReport run();

 private:
  // What replay keeps of one recorded session.
  struct SessionState {
    std::string replay_id;
    TableMirror table;  // the recording's view, to name nodes
    // The replay's host's table version for the session: a delta moved
    // the table when a call's trailer shows it left this version.
    uint64_t host_version = 0;
    bool restored = false;
    // The current pod cycle: its pod, the gates the replay's PreFilter
    // reported, and the nodes the replay rejected that the recording
    // did not (kube-scheduler would not have scored them).
    std::string uid;
    bool applies_reported = false;
    std::vector<std::string> not_applying;
    std::unordered_set<uint32_t> newly_rejected;
  };

  void start_host(const v1::RecordedPluginSet& first);
  void replay_file(const std::filesystem::path& file);
  void open_session(const v1::RecordedSession& s);
  void restore(const v1::RecordedCheckpoint& c);
  void gap(const v1::RecordedGap& g);
  void call(const v1::RecordedCall& c);
  // A recorded delta the replay's host applied: into the session's mirror.
  void follow(SessionState& s, const v1::NodeTableDelta& delta);
  // After a call that carried `delta`: the mirror follows it if the
  // replay's host applied it (never a delta the host refused).
  void after_delta(SessionState& s, const v1::NodeTableDelta& delta,
                   const ReplayCallContext& context,
                   const grpc::Status& status);
  template <class Request>
  void gates_of_cycle(const SessionState& s, Request& request) const;
  // FilterNodes and Filter: calls within the cycle a PreFilter began, which
  // move no node table; replayed when they succeeded in the recording, and
  // `compare`d (session, recorded answer, replayed answer).
  template <class Response, class Request, class Serve, class Compare>
  void replay_within_cycle(const v1::RecordedCall& c, const char* method,
                           Request& request, Serve serve, Compare compare);
  // Reserve, Unreserve, Permit, PreBind and PreEnqueue: replayed in the
  // recording's order, so that a plugin that owns a resource holds in the
  // replay what it held then; a hook's answer that changed is a "hook"
  // difference.
  template <class Request, class Response>
  void replay_hook(const v1::RecordedCall& c, const char* method,
                   grpc::Status (CallPipeline::*serve)(CallContext&,
                                                       const Request&,
                                                       Response&));
  void compare_filters(SessionState& s, const v1::Pod& pod,
                       const std::string& scheduler_name,
                       const v1::PreFilterResponse& recorded,
                       const v1::PreFilterResponse& replayed);
  void compare_filter(const SessionState& s, const v1::Pod& pod,
                      const v1::FilterRequest& request,
                      const v1::FilterResponse& recorded,
                      const v1::FilterResponse& replayed);
  // Score answers (a PreScore's, or the scores ahead of a PreFilter or
  // FilterNodes): new failures, and the best native-scored node among the
  // nodes each answer scored.
  void compare_scores(
      const SessionState& s, const v1::Pod& pod,
      const std::string& scheduler_name,
      const google::protobuf::RepeatedPtrField<v1::PluginScores>& recorded,
      const google::protobuf::RepeatedField<uint32_t>& recorded_nodes,
      const google::protobuf::RepeatedPtrField<v1::PluginScores>& replayed,
      const google::protobuf::RepeatedField<uint32_t>& replayed_nodes);
  void differ(const std::string& kind, const v1::Pod& pod, std::string detail);
  // Notes what changed in the recorded host from `set` on: its
  // configuration, its plugin builds (hot reloads).
  void note_plugin_set(const std::filesystem::path& file,
                       const v1::RecordedPluginSet& set);
  template <class Request>
  void note_placements(const Request& request) {
    for (const v1::Placement& p : request.placed()) {
      if (!p.node().empty()) placed_[p.pod_uid()] = p.node();
    }
  }
  std::string node_name(const SessionState& s, uint32_t slot) const {
    const std::string& name = s.table.name(slot);
    return name.empty() ? fmt::format("slot {}", slot) : name;
  }
  void time_call(const v1::RecordedCall& c, Clock::duration took);

  const ReplayOptions& options_;
  std::ostream& diagnostics_;
  ReplayReport report_;
  ScratchDir scratch_;
  std::unique_ptr<HostApp> host_;
  std::string config_bytes_;  // what the host runs with
  // The recorded host's plugin builds so far: name -> "1.1.0 (sha256 ...)".
  std::map<std::string, std::string> recorded_builds_;
  bool builds_known_ = false;
  uint64_t epoch_ = 0;  // of the host that wrote the current file
  // The node kube-scheduler reserved for each pod, as later calls told the
  // recorded host (Placement); a pod without one stayed Pending, or the
  // recording ends first.
  std::unordered_map<std::string, std::string> placed_;
  // Pods with examples (options_.max_examples of them at most).
  std::unordered_set<std::string> example_pods_;
  std::unordered_map<std::string, SessionState> sessions_;
  std::unordered_set<std::string> pods_;
  std::map<std::string, std::unordered_set<std::string>> differing_;
  bool mirror_noted_ = false;  // the note of follow()
  // Per bucket: recorded and replayed durations, in microseconds.
  std::map<uint32_t, std::pair<std::vector<double>, std::vector<double>>>
      times_;
};

void Replay::start_host(const v1::RecordedPluginSet& first) {
  HostOptions host;
  host.plugins = options_.plugins;
  if (options_.config.empty()) {
    host.config = scratch_.path() / "recorded-config.yaml";
    std::ofstream(host.config, std::ios::binary) << first.config();
    config_bytes_ = first.config();
  } else {
    host.config = options_.config;
    std::ifstream in(options_.config, std::ios::binary);
    config_bytes_.assign(std::istreambuf_iterator<char>(in), {});
  }
  host.listen = "unix://" + (scratch_.path() / "host.sock").string();
  host.fast_path = false;
  host.watch = false;
  host.workers = options_.workers;
  host.memory_trim_interval = std::chrono::milliseconds(0);
  host.security.plugin_sha256 = options_.plugin_sha256;
  host.service.max_sessions = 1 << 16;
  host.service.max_sessions_per_peer = 1 << 16;
  host.service.max_session_memory = 0;
  host.service.max_total_session_memory = 0;
  host.service.recent_cycles.max_cycles = 0;
  try {
    host_ = HostApp::start(host, diagnostics_);
  } catch (const StartupError& e) {
    throw ReplayError(fmt::format(
        "replay cannot start a host on --plugins {} with {}: {}",
        options_.plugins.string(),
        options_.config.empty() ? std::string("the recording's configuration")
                                : "--config " + options_.config.string(),
        e.what()));
  }
}

ReplayReport Replay::run() {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  try {
    files = std::filesystem::is_directory(options_.record, ec)
                ? record_files(options_.record)
                : std::vector<std::filesystem::path>{options_.record};
  } catch (const RecordError& e) {
    throw ReplayError(e.what());
  }
  if (files.empty()) {
    throw ReplayError(fmt::format(
        "{} holds no recording files ({}NNNNNN{}); give --record the "
        "directory schedplug-host --record wrote",
        options_.record.string(), kRecordFilePrefix, kRecordFileSuffix));
  }
  for (const auto& file : files) replay_file(file);
  for (const auto& [kind, pods] : differing_) {
    const uint64_t n = pods.size();
    if (kind == "feasible") report_.feasible_changed = n;
    if (kind == "best_node") report_.best_node_changed = n;
    if (kind == "error") report_.new_errors = n;
    if (kind == "reason") report_.reasons_changed = n;
    if (kind == "hook") report_.hooks_changed = n;
  }
  report_.pods = pods_.size();
  report_.example_pods = example_pods_.size();
  std::unordered_set<std::string> differing;
  for (const auto& [_, pods] : differing_)
    differing.insert(pods.begin(), pods.end());
  report_.differing_pods = differing.size();
  for (ReplayDifference& d : report_.examples) {
    if (d.kind != "best_node") continue;
    auto at = placed_.find(d.uid);
    d.detail +=
        at != placed_.end()
            ? fmt::format("; kube-scheduler placed the pod on {}", at->second)
            : std::string(
                  "; no placement of the pod was recorded "
                  "(it stayed Pending, or the recording ends "
                  "first)");
  }
  auto median = [](std::vector<double>& v) {
    if (v.empty()) return 0.0;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2] / 1000.0;
  };
  for (auto& [bucket, t] : times_) {
    report_.timing.push_back({.max_nodes = bucket,
                              .calls = t.first.size(),
                              .recorded_median_ms = median(t.first),
                              .replay_median_ms = median(t.second)});
  }
  return std::move(report_);
}

void Replay::replay_file(const std::filesystem::path& file) {
  std::unique_ptr<RecordFileReader> reader;
  try {
    reader = std::make_unique<RecordFileReader>(file);
  } catch (const RecordError& e) {
    throw ReplayError(e.what());
  }
  v1::RecordEntry entry;
  if (!reader->next(entry) || !entry.has_header()) {
    report_.notes.push_back(
        fmt::format("{}: no header (an empty or damaged file); skipped",
                    file.filename().string()));
    return;
  }
  ++report_.files;
  const v1::RecordHeader& header = entry.header();
  if (host_ == nullptr) start_host(header.plugin_set());
  if (header.epoch() != epoch_) {
    // Another host process: its sessions are new ones.
    sessions_.clear();
    epoch_ = header.epoch();
  }
  note_plugin_set(file, header.plugin_set());
  while (reader->next(entry)) {
    switch (entry.entry_case()) {
      case v1::RecordEntry::kSession:
        open_session(entry.session());
        break;
      case v1::RecordEntry::kCheckpoint:
        restore(entry.checkpoint());
        break;
      case v1::RecordEntry::kCall:
        call(entry.call());
        break;
      case v1::RecordEntry::kGap:
        gap(entry.gap());
        break;
      case v1::RecordEntry::kPluginSet:
        note_plugin_set(file, entry.plugin_set());
        break;
      default:
        break;
    }
  }
  if (reader->truncated()) {
    report_.notes.push_back(fmt::format(
        "{} ends early (the host stopped while writing it); replayed up to "
        "its last whole entry",
        file.filename().string()));
  }
}

void Replay::note_plugin_set(const std::filesystem::path& file,
                             const v1::RecordedPluginSet& set) {
  const std::string name = file.filename().string();
  if (options_.config.empty() && set.config() != config_bytes_) {
    report_.notes.push_back(fmt::format(
        "{}: the recorded host ran another configuration from here on (a "
        "reload); the replay keeps the one it started with (give --config to "
        "choose)",
        name));
    config_bytes_ = set.config();
  }
  std::map<std::string, std::string> builds;
  for (const v1::PluginInfo& p : set.plugins()) {
    builds[p.name()] =
        fmt::format("{} (sha256 {})", p.version(), p.sha256().substr(0, 12));
  }
  if (!builds_known_) {
    recorded_builds_ = std::move(builds);
    builds_known_ = true;
    return;
  }
  if (builds == recorded_builds_) return;
  std::vector<std::string> changes;
  for (const auto& [plugin, build] : builds) {
    auto before = recorded_builds_.find(plugin);
    if (before == recorded_builds_.end()) {
      changes.push_back(fmt::format("{} {} added", plugin, build));
    } else if (before->second != build) {
      changes.push_back(
          fmt::format("{} {} became {}", plugin, before->second, build));
    }
  }
  for (const auto& [plugin, build] : recorded_builds_) {
    if (!builds.contains(plugin))
      changes.push_back(fmt::format("{} {} removed", plugin, build));
  }
  std::string all;
  for (const std::string& c : changes) all += (all.empty() ? "" : ", ") + c;
  report_.notes.push_back(fmt::format(
      "{}: the recorded host ran other plugin builds from here on (a hot "
      "reload: {}); the replay runs the plugins in {} throughout, so the "
      "recorded answers before and after this point came from different "
      "builds",
      name, all, options_.plugins.string()));
  recorded_builds_ = std::move(builds);
}

void Replay::open_session(const v1::RecordedSession& s) {
  if (sessions_.contains(s.session_id())) return;  // a later file's copy
  v1::HandshakeRequest request = s.handshake();
  // The replay's plugins may take other args: their settings are not the
  // recorded scheduler's business here.
  for (v1::ProfilePlugins& p : *request.mutable_profiles()) p.clear_settings();
  request.set_client_id("schedplug replay of " + request.client_id());
  v1::HandshakeResponse response;
  const grpc::Status status =
      host_->pipeline().handshake(request, response, std::string());
  if (!status.ok()) {
    throw ReplayError(fmt::format(
        "the replay's host refuses the recorded scheduler's Handshake: {}; "
        "the recording's profiles must enable the same native plugins as the "
        "configuration replay runs",
        status.error_message()));
  }
  sessions_[s.session_id()].replay_id = response.session_id();
}

void Replay::restore(const v1::RecordedCheckpoint& c) {
  auto it = sessions_.find(c.session_id());
  if (it == sessions_.end()) return;
  SessionState& s = it->second;
  if (s.restored && s.table.version() == c.table().new_version()) return;
  const grpc::Status status =
      host_->pipeline().restore_table(s.replay_id, c.table());
  if (!status.ok()) {
    throw ReplayError(
        fmt::format("the replay's host refuses a recorded node table: {}",
                    status.error_message()));
  }
  follow(s, c.table());
  s.restored = true;
}

void Replay::gap(const v1::RecordedGap& g) {
  report_.recording_gaps += g.calls();
  auto it = sessions_.find(g.session_id());
  if (it == sessions_.end()) return;
  for (const v1::NodeTableDelta& d : g.deltas()) {
    if (!host_->pipeline().restore_table(it->second.replay_id, d).ok()) return;
    follow(it->second, d);
  }
}

void Replay::follow(SessionState& s, const v1::NodeTableDelta& delta) {
  // The host's NodeTable::apply: an empty delta without a version keeps it.
  const bool empty =
      !delta.full() && delta.upserts_size() == 0 && delta.removed_size() == 0;
  if (!empty || delta.new_version() != 0) s.host_version = delta.new_version();
  v1::NodeTableDelta copy = delta;
  std::string error;
  if (!s.table.apply(copy, &error) && !mirror_noted_) {
    // The mirror's rules are the host's; this would be a bug, and it
    // only costs node names in the report.
    mirror_noted_ = true;
    report_.notes.push_back(
        "a node-table delta the replay's host accepted does not fit the "
        "replay's copy of the table (" +
        error + "); node names in this report may be wrong from there on");
  }
}

void Replay::after_delta(SessionState& s, const v1::NodeTableDelta& delta,
                         const ReplayCallContext& context,
                         const grpc::Status& status) {
  // Without the trailer the call was refused before the table; with it,
  // the table moved when it left the version it had. A valid non-full
  // delta always changes the version (new_version > base_version, the
  // table's); a full one may keep it, and then only a call that succeeded
  // is known to have applied it.
  if (!context.table_version) return;
  const uint64_t now = *context.table_version;
  const bool moved = now == delta.new_version() &&
                     (now != s.host_version || (delta.full() && status.ok()));
  if (moved) {
    follow(s, delta);
  } else {
    s.host_version = now;
  }
}

template <class Request>
void Replay::gates_of_cycle(const SessionState& s, Request& request) const {
  if (s.uid != request.pod().uid() || !s.applies_reported) return;
  request.set_applies_known(true);
  request.clear_not_applying();
  for (const std::string& name : s.not_applying) request.add_not_applying(name);
}

template <class Response, class Request, class Serve, class Compare>
void Replay::replay_within_cycle(const v1::RecordedCall& c, const char* method,
                                 Request& request, Serve serve,
                                 Compare compare) {
  auto it = sessions_.find(request.session_id());
  if (it == sessions_.end()) {
    ++report_.skipped_unknown_session;
    return;
  }
  SessionState& s = it->second;
  if (c.status_code() != 0) {
    ++report_.skipped_failed;
    return;
  }
  request.set_session_id(s.replay_id);
  gates_of_cycle(s, request);
  InProcessCallContext context;
  Response replayed;
  const auto start = Clock::now();
  const grpc::Status status =
      (host_->pipeline().*serve)(context, request, replayed);
  time_call(c, Clock::now() - start);
  ++report_.calls;
  if (!status.ok()) {
    differ("error", request.pod(),
           fmt::format("{} failed in the replay: {}", method,
                       status.error_message()));
    return;
  }
  Response recorded;
  recorded.ParseFromString(c.response());
  compare(s, recorded, replayed);
}

template <class Request, class Response>
void Replay::replay_hook(const v1::RecordedCall& c, const char* method,
                         grpc::Status (CallPipeline::*serve)(CallContext&,
                                                             const Request&,
                                                             Response&)) {
  Request request;
  if (!request.ParseFromString(c.request())) {
    report_.notes.push_back(fmt::format(
        "a recorded {} call that this schedplug cannot read was skipped",
        method));
    return;
  }
  auto it = sessions_.find(request.session_id());
  if (it == sessions_.end()) {
    ++report_.skipped_unknown_session;
    return;
  }
  if (c.status_code() != 0) {
    ++report_.skipped_failed;
    return;
  }
  request.set_session_id(it->second.replay_id);
  InProcessCallContext context;
  Response replayed;
  const auto start = Clock::now();
  const grpc::Status status =
      (host_->pipeline().*serve)(context, request, replayed);
  time_call(c, Clock::now() - start);
  ++report_.calls;
  std::string at;
  if constexpr (requires { request.node_name(); })
    at = " on " + request.node_name();
  if (!status.ok()) {
    differ("error", request.pod(),
           fmt::format("{}{} failed in the replay: {}", method, at,
                       status.error_message()));
    return;
  }
  Response recorded;
  recorded.ParseFromString(c.response());
  const std::string was = replay::hook_answer(recorded);
  const std::string now = replay::hook_answer(replayed);
  if (was != now) {
    differ("hook", request.pod(),
           fmt::format("{}{}: {} in the recording, {} in the replay", method,
                       at, was, now));
  }
}

void Replay::time_call(const v1::RecordedCall& c, Clock::duration took) {
  static constexpr uint32_t kBuckets[] = {100, 500, 1000, 2000, 5000, 10000};
  uint32_t bucket = 0;  // more than the last
  for (uint32_t b : kBuckets) {
    if (c.table_nodes() <= b) {
      bucket = b;
      break;
    }
  }
  auto& t = times_[bucket];
  t.first.push_back(static_cast<double>(c.duration_micros()));
  t.second.push_back(static_cast<double>(
      std::chrono::duration_cast<std::chrono::microseconds>(took).count()));
}

void Replay::differ(const std::string& kind, const v1::Pod& pod,
                    std::string detail) {
  auto& pods = differing_[kind];
  const std::string key = pod.uid().empty() ? pod_name(pod) : pod.uid();
  if (!pods.insert(key).second) return;  // one example per pod and kind
  // max_examples counts pods: each keeps its first difference of each kind.
  if (!example_pods_.contains(key)) {
    if (example_pods_.size() >= options_.max_examples) return;
    example_pods_.insert(key);
  }
  report_.examples.push_back({.kind = kind,
                              .pod = pod_name(pod),
                              .uid = pod.uid(),
                              .detail = std::move(detail)});
}

void Replay::call(const v1::RecordedCall& c) {
  // Whether the recorded call moved the node table: then it is replayed
  // even when it failed, so the table follows.
  auto moved = [&](const v1::NodeTableDelta& d) {
    return (d.full() || d.upserts_size() > 0 || d.removed_size() > 0) &&
           d.new_version() == c.table_version();
  };
  auto session_of = [&](const std::string& id) -> SessionState* {
    auto it = sessions_.find(id);
    if (it == sessions_.end()) {
      ++report_.skipped_unknown_session;
      return nullptr;
    }
    return &it->second;
  };
  const bool recorded_ok = c.status_code() == 0;
  // A PreFilter's or PreScore's session, or nullptr when the call is not
  // replayed (unknown session; failed without moving the table).
  auto replayed_session = [&](const auto& request) -> SessionState* {
    SessionState* s = session_of(request.session_id());
    if (s == nullptr) return nullptr;
    if (!recorded_ok && !(request.has_delta() && moved(request.delta()))) {
      ++report_.skipped_failed;
      return nullptr;
    }
    return s;
  };
  switch (c.method()) {
    case v1::RECORDED_METHOD_PRE_FILTER: {
      v1::PreFilterRequest request;
      if (!request.ParseFromString(c.request())) break;
      note_placements(request);
      SessionState* s = replayed_session(request);
      if (s == nullptr) return;
      pods_.insert(request.pod().uid());
      ++report_.cycles;
      request.set_session_id(s->replay_id);
      v1::PreFilterResponse replayed;
      ReplayCallContext context;
      const auto start = Clock::now();
      const grpc::Status status =
          host_->pipeline().pre_filter(context, request, replayed);
      const auto took = Clock::now() - start;
      ++report_.calls;
      if (request.has_delta())
        after_delta(*s, request.delta(), context, status);
      s->uid = request.pod().uid();
      s->applies_reported = replayed.applies_reported();
      s->not_applying.assign(replayed.not_applying().begin(),
                             replayed.not_applying().end());
      s->newly_rejected.clear();
      if (!recorded_ok) return;
      time_call(c, took);
      if (!status.ok()) {
        differ("error", request.pod(),
               "PreFilter failed in the replay: " + status.error_message());
        return;
      }
      v1::PreFilterResponse recorded;
      recorded.ParseFromString(c.response());
      compare_filters(*s, request.pod(), request.scheduler_name(), recorded,
                      replayed);
      return;
    }
    case v1::RECORDED_METHOD_FILTER_NODES: {
      v1::FilterNodesRequest request;
      if (!request.ParseFromString(c.request())) break;
      replay_within_cycle<v1::PreFilterResponse>(
          c, "FilterNodes", request, &CallPipeline::filter_nodes,
          [&](SessionState& s, const v1::PreFilterResponse& recorded,
              const v1::PreFilterResponse& replayed) {
            compare_filters(s, request.pod(), request.scheduler_name(),
                            recorded, replayed);
          });
      return;
    }
    case v1::RECORDED_METHOD_FILTER: {
      v1::FilterRequest request;
      if (!request.ParseFromString(c.request())) break;
      replay_within_cycle<v1::FilterResponse>(
          c, "Filter", request, &CallPipeline::filter,
          [&](SessionState& s, const v1::FilterResponse& recorded,
              const v1::FilterResponse& replayed) {
            compare_filter(s, request.pod(), request, recorded, replayed);
          });
      return;
    }
    case v1::RECORDED_METHOD_PRE_SCORE: {
      v1::PreScoreRequest request;
      if (!request.ParseFromString(c.request())) break;
      note_placements(request);
      SessionState* s = replayed_session(request);
      if (s == nullptr) return;
      const v1::PreScoreRequest recorded_request = request;
      request.set_session_id(s->replay_id);
      if (request.has_delta()) {
        // A score-only profile's one call of the cycle.
        pods_.insert(request.pod().uid());
        ++report_.cycles;
        s->uid = request.pod().uid();
        s->applies_reported = false;
        s->newly_rejected.clear();
      } else {
        gates_of_cycle(*s, request);
        if (s->uid == request.pod().uid() && !s->newly_rejected.empty()) {
          // kube-scheduler scores only the nodes that passed every
          // filter: not those the replayed filters now reject.
          request.clear_nodes();
          for (uint32_t slot : recorded_request.nodes()) {
            if (!s->newly_rejected.contains(slot)) request.add_nodes(slot);
          }
        }
      }
      v1::PreScoreResponse replayed;
      ReplayCallContext context;
      const auto start = Clock::now();
      const grpc::Status status =
          host_->pipeline().pre_score(context, request, replayed);
      const auto took = Clock::now() - start;
      ++report_.calls;
      if (request.has_delta())
        after_delta(*s, request.delta(), context, status);
      if (!recorded_ok) return;
      time_call(c, took);
      if (!status.ok()) {
        differ("error", request.pod(),
               "PreScore failed in the replay: " + status.error_message());
        return;
      }
      v1::PreScoreResponse recorded;
      recorded.ParseFromString(c.response());
      compare_scores(*s, request.pod(), request.scheduler_name(),
                     recorded.plugins(), recorded_request.nodes(),
                     replayed.plugins(), request.nodes());
      return;
    }
    case v1::RECORDED_METHOD_RESERVE:
      replay_hook(c, "Reserve", &CallPipeline::reserve);
      return;
    case v1::RECORDED_METHOD_UNRESERVE:
      replay_hook(c, "Unreserve", &CallPipeline::unreserve);
      return;
    case v1::RECORDED_METHOD_PERMIT:
      replay_hook(c, "Permit", &CallPipeline::permit);
      return;
    case v1::RECORDED_METHOD_PRE_BIND:
      replay_hook(c, "PreBind", &CallPipeline::pre_bind);
      return;
    case v1::RECORDED_METHOD_PRE_ENQUEUE:
      replay_hook(c, "PreEnqueue", &CallPipeline::pre_enqueue);
      return;
    default:
      break;
  }
  report_.notes.push_back(
      "a recorded call that this schedplug cannot read was skipped");
}

void Replay::compare_filters(SessionState& s, const v1::Pod& pod,
                             const std::string& scheduler_name,
                             const v1::PreFilterResponse& recorded,
                             const v1::PreFilterResponse& replayed) {
  const auto before = rejections(recorded);
  const auto after = rejections(replayed);
  std::vector<std::string> changes;
  std::string reason_change;
  for (const auto& [slot, v] : after) {
    auto it = before.find(slot);
    if (it == before.end()) {
      s.newly_rejected.insert(slot);
      changes.push_back(
          fmt::format("{} passed in the recording, {} in the "
                      "replay",
                      node_name(s, slot), describe(v)));
    } else if (it->second.plugin != v.plugin || it->second.reason != v.reason ||
               it->second.code != v.code) {
      if (reason_change.empty()) {
        reason_change =
            fmt::format("{}: {} in the recording, {} in the replay",
                        node_name(s, slot), describe(it->second), describe(v));
      }
    }
  }
  for (const auto& [slot, v] : before) {
    if (!after.contains(slot)) {
      changes.push_back(
          fmt::format("{} {} in the recording, passes in the "
                      "replay",
                      node_name(s, slot), describe(v)));
    }
  }
  if (!changes.empty()) {
    std::string detail =
        fmt::format("{} node verdict{} changed: {}", changes.size(),
                    changes.size() == 1 ? "" : "s", changes.front());
    if (changes.size() > 1)
      detail += fmt::format(" (and {} more)", changes.size() - 1);
    differ("feasible", pod, std::move(detail));
  }
  if (!reason_change.empty()) differ("reason", pod, reason_change);
  const std::string failure = filter_failure(replayed);
  if (!failure.empty() && filter_failure(recorded).empty())
    differ("error", pod, failure);
  // Scores ahead: compared when both answers have them (a replayed filter
  // that did not finish leaves them out, and is reported above).
  if (recorded.has_scores_ahead() && replayed.has_scores_ahead()) {
    compare_scores(s, pod, scheduler_name, recorded.scores_ahead().plugins(),
                   recorded.scores_ahead().nodes(),
                   replayed.scores_ahead().plugins(),
                   replayed.scores_ahead().nodes());
  }
}

void Replay::compare_filter(const SessionState& s, const v1::Pod& pod,
                            const v1::FilterRequest& request,
                            const v1::FilterResponse& recorded,
                            const v1::FilterResponse& replayed) {
  (void)s;
  const bool passed_before =
      recorded.code() == v1::CODE_SUCCESS || recorded.code() == v1::CODE_SKIP;
  const bool passes_now =
      replayed.code() == v1::CODE_SUCCESS || replayed.code() == v1::CODE_SKIP;
  const std::string& node = request.node().name();
  if (passed_before != passes_now) {
    differ("feasible", pod,
           passes_now
               ? fmt::format("{} rejected by {} ({}) in the recording, passes "
                             "in the replay",
                             node, recorded.plugin(), recorded.reason())
               : fmt::format("{} passed in the recording, rejected by {} ({}) "
                             "in the replay",
                             node, replayed.plugin(), replayed.reason()));
  } else if (!passes_now && (recorded.plugin() != replayed.plugin() ||
                             recorded.reason() != replayed.reason())) {
    differ("reason", pod,
           fmt::format("{}: rejected by {} ({}) in the recording, by {} ({}) "
                       "in the replay",
                       node, recorded.plugin(), recorded.reason(),
                       replayed.plugin(), replayed.reason()));
  }
  if (replayed.code() == v1::CODE_ERROR && recorded.code() != v1::CODE_ERROR)
    differ("error", pod,
           fmt::format("{}: {} failed ({})", node, replayed.plugin(),
                       replayed.reason()));
  if (!replayed.unfinished().empty() && recorded.unfinished().empty())
    differ("error", pod, replayed.unfinished(0).reason());
}

void Replay::compare_scores(
    const SessionState& s, const v1::Pod& pod,
    const std::string& scheduler_name,
    const google::protobuf::RepeatedPtrField<v1::PluginScores>& recorded,
    const google::protobuf::RepeatedField<uint32_t>& recorded_nodes,
    const google::protobuf::RepeatedPtrField<v1::PluginScores>& replayed,
    const google::protobuf::RepeatedField<uint32_t>& replayed_nodes) {
  const std::string failure = score_failure(replayed);
  if (!failure.empty() && score_failure(recorded).empty())
    differ("error", pod, failure);
  const auto plugins = host_->pipeline().plugins();
  static const std::vector<int> kNoWeights;
  auto w = plugins->score_weights.find(scheduler_name);
  const std::vector<int>& weights =
      w == plugins->score_weights.end() ? kNoWeights : w->second;
  const Best before = best_nodes(recorded, recorded_nodes, weights);
  const Best after = best_nodes(replayed, replayed_nodes, weights);
  if (before.slots == after.slots) return;
  auto names = [&](const Best& b) {
    if (b.slots.empty()) return std::string("no node");
    std::string out;
    for (uint32_t slot : b.slots)
      out += (out.empty() ? "" : ", ") + node_name(s, slot);
    return fmt::format("{} (weighted score {})", out, b.score);
  };
  // A ranking, not a placement: kube-scheduler adds its in-tree scores,
  // and the pod may have stayed Pending (run() says which).
  differ("best_node", pod,
         fmt::format("the native scores rank {} first in the recording, {} in "
                     "the replay",
                     names(before), names(after)));
}

}  // namespace

ReplayReport replay_recording(const ReplayOptions& options,
                              std::ostream& diagnostics) {
  Replay replay(options, diagnostics);
  return replay.run();
}

}  // namespace schedplug::host
