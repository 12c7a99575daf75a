// The pods one plugin instance's permit() made wait (plugin.h v1.6), and
// where its permit_allow / permit_reject decisions about them go.
//
// An instance belongs to one profile. The host remembers the uid of a pod
// that answered WAIT until a decision about it, its Unreserve or PreBind,
// or its timeout; a decision about a remembered uid goes to the sink (the
// session watches of the profile's schedulers, host/session), which says
// whether any scheduler heard it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "schedplug/plugin.h"

namespace schedplug::host {

// Where decisions about waiting pods go.
class WaitingPodSink {
 public:
  virtual ~WaitingPodSink() = default;
  // Passes the decision on; false when no scheduler of `profile` is
  // connected to hear it.
  virtual bool decided(std::string_view profile, std::string_view plugin,
                       std::string_view pod_uid, bool allow,
                       std::string_view reason) = 0;
};

class WaitingPods {
 public:
  using Clock = std::chrono::steady_clock;

  // The instance's profile and the sink its decisions go to (the pipeline
  // connects every instance it serves; nullptr: none).
  void connect(std::string profile, std::shared_ptr<WaitingPodSink> sink);

  // `pod_uid` waits for at most `timeout` from now.
  void wait(std::string_view pod_uid, std::chrono::milliseconds timeout);
  // The pod waits no more (its Unreserve or PreBind).
  void forget(std::string_view pod_uid);
  // How many pods wait now (the expired ones left out).
  size_t size() const;

  // permit_allow / permit_reject for `plugin`: SKIP when `pod_uid` does not
  // wait, SUCCESS when a scheduler heard the decision (the pod is then
  // forgotten), ERROR when none is connected (it keeps waiting).
  schedplug_code decide(std::string_view plugin, std::string_view pod_uid,
                        bool allow, std::string_view reason);

 private:
  void drop_expired(Clock::time_point now);

  mutable std::mutex mutex_;
  std::string profile_;
  std::shared_ptr<WaitingPodSink> sink_;
  std::unordered_map<std::string, Clock::time_point> until_;
};

}  // namespace schedplug::host
