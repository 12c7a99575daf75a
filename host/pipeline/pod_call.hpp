// The skeleton every call of the pipeline shares: the state of one call
// in flight (CallPipeline::Call), the helpers that describe calls in
// messages, and run_pod_call, which takes a pod's call through its session,
// lock, delta and cycle before the call's own steps. Internal to
// host/pipeline.
#pragma once

#include <algorithm>
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "host/convert/convert.hpp"
#include "host/pipeline/call_pipeline.hpp"
#include "host/pipeline/call_text.hpp"

namespace schedplug::host {
namespace call_support {

inline std::string unknown_session(const std::string& id) {
  return "unknown session \"" + id +
         "\": the host restarted or the session expired; handshake again "
         "and send the full node table";
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

// "pod ns/name on node \"n\" (profile \"p\")" (node: nullptr for none).
inline std::string pod_call_what(const v1::Pod& pod, const std::string* node,
                                 const std::string& profile) {
  return "pod " + pod_label(pod) +
         (node ? " on node \"" + clipped(*node) + "\"" : "") + " (profile \"" +
         profile + "\")";
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

// One call in flight: what to log, measure and record when it ends.
struct CallPipeline::Call {
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
  // What finish() tells the observers (took and status aside).
  CallEnded ended{.method = method};

  template <class Request>
  void record_as(v1::RecordedMethod as, const Request& request,
                 const google::protobuf::Message& response) {
    ended.recorded = as;
    ended.session_id = &request.session_id();
    ended.request = &request;
    ended.response = &response;
    if constexpr (requires { request.has_delta(); }) {
      if (request.has_delta()) ended.delta = &request.delta();
    }
  }
  void saw_table(const NodeTable& table) {
    ended.table_version = table.version();
    ended.table_nodes = static_cast<uint32_t>(table.size());
  }
};

// How a pod's call goes through the skeleton.
struct CallPipeline::PodCallPlan {
  const char* method;
  v1::RecordedMethod recorded;
  // The node-table delta to apply under the call lock (nullptr: none; the
  // call then works on the table at `table_version`).
  const v1::NodeTableDelta* delta = nullptr;
  uint64_t table_version = 0;
  // Holds the session's call lock and works on its table (Filter does
  // not: it brings its one node).
  bool uses_table = true;
  // The call begins the pod's cycle (PreFilter); otherwise it continues
  // the cycle PreFilter began, when the host still holds it, unless it
  // carried a delta (a new table ends the previous cycle).
  bool begins_cycle = false;
  // The node named in the call's description (Filter's).
  const std::string* node = nullptr;
};

// What a pod call's own steps work on.
struct CallPipeline::PodCallState {
  Session& session;
  const ProfilePlugins* profile;
  const v1::Pod& pod_message;
  const PodModel& pod;
  const NodeTable& table;
  const TableDelta& delta;
  // The pod's cycle (nullptr: each plugin begins and ends the pod within
  // the chain run).
  std::shared_ptr<const PodCycle> cycle;
};

inline CallPipeline::Call CallPipeline::begin_call(const char* method,
                                                   CallContext& context) const {
  Call call(method, &context);
  call.plugins = plugins();
  call.deadline = deadline_for(context, call.start);
  return call;
}

template <class Request, class Response, class Check, class Steps>
grpc::Status CallPipeline::run_pod_call(const PodCallPlan& plan,
                                        CallContext& context,
                                        const Request& request,
                                        Response& response, Check&& check,
                                        Steps&& steps) {
  using namespace call_support;
  Call call = begin_call(plan.method, context);
  call.what = pod_call_what(request.pod(), plan.node, request.scheduler_name());
  call.record_as(plan.recorded, request, response);
  std::shared_ptr<Session> session;
  const ProfilePlugins* profile = nullptr;
  if (auto s =
          find_session_and_profile(call, request.session_id(),
                                   request.scheduler_name(), session, profile);
      !s.ok())
    return finish(call, s);
  // Decoded and checked before the table is reached, so a refusal carries
  // no table-version trailer: a resync would send the same node again.
  PodData pod_data;
  TableDelta delta;
  try {
    pod_data = pod_from_proto(request.pod());
    if (plan.delta != nullptr) delta = delta_from_proto(*plan.delta);
  } catch (const FieldLimitError& e) {
    return finish(call, field_limit_status(e));
  }
  if (grpc::Status s = check(*profile); !s.ok()) return finish(call, s);
  const size_t pod_bytes = plan.delta ? estimated_bytes(pod_data) : 0;
  auto pod = std::make_unique<const PodModel>(std::move(pod_data));

  std::optional<SessionCall> lock;
  const NodeTable& table = session->table;
  if (plan.uses_table) {
    lock.emplace(*session, call.deadline,
                 std::string(plan.method) + " " + call.what);
    if (!lock->owns()) {
      return finish(call, plan.delta
                              ? busy_with_delta(call, context, *session, *lock)
                              : busy_status(call, *lock));
    }
    if (session->evicted()) {
      return finish(call, {grpc::StatusCode::FAILED_PRECONDITION,
                           unknown_session(request.session_id())});
    }
    call.saw_table(table);
    if (plan.delta != nullptr) {
      if (grpc::Status s =
              apply_delta(call, context, *session, delta, pod_bytes);
          !s.ok()) {
        return finish(call, s);
      }
      // A new table: the previous pod's cycle ends.
      session->end_cycle();
    } else if (grpc::Status s =
                   table_version_status(table, plan.table_version, plan.method);
               !s.ok()) {
      return finish(call, s);
    }
    if constexpr (requires { request.placed(); })
      tell(&CallObserver::placed, request.placed());
  }

  std::shared_ptr<const PodCycle> cycle;
  if (plan.begins_cycle) {
    // Every native plugin of the profile begins this pod once (pod_begin,
    // or applies() for a plugin without it); the calls that follow in this
    // cycle use the same per-pod states.
    const std::string key = cycle_key(request.scheduler_name(), pod->data());
    cycle = std::make_shared<const PodCycle>(key, std::move(pod),
                                             profile->plugins, call.plugins);
    tell(&CallObserver::cycle_began, *cycle);
    session->begin_cycle(cycle);
  } else if (plan.delta == nullptr) {
    cycle = session->cycle(cycle_key(request.scheduler_name(), pod->data()));
    if (cycle) continue_cycle(call, *cycle, profile);
  }
  identity_of(call).to_proto(*response.mutable_identity());
  const PodModel& pod_model = cycle && plan.begins_cycle ? cycle->pod() : *pod;
  PodCallState state{.session = *session,
                     .profile = profile,
                     .pod_message = request.pod(),
                     .pod = pod_model,
                     .table = table,
                     .delta = delta,
                     .cycle = std::move(cycle)};
  return finish(call, steps(call, state));
}

}  // namespace schedplug::host
