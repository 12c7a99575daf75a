// Sessions: one per Handshake, each with its own node table.
//
// A session id is random, so a restarted host (or one that evicted the
// session) does not know it, and the shim learns it must handshake again
// and send the full table. The number of sessions is bounded, in all and
// per peer (the caller's uid or address, peer_identity.hpp): creating one
// beyond a bound evicts a least recently used one (SessionRegistry says
// which). Each session accounts the memory it holds (set_memory), and the
// registry keeps the total and applies node-table deltas within the memory
// bounds (apply_delta).
//
// Nothing here ever waits for a call in progress: a call takes its
// session's lock with the call's deadline (SessionCall), and eviction only
// flips a flag under a lock that is never held across plugin code.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "host/chain/deadline.hpp"
#include "host/chain/pod_cycle.hpp"
#include "host/table/node_table.hpp"

namespace schedplug::host {

class Session {
 public:
  using Clock = std::chrono::steady_clock;

  std::string id;
  std::string client_id;
  std::string peer;  // who opened it (PeerIdentities::identify)
  // The profiles (schedulerNames) its Handshake named: decisions about
  // pods waiting in one of them go to this session's watches. Set before
  // the Handshake answers, never changed after.
  std::vector<std::string> profiles;
  // Held for a whole call (SessionCall): one scheduler runs one cycle at a
  // time, so this only orders the rare overlapping calls of one session,
  // e.g. a call the shim gave up on that is still running here.
  std::timed_mutex mutex;
  NodeTable table;  // guarded by mutex

  bool evicted() const;
  // Under `mutex`, after the table changed: notes its size and returns
  // the change for the table-size gauge (0 once the session is evicted).
  int64_t count_nodes(size_t nodes);
  // Under `mutex`: notes the bytes the session holds (its table and its
  // cycle's pod, estimated) and returns the change for the registry's
  // total (0 once the session is evicted).
  int64_t set_memory(size_t bytes);
  size_t memory() const;

  // What an evicted session stops counting.
  struct Released {
    int64_t nodes = 0;
    int64_t bytes = 0;
  };
  // Marks the session evicted and ends its pod cycle (end_cycle); returns
  // the nodes to take off the gauge and the bytes off the registry's
  // total. Never waits for a call in progress.
  Released evict();
  // The table version after the last call that held `mutex`; readable
  // without it (for answers to calls that could not get the session).
  uint64_t last_table_version() const;
  void set_last_table_version(uint64_t version);

  // The pod cycle PreFilter began (per-pod states, pod_cycle.hpp), shared
  // with the single-node Filter and PreScore calls of the same cycle:
  // nullptr when `key` is not the current cycle's.
  std::shared_ptr<const PodCycle> cycle(const std::string& key) const;
  // Makes `cycle` the current one. Once the session is evicted it keeps
  // nothing (the caller's reference then ends the cycle).
  void begin_cycle(std::shared_ptr<const PodCycle> cycle);
  // Drops the session's reference to the current cycle (when `which` is
  // set: only if the current one is `which`). The cycle ends (pod_end)
  // here, outside every session lock, unless a call still holds it; then
  // it ends when that call returns.
  void end_cycle(const PodCycle* which = nullptr);

 private:
  friend class SessionCall;
  // Guards what follows; held only for a few instructions, never across
  // plugin code, so eviction and busy answers never wait for a call.
  mutable std::mutex state_mutex_;
  bool evicted_ = false;
  size_t counted_nodes_ = 0;
  size_t memory_ = 0;
  uint64_t table_version_ = 0;
  std::string holder_;  // the call holding `mutex`, for busy messages
  Clock::time_point holder_since_{};
  std::shared_ptr<const PodCycle> cycle_;  // ends with the session at last
};

// Holds a session's call lock for one RPC. Waits at most until the call's
// deadline (Deadline::never(): until the call holding it returns; the hook
// watchdog bounds that), so a call stuck in a plugin parks no other RPC
// past its own deadline.
class SessionCall {
 public:
  SessionCall(Session& session, const Deadline& deadline, std::string what);
  ~SessionCall();
  SessionCall(const SessionCall&) = delete;
  SessionCall& operator=(const SessionCall&) = delete;

