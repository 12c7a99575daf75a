#include "host/service/sessions.hpp"

#include <random>
#include <utility>
#include <vector>

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

bool Session::evicted() const {
  std::lock_guard lock(state_mutex_);
  return evicted_;
}

int64_t Session::count_nodes(size_t nodes) {
  std::lock_guard lock(state_mutex_);
  if (evicted_) return 0;
  const int64_t change =
      static_cast<int64_t>(nodes) - static_cast<int64_t>(counted_nodes_);
  counted_nodes_ = nodes;
  return change;
}

int64_t Session::evict() {
  int64_t nodes = 0;
  {
    std::lock_guard lock(state_mutex_);
    if (evicted_) return 0;
    evicted_ = true;
    nodes = static_cast<int64_t>(counted_nodes_);
    counted_nodes_ = 0;
  }
  end_cycle();
  return nodes;
}

std::shared_ptr<const PodCycle> Session::cycle(const std::string& key) const {
  std::lock_guard lock(state_mutex_);
  if (cycle_ == nullptr || cycle_->key() != key) return nullptr;
  return cycle_;
}

void Session::begin_cycle(std::shared_ptr<const PodCycle> cycle) {
  std::shared_ptr<const PodCycle> previous;
  {
    std::lock_guard lock(state_mutex_);
    if (evicted_) return;  // `cycle` ends with the caller's reference
    previous = std::exchange(cycle_, std::move(cycle));
  }
  // `previous` (if any) ends here, outside the lock.
}

void Session::end_cycle(const PodCycle* which) {
  std::shared_ptr<const PodCycle> ending;
  {
    std::lock_guard lock(state_mutex_);
    if (which != nullptr && cycle_.get() != which) return;
    ending = std::move(cycle_);
    cycle_ = nullptr;
  }
  // Plugin code (pod_end) runs here, outside the lock, when this was the
  // last reference.
}

uint64_t Session::last_table_version() const {
  std::lock_guard lock(state_mutex_);
  return table_version_;
}

void Session::set_last_table_version(uint64_t version) {
  std::lock_guard lock(state_mutex_);
  table_version_ = version;
}

SessionCall::SessionCall(Session& session, const Deadline& deadline,
                         std::string what)
    : session_(session) {
  if (const auto when = deadline.when()) {
    owns_ = session.mutex.try_lock_until(*when);
  } else {
    session.mutex.lock();
    owns_ = true;
  }
  std::lock_guard lock(session.state_mutex_);
  if (owns_) {
    session.holder_ = std::move(what);
    session.holder_since_ = Session::Clock::now();
    return;
  }
  const double ms = std::chrono::duration<double, std::milli>(
                        Session::Clock::now() - session.holder_since_)
                        .count();
  busy_ = fmt::format(
      "session {} is busy: {} has held it for {:.0f} ms and this call's "
      "deadline ran out waiting for it; a plugin may be stuck (the host's "
      "log and the schedplug_plugin_duration_seconds metric name the slow "
      "plugin), and the host restarts itself if a plugin hook exceeds "
      "--hook-hard-limit",
      session.id, session.holder_.empty() ? "another call" : session.holder_,
      ms);
}

SessionCall::~SessionCall() {
  if (!owns_) return;
  {
    std::lock_guard lock(session_.state_mutex_);
    session_.holder_.clear();
  }
  session_.mutex.unlock();
}

SessionRegistry::SessionRegistry(
    size_t max_sessions, std::chrono::seconds idle_timeout,
    std::function<void(Session&, int64_t)> on_evict)
    : max_sessions_(max_sessions < 1 ? 1 : max_sessions),
      idle_timeout_(idle_timeout),
      on_evict_(std::move(on_evict)) {}

std::vector<std::shared_ptr<Session>> SessionRegistry::take_evicted_locked(
    Clock::time_point now) {
  std::vector<std::shared_ptr<Session>> out;
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (now - it->second.last_used > idle_timeout_) {
      spdlog::info("session {} of {} expired after {} s idle", it->first,
                   it->second.session->client_id, idle_timeout_.count());
      out.push_back(std::move(it->second.session));
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
    out.push_back(std::move(oldest->second.session));
    sessions_.erase(oldest);
  }
  return out;
}

std::shared_ptr<Session> SessionRegistry::create(const std::string& client_id) {
  auto session = std::make_shared<Session>();
  session->id = random_id();
  session->client_id = client_id;
  const auto now = Clock::now();
  std::vector<std::shared_ptr<Session>> dropped;
  {
    std::lock_guard lock(mutex_);
    dropped = take_evicted_locked(now);
    sessions_[session->id] = {session, now};
  }
  // Outside the registry's lock, and without the sessions' call locks: a
  // session busy in a stuck plugin is dropped at once. Its memory goes
  // when the last call holding it returns.
  for (auto& s : dropped) {
    const int64_t nodes = s->evict();
    if (on_evict_) on_evict_(*s, nodes);
  }
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
