#include "host/plugin/waiting_pods.hpp"

#include <utility>

namespace schedplug::host {

void WaitingPods::connect(std::string profile,
                          std::shared_ptr<WaitingPodSink> sink) {
  std::lock_guard lock(mutex_);
  profile_ = std::move(profile);
  sink_ = std::move(sink);
}

void WaitingPods::drop_expired(Clock::time_point now) {
  std::erase_if(until_, [now](const auto& e) { return e.second <= now; });
}

void WaitingPods::wait(std::string_view pod_uid,
                       std::chrono::milliseconds timeout) {
  const auto now = Clock::now();
  std::lock_guard lock(mutex_);
  drop_expired(now);
  until_[std::string(pod_uid)] = now + timeout;
}

void WaitingPods::forget(std::string_view pod_uid) {
  std::lock_guard lock(mutex_);
  if (until_.empty()) return;
  until_.erase(std::string(pod_uid));
}

size_t WaitingPods::size() const {
  const auto now = Clock::now();
  std::lock_guard lock(mutex_);
  size_t n = 0;
  for (const auto& [_, until] : until_) n += until > now ? 1 : 0;
  return n;
}

schedplug_code WaitingPods::decide(std::string_view plugin,
                                   std::string_view pod_uid, bool allow,
                                   std::string_view reason) {
  std::string profile;
  std::shared_ptr<WaitingPodSink> sink;
  Clock::time_point until;
  const std::string uid(pod_uid);
  {
    std::lock_guard lock(mutex_);
    drop_expired(Clock::now());
    auto it = until_.find(uid);
    if (it == until_.end()) return SCHEDPLUG_SKIP;
    until = it->second;
    until_.erase(it);
    profile = profile_;
    sink = sink_;
  }
  // Outside the lock: the sink writes to streams, and a plugin may decide
  // from inside another hook.
  if (sink != nullptr && sink->decided(profile, plugin, uid, allow, reason))
    return SCHEDPLUG_SUCCESS;
  std::lock_guard lock(mutex_);
  until_.emplace(uid, until);  // unheard: it still waits
  return SCHEDPLUG_ERROR;
}

}  // namespace schedplug::host
