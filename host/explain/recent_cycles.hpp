// What the host keeps of its recent scheduling cycles, for `schedplug
// explain` (the Explain call): per cycle, each native plugin's verdict and
// reason on the nodes it rejected, raw and normalized scores, the node
// kube-scheduler reserved once the shim reports it, and the time each
// plugin's hooks took. Bounded by a count and a byte cap; the oldest cycle
// goes first.
//
// Threading: every method may be called from any thread; one mutex guards
// the store and is held only to merge or copy records, never across plugin
// code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "schedplug/v1/schedplug.pb.h"

namespace schedplug::host {

struct RecentCyclesOptions {
  // 0 turns the record off.
  size_t max_cycles = 1000;
  size_t max_bytes = size_t{64} << 20;
  // Per cycle: nodes listed beyond this are counted, not kept.
  size_t max_nodes_per_cycle = 5000;
};

class RecentCycles {
 public:
  explicit RecentCycles(RecentCyclesOptions options = {});

  bool enabled() const { return options_.max_cycles > 0; }

  // One call's share of a pod's cycle in session `session`. `starts`: the
  // call begins a new cycle (PreFilter, or a PreScore that carries the
  // delta); otherwise it adds to the session's open cycle of the same pod
  // and begins one when there is none (the host restarted, or lost it).
  // `part` holds the pod's identity and profile, and what this call found:
  // nodes, timings, and the plugin lists and skips of its chain.
  // Returns what the store holds afterwards, for the metrics.
  struct Stats {
    size_t cycles = 0;
    size_t bytes = 0;
    uint64_t dropped_count = 0;   // over max_cycles, since start
    uint64_t dropped_memory = 0;  // over max_bytes, since start
  };
  Stats record(const std::string& session, bool starts,
               v1::ExplainedCycle part);
  // kube-scheduler reserved `node` for the pod: its latest cycle without a
  // chosen node gets it.
  void placed(const std::string& pod_uid, const std::string& node);

  struct Found {
    std::vector<v1::ExplainedCycle> cycles;  // oldest first
    // With no cycles: the cap ("count" or "memory") that dropped the pod's
    // last one, or "" when the store never held one.
    std::string dropped_by;
  };
  // `pod`: "namespace/name" or a uid.
  Found find(const std::string& pod) const;

  Stats stats() const;
  const RecentCyclesOptions& options() const { return options_; }

 private:
  struct Entry {
    std::string session;
    v1::ExplainedCycle cycle;
    size_t bytes = 0;
  };
  void merge(Entry& entry, v1::ExplainedCycle& part);
  void drop_oldest(const char* cause);

  const RecentCyclesOptions options_;
  mutable std::mutex mutex_;
  std::deque<std::shared_ptr<Entry>> entries_;  // oldest first
  // Per session: its open cycle (the last one begun).
  std::unordered_map<std::string, std::weak_ptr<Entry>> open_;
  Stats stats_;
  // Pods whose every cycle was dropped, and the cap that dropped the last
  // one ("count" or "memory"); bounded, oldest forgotten first.
  std::unordered_map<std::string, std::string> gone_;
  std::deque<std::string> gone_order_;
};

// Estimated bytes one record holds.
size_t record_bytes(const v1::ExplainedCycle& cycle);

}  // namespace schedplug::host
