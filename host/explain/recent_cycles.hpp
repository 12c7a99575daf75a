// What the host keeps of its recent scheduling cycles, for `schedplug
// explain` (the Explain call): per cycle, each native plugin's verdict and
// reason on the nodes it rejected, raw and normalized scores, what became
// of the cycle once the shim reports it (the node kube-scheduler reserved,
// or that it found none and why), and the time each plugin's hooks took.
// Bounded by a count and a byte cap; the oldest cycle goes first.
//
// A cycle is kept compact, because a PreFilter at 5000 nodes may reject or
// score most of them: nodes as table slots named by the table's shared
// NodeNames, reasons once each, scores in flat arrays. It becomes a
// v1::ExplainedCycle only when asked for.
//
// Threading: every method may be called from any thread; one mutex guards
// the store and is held only to merge or copy cycles, never across plugin
// code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "host/table/node_names.hpp"
#include "schedplug/v1/schedplug.pb.h"

namespace schedplug::host {

struct RecentCyclesOptions {
  // 0 turns keeping cycles off.
  size_t max_cycles = 1000;
  size_t max_bytes = size_t{64} << 20;
  // Per cycle: nodes listed beyond this are counted, not kept.
  size_t max_nodes_per_cycle = 5000;
};

// One cycle, or one call's share of it.
struct CycleSummary {
  std::string scheduler_name;
  std::string pod_namespace;
  std::string pod_name;
  std::string pod_uid;
  int64_t started_unix_nanos = 0;
  uint64_t table_version = 0;
  // The profile's native filters and scorers, and whether each met the pod.
  std::vector<std::string> filters;
  std::vector<bool> filter_skipped;
  std::vector<std::string> scorers;
  std::vector<bool> scorer_skipped;
  std::vector<int> weights;                // per scorer
  std::vector<std::string> scorer_errors;  // per scorer, "" when it scored
  uint32_t nodes_filtered = 0;             // node evaluations
  uint32_t nodes_rejected = 0;             // of them, listed or left out
  uint32_t nodes_left_out = 0;             // over max_nodes_per_cycle

  // The nodes' names, by index: the call's table's names (an index is a
  // slot; every cycle of a table version shares them, and they stay right
  // after later deltas reuse the slot), or the cycle's own list once
  // add_name appended to it.
  std::shared_ptr<const NodeNames> table_names;
  std::optional<NodeNames> own_names;
  struct Rejection {
    uint32_t node = 0;    // index into the names
    uint32_t reason = 0;  // index into `reasons`
    uint16_t plugin = 0;  // index into `filters`
    uint8_t code = 0;     // schedplug_code
  };
  std::vector<Rejection> rejections;
  std::vector<std::string> reasons;
  std::vector<uint32_t> scored;  // indices into the names
  // Per scored node, per scorer: [node * scorers.size() + scorer]. Empty
  // stands for zeros (raw scores ahead have no normalized ones yet).
  std::vector<int64_t> raw;
  std::vector<int64_t> normalized;
  // Scores ahead (computed before kube-scheduler's PreScore, for the shim
  // to normalize): `scored` and `raw` hold every node scored ahead, and
  // none is shown until settle_ahead keeps those kube-scheduler scored and
  // normalizes them as the shim did.
  bool scores_ahead = false;
  // Per scorer, for scores ahead: the SCHEDPLUG_NORMALIZE_* policy to
  // apply, or kOwnNormalization (the plugin normalized them itself; kept).
  static constexpr uint32_t kOwnNormalization = ~uint32_t{0};
  std::vector<uint32_t> ahead_policy;

  // What became of the cycle (Placement): the node kube-scheduler
  // reserved, and whether it undid that; or that it found no node, with
  // what its filters said.
  std::string chosen_node;
  bool unreserved = false;
  bool unschedulable = false;
  std::string unschedulable_message;
  struct Timing {
    std::string plugin;
    const char* hook = "";  // a timed_hook_name
    int64_t nanos = 0;
  };
  std::vector<Timing> timings;
  std::vector<std::string> unfinished;

