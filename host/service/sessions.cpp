#include "host/service/sessions.hpp"

#include <random>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace schedplug::host {
namespace {

std::string random_id() {
  static std::mutex mutex;
  static std::random_device device;
  static std::mt19937_64 engine((static_cast<uint64_t>(device()) << 32) ^
                                device());
  std::lock_guard lock(mutex);
  return fmt::format("{:016x}{:016x}", engine(), engine());
}

}  // namespace

SessionRegistry::SessionRegistry(size_t max_sessions,
                                 std::chrono::seconds idle_timeout,
                                 std::function<void(Session&)> on_evict)
    : max_sessions_(max_sessions < 1 ? 1 : max_sessions),
      idle_timeout_(idle_timeout),
      on_evict_(std::move(on_evict)) {}

void SessionRegistry::evict_locked(Clock::time_point now) {
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (now - it->second.last_used > idle_timeout_) {
      spdlog::info("session {} of {} expired after {} s idle", it->first,
                   it->second.session->client_id, idle_timeout_.count());
      if (on_evict_) on_evict_(*it->second.session);
      it = sessions_.erase(it);
    } else {
      ++it;
    }
  }
  while (sessions_.size() >= max_sessions_) {
    auto oldest = sessions_.begin();
    for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
      if (it->second.last_used < oldest->second.last_used) oldest = it;
    }
    spdlog::info(
        "session {} of {} evicted: more than {} sessions; it must handshake "
        "again",
        oldest->first, oldest->second.session->client_id, max_sessions_);
    if (on_evict_) on_evict_(*oldest->second.session);
    sessions_.erase(oldest);
  }
}

std::shared_ptr<Session> SessionRegistry::create(const std::string& client_id) {
  auto session = std::make_shared<Session>();
  session->id = random_id();
  session->client_id = client_id;
  const auto now = Clock::now();
  std::lock_guard lock(mutex_);
  evict_locked(now);
  sessions_[session->id] = {session, now};
  return session;
}

std::shared_ptr<Session> SessionRegistry::find(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return nullptr;
  it->second.last_used = Clock::now();
  return it->second.session;
}

size_t SessionRegistry::size() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

}  // namespace schedplug::host