  bool owns() const { return owns_; }
  // When !owns(): a sentence naming the session and the call that holds
  // it, and for how long.
  const std::string& busy_message() const { return busy_; }

 private:
  Session& session_;
  bool owns_ = false;
  std::string busy_;
};

struct SessionBounds {
  size_t max_sessions = 16;
  // At most this many sessions of one peer; its next one evicts its own
  // least recently used.
  size_t max_sessions_per_peer = 8;
  std::chrono::seconds idle_timeout{3600};
  // What one session, and all sessions together, may hold (0: no bound).
  size_t max_session_memory = 0;
  size_t max_total_session_memory = 0;
  // Over max_total_session_memory, sessions of the caller's own peer idle
  // this long are dropped to make room.
  std::chrono::seconds idle_before_memory_drop{30};
};

// The most a session may hold after a call, and whether the bound on all
// sessions together (rather than the one per session) is what sets it.
struct MemoryLimit {
  size_t bytes = SIZE_MAX;
  bool total = false;
};

// What apply_delta did: nothing (`error` set, the table unchanged) or the
// delta applied and accounted.
struct AppliedDelta {
  std::optional<DeltaError> error;
  MemoryLimit limit;        // the bound the delta was held to
  int64_t nodes_added = 0;  // for the table-size gauge
};

class SessionRegistry {
 public:
  using Clock = std::chrono::steady_clock;
  // `on_evict` is told about every session dropped by a bound or the idle
  // timeout (e.g. to take its nodes off the table-size gauge), after the
  // registry took its bytes off total_memory(). It is called outside the
  // registry's lock, after Session::evict().
  SessionRegistry(
      const SessionBounds& bounds,
      std::function<void(Session&, const Session::Released&)> on_evict = {});

  // A new session of `peer`. First drops the sessions idle too long; then,
  // when `peer` already holds max_sessions_per_peer, its own least recently
  // used ones; then, while max_sessions are open, the least recently used
  // session of the peer holding the most (so another peer's sessions go
  // before those of a peer with fewer, e.g. the scheduler's one).
  std::shared_ptr<Session> create(const std::string& client_id,
                                  const std::string& peer = "");
  // nullptr when unknown (never created, evicted, or the host restarted).
  std::shared_ptr<Session> find(const std::string& id);
  size_t size() const;
  // The sessions `peer` holds.
  size_t sessions_of(const std::string& peer) const;

  // Under `session`'s call lock: applies `delta` to its table within the
  // memory bounds, counting `pod_bytes` (the cycle's pod) too. When all
  // sessions together are over, sessions of the same peer idle for
  // idle_before_memory_drop make room first; another peer's never do.
  // Notes the session's memory, table version and node count.
  AppliedDelta apply_delta(Session& session, const TableDelta& delta,
                           size_t pod_bytes);
  MemoryLimit memory_limit(const Session& session) const;

  // Makes room for `keep` under a bound on all sessions' memory: drops
  // other sessions of keep's peer, idle at least `min_idle`, least
  // recently used first, until they released `bytes` or none is left.
  // Another peer's sessions are never touched. Returns the bytes released.
  size_t drop_idle_of_peer(const Session& keep, size_t bytes,
                           std::chrono::seconds min_idle);

  // The bytes all sessions hold (the sum of their set_memory figures).
  size_t total_memory() const;
  // Adds Session::set_memory's change to the total.
  void add_memory(int64_t change);

 private:
  struct Entry {
    std::shared_ptr<Session> session;
    Clock::time_point last_used;
  };
  // Takes the sessions to drop out of the map; the caller evicts them
  // after releasing mutex_.
  std::vector<std::shared_ptr<Session>> take_evicted_locked(
      Clock::time_point now, const std::string& peer);
  // Evicts `dropped` (taken out of sessions_) outside mutex_; returns the
  // bytes they released.
  size_t evict_dropped(std::vector<std::shared_ptr<Session>>& dropped);

  const size_t max_sessions_;
  const size_t max_per_peer_;
  const std::chrono::seconds idle_timeout_;
  const size_t max_session_memory_;
  const size_t max_total_session_memory_;
  const std::chrono::seconds idle_before_memory_drop_;
  std::function<void(Session&, const Session::Released&)> on_evict_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> sessions_;
  std::atomic<int64_t> total_memory_{0};
};

}  // namespace schedplug::host