  // Appends a node name to the cycle's own list (a copy of the table's
  // names the first time); returns its index.
  uint32_t add_name(std::string_view name);
  std::string_view name(uint32_t node) const {
    if (own_names) return own_names->at(node);
    return table_names ? table_names->at(node) : std::string_view();
  }
  // The table's names the cycle shares, or nullptr.
  const NodeNames* shared_names() const {
    return own_names ? nullptr : table_names.get();
  }
  // Scores ahead: keeps the scored nodes at `positions` (indices into
  // `scored`, as the shim sends them in Placement.scored) and normalizes
  // their raw scores over them by each scorer's ahead_policy.
  void settle_ahead(std::span<const uint32_t> positions);
  // Estimated heap and inline bytes, without the shared table names
  // (RecentCycles counts each of those once).
  size_t bytes() const;
  void to_proto(v1::ExplainedCycle& out) const;
};

class RecentCycles {
 public:
  explicit RecentCycles(RecentCyclesOptions options = {});

  bool enabled() const { return options_.max_cycles > 0; }
  const RecentCyclesOptions& options() const { return options_; }

  // What the store holds, for the metrics.
  struct Stats {
    size_t cycles = 0;
    size_t bytes = 0;
    uint64_t dropped_count = 0;   // over max_cycles, since start
    uint64_t dropped_memory = 0;  // over max_bytes, since start
  };
  // One call's share of a pod's cycle in session `session`. `starts`: the
  // call begins a new cycle (PreFilter, or a PreScore that carries the
  // delta); otherwise it adds to the session's open cycle of the same pod
  // and begins one when there is none (the host restarted, or lost it).
  Stats add(const std::string& session, bool starts, CycleSummary part);
  // kube-scheduler reserved `node` for the pod: its latest cycle without a
  // chosen node gets it.
  void placed(const std::string& pod_uid, const std::string& node);
  // kube-scheduler undid the reservation of `node` (Unreserve): the pod's
  // latest cycle, if it chose that node or none.
  void unreserved(const std::string& pod_uid, const std::string& node);
  // kube-scheduler found no node for the pod; `message` is what its
  // filters said: the pod's latest cycle, unless it holds a reservation
  // that stands.
  void unschedulable(const std::string& pod_uid, const std::string& message);
  // The shim normalized the pod's scores ahead over the nodes at
  // `positions` (Placement.scored): its latest cycle, if it holds scores
  // ahead, settles them (CycleSummary::settle_ahead).
  void scored(const std::string& pod_uid, std::span<const uint32_t> positions);

  struct Found {
    std::vector<v1::ExplainedCycle> cycles;  // oldest first
    // With no cycles: the cap ("count" or "memory") that dropped the pod's
    // last one, or "" when the store never held one.
    std::string dropped_by;
  };
  // `pod`: "namespace/name" or a uid.
  Found find(const std::string& pod) const;
  Stats stats() const;

 private:
  struct Entry {
    std::string session;
    CycleSummary cycle;
    size_t bytes = 0;
  };
  void merge(CycleSummary& into, CycleSummary& part) const;
  void drop_oldest(const char* cause);
  // The pod's latest cycle (nullptr: none held). Callers hold mutex_.
  Entry* latest(const std::string& pod_uid);
  // Re-counts an entry's bytes after a change. Callers hold mutex_.
  void resized(Entry& entry);
  // A table's names one more or one fewer cycle shares: counted in the
  // store's bytes while any does. Callers hold mutex_.
  void hold(const CycleSummary& cycle);
  void release(const CycleSummary& cycle);

  const RecentCyclesOptions options_;
  mutable std::mutex mutex_;
  std::deque<std::shared_ptr<Entry>> entries_;  // oldest first
  // Per session: its open cycle (the last one begun).
  std::unordered_map<std::string, std::weak_ptr<Entry>> open_;
  // The table names the held cycles share, and how many share each.
  std::unordered_map<const NodeNames*, size_t> names_held_;
  Stats stats_;
  // Pods whose every cycle was dropped, and the cap that dropped the last
  // one ("count" or "memory"); bounded, oldest forgotten first.
  std::unordered_map<std::string, std::string> gone_;
  std::deque<std::string> gone_order_;
};

}  // namespace schedplug::host
