// What the HostService's call handlers share (handshake.cpp,
// filter_calls.cpp, score_call.cpp and host_service.cpp): the record of
// one call in flight and the helpers that describe calls in messages.
// Internal to host/service.
#pragma once

#include <algorithm>
#include <chrono>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "host/record/cycle_recorder.hpp"
#include "host/service/host_service.hpp"
#include "schedplug/v1/record.pb.h"

namespace schedplug::host {
namespace call_support {

using Clock = std::chrono::steady_clock;
using std::chrono::duration;
using std::chrono::milliseconds;

inline const char* code_name(grpc::StatusCode code) {
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

inline double ms(Clock::duration d) {
  return duration<double, std::milli>(d).count();
}

// At most 128 bytes of `s` (a name over FieldLimits may be huge; calls
// are described before their fields are checked).
inline std::string clipped(const std::string& s) {
  return s.size() <= 128 ? s : s.substr(0, 128) + "...";
}

inline std::string pod_label(const v1::Pod& pod) {
  return clipped(pod.namespace_()) + "/" + clipped(pod.name());
}

// "A 0.12 ms (500 nodes), B skipped, ..." for slow-call logs.
inline std::string runs_summary(const ChainRuns& runs) {
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
// "1.50 GiB" for messages.
inline std::string human_bytes(size_t bytes) {
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

inline std::string unknown_session(const std::string& id) {
  return "unknown session \"" + id +
         "\": the host restarted or the session expired; handshake again "
         "and send the full node table";
}

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

// A PreScore or FilterNodes works on the table its cycle's PreFilter
// answered for; after any change the shim must start over with the full
// table.
inline grpc::Status table_version_status(const NodeTable& table,
                                         uint64_t requested,
                                         std::string_view method) {
  if (requested == table.version()) return grpc::Status::OK;
  return {grpc::StatusCode::FAILED_PRECONDITION,
          fmt::format("node table version mismatch: the node table is at "
                      "version {}, the {} request is for version {}; the "
                      "table changed since this pod's PreFilter: send the "
                      "full node table with the next PreFilter",
                      table.version(), method, requested)};
}

}  // namespace call_support

// One RPC in flight: what to log and measure when it ends.
struct HostService::Call {
  Call(const char* method_name, CallContext* call_context)
      : method(method_name), context(call_context) {}
  const char* method;
  CallContext* context;  // nullptr: the Handshake (no deadline, no trailers)
  // The plugin set the call runs on (plugin_generation.hpp).
  std::shared_ptr<const PluginGeneration> plugins;
  Clock::time_point start = Clock::now();
  Deadline deadline = Deadline::never();
  std::string what;     // "pod ns/name, profile X"
  std::string summary;  // for the debug log only: left empty unless it is on
  // What finish() hands the recorder (--record) of a pod's call; no
  // method: not recorded (the Handshake, Explain).
  struct Recorded {
    v1::RecordedMethod method = v1::RECORDED_METHOD_UNSPECIFIED;
    const std::string* session_id = nullptr;
    const google::protobuf::Message* request = nullptr;
    const google::protobuf::Message* response = nullptr;
    const v1::NodeTableDelta* delta = nullptr;  // the request's, if any
    // The session's table after the call, once the call reached it.
    uint64_t table_version = 0;
    uint32_t table_nodes = 0;
  } recorded;
  template <class Request>
  void record_as(v1::RecordedMethod as, const Request& request,
                 const google::protobuf::Message& response) {
    recorded.method = as;
    recorded.session_id = &request.session_id();
    recorded.request = &request;
    recorded.response = &response;
  }
  void saw_table(const NodeTable& table) {
    recorded.table_version = table.version();
    recorded.table_nodes = static_cast<uint32_t>(table.size());
  }
};

template <class Request>
HostService::Call HostService::pod_call(const char* method,
                                        CallContext& context,
                                        const Request& request) const {
  Call call(method, &context);
  call.plugins = plugins();
  call.deadline = deadline_for(context, call.start);
  call.what = "pod " + call_support::pod_label(request.pod()) + " (profile \"" +
              request.scheduler_name() + "\")";
  return call;
}

template <class Request>
grpc::Status HostService::find_session_and_profile(
    const Call& call, const Request& request, std::shared_ptr<Session>& session,
    const ProfilePlugins*& profile) {
  if (auto s = find_session(request.session_id(), session); !s.ok()) return s;
  return find_profile(call, request.scheduler_name(), profile);
}

}  // namespace schedplug::host
