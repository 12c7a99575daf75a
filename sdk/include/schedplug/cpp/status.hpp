// schedplug C++ layer, part "status": Status, what a hook returns, and
// Reason, a rejection reason built once. Included by <schedplug/plugin.hpp>.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "schedplug/plugin.h"

namespace schedplug {

// ---------------------------------------------------------------------------
// Status
// ---------------------------------------------------------------------------

// A rejection reason built once (usually in the constructor) and returned
// for many nodes. Status keeps a view of it instead of a copy, so rejecting
// a node allocates nothing. Keep it alive as long as the plugin: make it a
// member. (Passing a temporary Reason to Status is a compile error.)
class Reason {
 public:
  Reason() = default;
  explicit Reason(std::string text) : text_(std::move(text)) {}
  std::string_view view() const { return text_; }

 private:
  std::string text_;
};

// What a hook returns. A Filter reason is shown by kube-scheduler as
// "0/5 nodes are available: 3 <reason>.", so write a short phrase that
// starts with "node(s)": "node(s) lack hardware encryption".
class Status {
 public:
  static Status Success() { return Status(SCHEDPLUG_SUCCESS); }
  // The node does not fit now; preemption may help.
  static Status Unschedulable(std::string reason) {
    return Status(SCHEDPLUG_UNSCHEDULABLE, std::move(reason));
  }
  static Status Unschedulable(const Reason& reason) {
    return Status(SCHEDPLUG_UNSCHEDULABLE, reason.view());
  }
  static Status Unschedulable(const Reason&&) = delete;
  // The node does not fit and preempting pods cannot change that.
  static Status UnschedulableAndUnresolvable(std::string reason) {
    return Status(SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE, std::move(reason));
  }
  static Status UnschedulableAndUnresolvable(const Reason& reason) {
    return Status(SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE, reason.view());
  }
  static Status UnschedulableAndUnresolvable(const Reason&&) = delete;
  // A real internal error. A Filter error aborts the pod's whole scheduling
  // cycle; never use it to reject a node.
  static Status Error(std::string message) {
    return Status(SCHEDPLUG_ERROR, std::move(message));
  }
  static Status Skip() { return Status(SCHEDPLUG_SKIP); }
  // Permit only (ABI v1.6): hold the pod until Host::PermitAllow /
  // PermitReject names its uid, or until `timeout` passes (then the pod is
  // rejected). From 1 ms to SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS (15 min);
  // anything else makes Permit fail with an ERROR saying so.
  static Status Wait(std::chrono::milliseconds timeout) {
    Status s(SCHEDPLUG_WAIT);
    s.timeout_ = timeout;
    return s;
  }

  schedplug_code code() const { return code_; }
  std::string_view reason() const {
    return borrowed_.data() != nullptr ? borrowed_ : std::string_view(owned_);
  }
  bool ok() const { return code_ == SCHEDPLUG_SUCCESS; }
  // The wait of Status::Wait; zero for the other statuses.
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  explicit Status(schedplug_code code) : code_(code) {}
  Status(schedplug_code code, std::string reason)
      : code_(code), owned_(std::move(reason)) {}
  Status(schedplug_code code, std::string_view borrowed)
      : code_(code), borrowed_(borrowed.data() ? borrowed : "") {}
  schedplug_code code_;
  std::string owned_;          // a reason built for this call
  std::string_view borrowed_;  // or a view of a Reason the plugin keeps
  std::chrono::milliseconds timeout_{0};
};

// kube-scheduler's name of a code ("UnschedulableAndUnresolvable"), for
// messages and reports.
inline const char* code_name(int code) {
  switch (code) {
    case SCHEDPLUG_SUCCESS:
      return "Success";
    case SCHEDPLUG_ERROR:
      return "Error";
    case SCHEDPLUG_UNSCHEDULABLE:
      return "Unschedulable";
    case SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE:
      return "UnschedulableAndUnresolvable";
    case SCHEDPLUG_WAIT:
      return "Wait";
    case SCHEDPLUG_SKIP:
      return "Skip";
    default:
      return "Unknown";
  }
}

}  // namespace schedplug
