#include "host/session/sessions.hpp"

#include <algorithm>
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

int64_t Session::set_memory(size_t bytes) {
  std::lock_guard lock(state_mutex_);
  if (evicted_) return 0;
  const int64_t change =
      static_cast<int64_t>(bytes) - static_cast<int64_t>(memory_);
  memory_ = bytes;
  return change;
}

size_t Session::memory() const {
  std::lock_guard lock(state_mutex_);
  return memory_;
}

Session::Released Session::evict() {
  Released released;
  {
    std::lock_guard lock(state_mutex_);
    if (evicted_) return released;
    evicted_ = true;
    released.nodes = static_cast<int64_t>(counted_nodes_);
    released.bytes = static_cast<int64_t>(memory_);
    counted_nodes_ = 0;
    memory_ = 0;
  }
  end_cycle();
  return released;
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
      "log and the schedplug_plugin_hook_duration_seconds metric name the slow "
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
    const SessionBounds& bounds,
    std::function<void(Session&, const Session::Released&)> on_evict)
    : max_sessions_(std::max<size_t>(1, bounds.max_sessions)),
      max_per_peer_(std::max<size_t>(1, bounds.max_sessions_per_peer)),
      idle_timeout_(bounds.idle_timeout),
      max_session_memory_(bounds.max_session_memory),
      max_total_session_memory_(bounds.max_total_session_memory),
      idle_before_memory_drop_(bounds.idle_before_memory_drop),
      on_evict_(std::move(on_evict)) {}

MemoryLimit SessionRegistry::memory_limit(const Session& session) const {
  MemoryLimit limit;
  if (max_session_memory_ > 0) limit.bytes = max_session_memory_;
  if (max_total_session_memory_ > 0) {
    const size_t mine = session.memory();
    const size_t all = total_memory();
    const size_t others = all > mine ? all - mine : 0;
    const size_t left = max_total_session_memory_ > others
                            ? max_total_session_memory_ - others
                            : 0;
    if (left < limit.bytes) limit = {left, true};
  }
  return limit;
}

AppliedDelta SessionRegistry::apply_delta(Session& session,
                                          const TableDelta& delta,
                                          size_t pod_bytes) {
  AppliedDelta out;
  out.limit = memory_limit(session);
  auto table_limit = [pod_bytes](const MemoryLimit& l) {
    return l.bytes == SIZE_MAX   ? SIZE_MAX
           : l.bytes > pod_bytes ? l.bytes - pod_bytes
                                 : 0;
  };
  NodeTable& table = session.table;
  try {
    try {
      table.apply(delta, table_limit(out.limit));
    } catch (const DeltaError& e) {
      if (e.kind() != DeltaError::Kind::kTooLarge || !out.limit.total) throw;
      // All sessions together are over: sessions of this peer idle for a
      // while (e.g. the one a restarted scheduler left) make room first.
      const size_t need = e.bytes_after() + pod_bytes - out.limit.bytes;
      if (drop_idle_of_peer(session, need, idle_before_memory_drop_) == 0) {
        throw;
      }
      out.limit = memory_limit(session);
      table.apply(delta, table_limit(out.limit));
    }
  } catch (const DeltaError& e) {
    out.error = e;
    return out;
  }
  add_memory(session.set_memory(table.bytes() + pod_bytes));
  session.set_last_table_version(table.version());
  out.nodes_added = session.count_nodes(table.size());
  return out;
}

