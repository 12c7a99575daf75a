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
#include "host/plugin/plugin_instance.hpp"

namespace schedplug::host {

struct FilterRejection {
  uint32_t node = 0;    // index into the `nodes` span (the table slot)
  uint32_t plugin = 0;  // index into the `filters` list
  schedplug_code code = SCHEDPLUG_UNSCHEDULABLE;
  uint32_t reason = 0;  // index into FilterOutcome::reasons
};

struct FilterOutcome {
  std::vector<bool> skipped;                // per filter: its gate said no
  std::vector<FilterRejection> rejections;  // sorted by node
  std::vector<std::string> reasons;         // deduplicated
  ChainRuns runs;                           // per filter
  // Filters that did not finish before their deadline. Their rejections
  // so far are in `rejections`; later filters still run (until their own
  // deadline) on the nodes no one rejected.
  std::vector<UnfinishedPlugin> unfinished;
};

// `nodes` may contain nullptr (empty table slots), which are skipped.
// A SKIP from filter() is an ERROR verdict naming the plugin, as upstream
// kube-scheduler treats a Skip returned from Filter. Each plugin meets the
// pod as ChainPod says (the cycle's per-pod state, or one begun and ended
// in this run); a failed pod_begin is an ERROR on every node it would see.
FilterOutcome run_filters(std::span<const PluginInstance* const> filters,
                          const schedplug_pod& pod,
                          std::span<const schedplug_node* const> nodes,
                          ThreadPool& pool, const Deadline& deadline,
                          const ChainLimits& limits = {});

// Adds `more`, an outcome of the same filters for the same pod on other
// nodes (a later step of one walk), to `into`: rejections merged in node
// order with their reasons mapped into `into`'s list, each plugin's run
// summed, a plugin unfinished in either unfinished (the first reason
// kept). A plugin skipped in either is skipped.
void merge_filter_outcome(FilterOutcome& into, FilterOutcome&& more);

// The single-node Filter RPC: `filters` in order on one node; the first
// verdict that is not SUCCESS wins. `plugin` is set to that plugin (or
// nullptr). A plugin whose deadline is over before it starts is listed in
// `unfinished`, and so are the ones after it.
struct SingleFilterResult {
  const PluginInstance* plugin = nullptr;
  Verdict verdict;
  ChainRuns runs;
  std::vector<UnfinishedPlugin> unfinished;
};
SingleFilterResult run_filters_on_node(
    std::span<const PluginInstance* const> filters, const schedplug_pod& pod,
    const schedplug_node& node, const Deadline& deadline,
    const ChainLimits& limits = {});

// A SKIP returned from filter() becomes this ERROR verdict.
Verdict skip_from_filter(const PluginInstance& plugin,
                         const schedplug_node& node, std::string reason);

}  // namespace schedplug::host
