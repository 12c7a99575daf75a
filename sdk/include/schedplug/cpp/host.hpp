// schedplug C++ layer, part "host": the host's services for one instance
// (Host: its log, the permit decisions), the per-instance Settings a class may
// change in Configure, and the Gates BeginPod may close. Included by
// <schedplug/plugin.hpp>.
#pragma once

#include <cstdint>
#include <string_view>

#include "schedplug/cpp/views.hpp"
#include "schedplug/plugin.h"

namespace schedplug {

// ---------------------------------------------------------------------------
// Host services
// ---------------------------------------------------------------------------

// The host's services for one plugin instance (its log, the decisions on
// pods its Permit made wait). Copyable; valid for the instance's lifetime;
// safe from any thread.
class Host {
 public:
  Host() = default;
  explicit Host(const schedplug_host* host) : h_(host) {}

  void log(schedplug_log_level level, std::string_view msg) const {
    if (h_ == nullptr || h_->log == nullptr) return;
    h_->log(h_->context, level, detail::str(msg));
  }
  void error(std::string_view msg) const { log(SCHEDPLUG_LOG_ERROR, msg); }
  void warning(std::string_view msg) const { log(SCHEDPLUG_LOG_WARNING, msg); }
  void info(std::string_view msg) const { log(SCHEDPLUG_LOG_INFO, msg); }
  void debug(std::string_view msg) const { log(SCHEDPLUG_LOG_DEBUG, msg); }

  // Ends the wait of the pod with uid `pod_uid` that this instance's Permit
  // answered Status::Wait for: it goes on to binding once every plugin
  // that made it wait allowed it (ABI v1.6). SUCCESS when the host passed
  // the decision on, SKIP when no such pod waits on this instance (allowed,
  // rejected or timed out already), ERROR when the scheduler is not
  // connected or the host predates ABI v1.6. Also from inside a hook
  // (Permit of a group's last member allowing the others) or Refresh.
  schedplug_code PermitAllow(std::string_view pod_uid) const {
    if (!has_permit_services()) return SCHEDPLUG_ERROR;
    return h_->permit_allow(h_->context, detail::str(pod_uid));
  }
  // Rejects a waiting pod with `reason` (shown on the pod): its
  // reservations are undone and it goes back to the queue. Returns as
  // PermitAllow does.
  schedplug_code PermitReject(std::string_view pod_uid,
                              std::string_view reason) const {
    if (!has_permit_services()) return SCHEDPLUG_ERROR;
    return h_->permit_reject(h_->context, detail::str(pod_uid),
                             detail::str(reason));
  }

 private:
  bool has_permit_services() const {
    return h_ != nullptr &&
           SCHEDPLUG_HAS_FIELD(h_, schedplug_host, permit_reject) &&
           h_->permit_allow != nullptr && h_->permit_reject != nullptr;
  }
  const schedplug_host* h_ = nullptr;
};

// ---------------------------------------------------------------------------
// Per-instance settings (plugin.h's schedplug_settings): a class's optional
// `void Configure(Settings&) const` runs right after its constructor, with
// the static declarations (kRefreshPeriodMs, kEvents, kNormalize) filled in,
// and may change them from its args. A host older than ABI v1.1 keeps the
// static ones.
// ---------------------------------------------------------------------------

struct Settings {
  uint32_t refresh_period_ms = 0;
  uint64_t events = 0;
  schedplug_normalize_policy normalize = SCHEDPLUG_NORMALIZE_NONE;
  // SCHEDPLUG_DATA_* bits: the pod and node data the instance reads
  // (starts as the class's kData; ABI v1.2).
  uint64_t data = 0;
  // SCHEDPLUG_HINT_* bits: promises that let the scheduler skip work
  // (starts as the class's kHints; ABI v1.3; ignored by older hosts).
  uint64_t hints = 0;
};

// Which of a plugin's hooks run for a pod; BeginPod clears what to skip.
struct Gates {
  bool filter = true;
  bool score = true;
};

}  // namespace schedplug