std::vector<std::shared_ptr<Session>> SessionRegistry::take_evicted_locked(
    Clock::time_point now, const std::string& peer) {
  std::vector<std::shared_ptr<Session>> out;
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (now - it->second.last_used > idle_timeout_) {
      spdlog::info("session {} of {} ({}) expired after {} s idle", it->first,
                   it->second.session->client_id, it->second.session->peer,
                   idle_timeout_.count());
      out.push_back(std::move(it->second.session));
      it = sessions_.erase(it);
    } else {
      ++it;
    }
  }
  // The least recently used session of `of`.
  auto oldest_of = [this](const std::string& of) {
    auto oldest = sessions_.end();
    for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
      if (it->second.session->peer != of) continue;
      if (oldest == sessions_.end() ||
          it->second.last_used < oldest->second.last_used) {
        oldest = it;
      }
    }
    return oldest;
  };
  // Over the per-peer bound, a peer loses its own sessions, never another
  // peer's. Refusing the new session instead would lock out a scheduler
  // that restarted a few times within the idle timeout (its stale
  // sessions still count), while evicting its own oldest costs a peer
  // that floods the host only the sessions it opened itself.
  std::unordered_map<std::string, size_t> per_peer;
  for (const auto& [id, entry] : sessions_) ++per_peer[entry.session->peer];
  while (per_peer[peer] >= max_per_peer_) {
    const auto oldest = oldest_of(peer);
    spdlog::info(
        "session {} of {} evicted: {} opened more than {} sessions "
        "(--max-sessions-per-peer); it must handshake again",
        oldest->first, oldest->second.session->client_id, peer, max_per_peer_);
    out.push_back(std::move(oldest->second.session));
    sessions_.erase(oldest);
    --per_peer[peer];
  }
  // Over the total bound: the least recently used session of the peer
  // holding the most sessions (the longest idle one among equals), so a
  // peer with few sessions, like the scheduler with its one, keeps them.
  while (sessions_.size() >= max_sessions_) {
    auto victim = sessions_.end();
    for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
      if (victim == sessions_.end()) {
        victim = it;
        continue;
      }
      const size_t mine = per_peer[it->second.session->peer];
      const size_t theirs = per_peer[victim->second.session->peer];
      if (mine > theirs ||
          (mine == theirs && it->second.last_used < victim->second.last_used)) {
        victim = it;
      }
    }
    spdlog::info(
        "session {} of {} ({}) evicted: more than {} sessions "
        "(--max-sessions); it must handshake again",
        victim->first, victim->second.session->client_id,
        victim->second.session->peer, max_sessions_);
    --per_peer[victim->second.session->peer];
    out.push_back(std::move(victim->second.session));
    sessions_.erase(victim);
  }
  return out;
}

std::shared_ptr<Session> SessionRegistry::create(const std::string& client_id,
                                                 const std::string& peer) {
  auto session = std::make_shared<Session>();
  session->id = random_id();
  session->client_id = client_id;
  session->peer = peer;
  const auto now = Clock::now();
  std::vector<std::shared_ptr<Session>> dropped;
  {
    std::lock_guard lock(mutex_);
    dropped = take_evicted_locked(now, peer);
    sessions_[session->id] = {session, now};
  }
  evict_dropped(dropped);
  return session;
}

size_t SessionRegistry::evict_dropped(
    std::vector<std::shared_ptr<Session>>& dropped) {
  // Outside the registry's lock, and without the sessions' call locks: a
  // session busy in a stuck plugin is dropped at once. Its memory goes
  // when the last call holding it returns.
  size_t released_bytes = 0;
  for (auto& s : dropped) {
    const Session::Released released = s->evict();
    add_memory(-released.bytes);
    released_bytes += static_cast<size_t>(released.bytes);
    if (on_evict_) on_evict_(*s, released);
  }
  return released_bytes;
}

size_t SessionRegistry::drop_idle_of_peer(const Session& keep, size_t bytes,
                                          std::chrono::seconds min_idle) {
  std::vector<std::shared_ptr<Session>> dropped;
  {
    std::lock_guard lock(mutex_);
    const auto now = Clock::now();
    std::vector<std::pair<Clock::time_point, std::string>> idle;
    for (const auto& [id, entry] : sessions_) {
      if (entry.session.get() != &keep && entry.session->peer == keep.peer &&
          now - entry.last_used >= min_idle) {
        idle.emplace_back(entry.last_used, id);
      }
    }
    std::sort(idle.begin(), idle.end());
    size_t released = 0;
    for (const auto& [last_used, id] : idle) {
      if (released >= bytes) break;
      auto it = sessions_.find(id);
      released += it->second.session->memory();
      spdlog::info(
          "session {} of {} ({}) evicted after {:.0f} s idle: session {} of "
          "the same peer needs its memory under --max-total-session-memory; "
          "it must handshake again",
          id, it->second.session->client_id, keep.peer,
          std::chrono::duration<double>(now - last_used).count(), keep.id);
      dropped.push_back(std::move(it->second.session));
      sessions_.erase(it);
    }
  }
  return evict_dropped(dropped);
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

size_t SessionRegistry::sessions_of(const std::string& peer) const {
  std::lock_guard lock(mutex_);
  size_t n = 0;
  for (const auto& [id, entry] : sessions_) n += entry.session->peer == peer;
  return n;
}

size_t SessionRegistry::total_memory() const {
  return static_cast<size_t>(std::max<int64_t>(0, total_memory_.load()));
}

void SessionRegistry::add_memory(int64_t change) {
  total_memory_.fetch_add(change);
}

}  // namespace schedplug::host
