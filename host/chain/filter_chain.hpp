// PreFilter's work: every applying native Filter on every node of the
// table, in parallel over nodes, plugins in profile order. A node's verdict
// is that of the first plugin (in profile order) that did not succeed.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "host/chain/chain_types.hpp"
#include "host/chain/deadline.hpp"
#include "host/chain/thread_pool.hpp"
#include "host/runtime/plugin_instance.hpp"

namespace schedplug::host {

struct FilterRejection {
  uint32_t node = 0;    // index into the `nodes` span (the table slot)
  uint32_t plugin = 0;  // index into the `filters` list
  schedplug_code code = SCHEDPLUG_UNSCHEDULABLE;
  uint32_t reason = 0;  // index into FilterOutcome::reasons
};

struct FilterOutcome {
  std::vector<bool> skipped;                // per filter: applies() said no
  std::vector<FilterRejection> rejections;  // sorted by node
  std::vector<std::string> reasons;         // deduplicated
  ChainRuns runs;                           // per filter
};

// `nodes` may contain nullptr (empty table slots), which are skipped.
// Throws ChainDeadlineExceeded when `deadline` runs out.
FilterOutcome run_filters(std::span<const PluginInstance* const> filters,
                          const schedplug_pod& pod,
                          std::span<const schedplug_node* const> nodes,
                          ThreadPool& pool, const Deadline& deadline);

// The single-node Filter RPC: `filters` in order on one node; the first
// verdict that is not SUCCESS wins. `plugin` is set to that plugin (or
// nullptr). Throws ChainDeadlineExceeded between plugins.
struct SingleFilterResult {
  const PluginInstance* plugin = nullptr;
  Verdict verdict;
  ChainRuns runs;
};
SingleFilterResult run_filters_on_node(
    std::span<const PluginInstance* const> filters, const schedplug_pod& pod,
    const schedplug_node& node, const Deadline& deadline);

}  // namespace schedplug::host
