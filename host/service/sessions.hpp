// Sessions: one per Handshake, each with its own node table.
//
// A session id is random, so a restarted host (or one that evicted the
// session) does not know it, and the shim learns it must handshake again
// and send the full table. The number of sessions is bounded: creating one
// beyond the bound evicts the least recently used.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "host/table/node_table.hpp"

namespace schedplug::host {

struct Session {
  std::string id;
  std::string client_id;
  // Held for a whole call: one scheduler runs one cycle at a time, so this
  // only orders the (rare) overlapping calls of one session.
  std::mutex mutex;
  NodeTable table;       // guarded by mutex
  bool evicted = false;  // guarded by mutex; set once the registry drops it
};

class SessionRegistry {
 public:
  using Clock = std::chrono::steady_clock;
  // `on_evict` is told about every session dropped by the bound or the
  // idle timeout (e.g. to take its nodes off the table-size gauge).
  SessionRegistry(size_t max_sessions, std::chrono::seconds idle_timeout,
                  std::function<void(Session&)> on_evict = {});

  std::shared_ptr<Session> create(const std::string& client_id);
  // nullptr when unknown (never created, evicted, or the host restarted).
  std::shared_ptr<Session> find(const std::string& id);
  size_t size() const;

 private:
  struct Entry {
    std::shared_ptr<Session> session;
    Clock::time_point last_used;
  };
  void evict_locked(Clock::time_point now);

  const size_t max_sessions_;
  const std::chrono::seconds idle_timeout_;
  std::function<void(Session&)> on_evict_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> sessions_;
};

}  // namespace schedplug::host
