// What the call pipeline tells the observers the app registers (metrics,
// the --record recorder, the recent cycles behind Explain, the
// shadow candidates, the session watches): each call and what its chains
// did, as it happens. Observers run on the calling thread, most of them
// while the call holds its session, in the order they were added: they
// copy what they keep and return quickly. A new extension point adds an
// event here only when an observer needs one.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <google/protobuf/repeated_ptr_field.h>
#include <grpcpp/support/status.h>

#include "host/chain/filter_chain.hpp"
#include "host/chain/pod_cycle.hpp"
#include "host/chain/score_chain.hpp"
#include "host/identity/host_identity.hpp"
#include "host/reload/plugin_generation.hpp"
#include "host/session/sessions.hpp"
#include "schedplug/v1/record.pb.h"
#include "schedplug/v1/schedplug.pb.h"

namespace schedplug::host {

// The filter chain ran on a pod's nodes (PreFilter, FilterNodes).
struct FiltersRan {
  // The set the call ran on.
  const std::shared_ptr<const PluginGeneration>& plugins;
  const Session& session;
  const ProfilePlugins& profile;
  const v1::Pod& pod;
  const NodeTable& table;
  // The nodes evaluated, by table slot (nullptr: not evaluated).
  std::span<const schedplug_node* const> views;
  const FilterOutcome& outcome;
  // The call began the pod's cycle (PreFilter): its first filter pass.
  bool begins_cycle = false;
};

// The score chain ran (PreScore, or scores ahead within PreFilter and
// FilterNodes).
struct ScoresRan {
  const std::shared_ptr<const PluginGeneration>& plugins;
  const Session& session;
  const ProfilePlugins& profile;
  const v1::Pod& pod;
  const NodeTable& table;
  std::span<const schedplug_node* const> nodes;
  std::span<const uint32_t> slots;  // the same nodes as table slots
  const ScoreOutcome& outcome;
  // The call began the pod's cycle (a PreScore that carried a delta).
  bool begins_cycle = false;
  // Raw scores, left for the shim to normalize (scores ahead, PreScore's
  // `raw`): kept raw until the shim says which nodes kube-scheduler scored.
  bool raw = false;
};

// "INVALID_ARGUMENT", for logs and metrics.
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

// A call ended, answered or refused.
struct CallEnded {
  const char* method = nullptr;
  const grpc::Status* status = nullptr;
  std::chrono::steady_clock::duration took{};
  // What --record keeps of a pod's call; RECORDED_METHOD_UNSPECIFIED for
  // the others (Handshake, NoteCycles), and the pointers are then null.
  v1::RecordedMethod recorded = v1::RECORDED_METHOD_UNSPECIFIED;
  const std::string* session_id = nullptr;
  const google::protobuf::Message* request = nullptr;
  const google::protobuf::Message* response = nullptr;
  const v1::NodeTableDelta* delta = nullptr;  // the request's, if any
  // The session's table after the call, once the call reached it.
  uint64_t table_version = 0;
  uint32_t table_nodes = 0;
};

class CallObserver {
 public:
  virtual ~CallObserver() = default;

  // Calls that begin now run on `plugins` (a reload swapped them in).
  virtual void plugins_swapped(const PluginGeneration&, const HostIdentity&) {}
  virtual void session_opened(const Session&, const v1::HandshakeRequest&) {}
  // Evicted by a bound or the idle timeout; `released` is what it held.
  virtual void session_closed(const Session&, const Session::Released&) {}
  // A delta changed a session's table (`applied`: the accounting).
  virtual void table_changed(const Session&, const TableDelta&,
                             const AppliedDelta&) {}
  // A request refused for `reason` (field_length, session_memory, ...).
  virtual void refused(std::string_view) {}
  virtual void handshake_refused(std::string_view) {}
  // A pod cycle began: every plugin's pod_begin (or applies) ran.
  virtual void cycle_began(const PodCycle&) {}
  // A chain ran at `extension_point` ("filter", "score").
  virtual void chain_ran(const ChainRuns&, std::string_view) {}
  // A plugin did not finish before its deadline.
  virtual void plugin_unfinished(const std::string&) {}
  virtual void filters_ran(const FiltersRan&) {}
  virtual void scores_ran(const ScoresRan&) {}
  // What became of earlier cycles (the requests' `placed`).
  virtual void placed(
      const google::protobuf::RepeatedPtrField<v1::Placement>&) {}
  virtual void call_ended(const CallEnded&) {}

  // Questions the pipeline asks before a chain runs.
  // The observer reads raw scores beside normalized ones (ScoresRan).
  virtual bool keeps_raw_scores() const { return false; }
  // The observer compares the profile's normalized scores (a PreScore of
  // such a profile is answered normalized, and no scores go ahead).
  virtual bool needs_normalized_scores(const ProfilePlugins&) const {
    return false;
  }
};

}  // namespace schedplug::host
