#include "host/reload/reload_status.hpp"

#include <algorithm>

namespace schedplug::host {

void ReloadStatus::set_watching(bool watching) {
  std::lock_guard lock(mutex_);
  state_.watching = watching;
}

void ReloadStatus::reloaded(bool swapped, std::vector<ReloadRefusal> standing) {
  const auto now = std::chrono::system_clock::now();
  std::lock_guard lock(mutex_);
  for (ReloadRefusal& r : standing) {
    const auto before =
        std::find_if(state_.standing.begin(), state_.standing.end(),
                     [&](const ReloadRefusal& o) {
                       return o.file == r.file && o.reason == r.reason &&
                              o.message == r.message;
                     });
    r.since = before != state_.standing.end() ? before->since : now;
  }
  state_.standing = std::move(standing);
  state_.last_reload = now;
  if (swapped) ++state_.reloads;
}

ReloadStatus::Snapshot ReloadStatus::snapshot() const {
  std::lock_guard lock(mutex_);
  return state_;
}

}  // namespace schedplug::host
