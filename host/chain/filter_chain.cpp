#include "host/chain/filter_chain.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <unordered_map>

namespace schedplug::host {
namespace {

using Clock = std::chrono::steady_clock;

struct LocalRejection {
  uint32_t node;
  schedplug_code code;
  std::string reason;
};

const Deadline& deadline_of(size_t p, const Deadline& call,
                            const ChainLimits& limits) {
  return p < limits.plugin_deadlines.size() ? limits.plugin_deadlines[p] : call;
}

// filter(), with SKIP turned into an ERROR (upstream's RunFilterPlugins
// turns every Filter status that is not Success or a rejection into an
// error that aborts the cycle).
Verdict checked_filter(const PluginInstance& plugin, const schedplug_pod& pod,
                       const schedplug_node& node) {
  Verdict v = plugin.filter(pod, node);
  if (v.code == SCHEDPLUG_SKIP) {
    return skip_from_filter(plugin, node, std::move(v.reason));
  }
  return v;
}

}  // namespace

Verdict skip_from_filter(const PluginInstance& plugin,
                         const schedplug_node& node, std::string reason) {
  Verdict v;
  v.code = SCHEDPLUG_ERROR;
  v.reason = "plugin \"" + plugin.name() +
             "\" returned SKIP from filter on node \"" +
             std::string(node.name.data == nullptr ? "" : node.name.data,
                         node.name.len) +
             "\"; SKIP is only valid from applies(), kube-scheduler treats it "
             "from Filter as an error: return SUCCESS or UNSCHEDULABLE";
  if (!reason.empty()) v.reason += " (" + reason + ")";
  return v;
}

FilterOutcome run_filters(std::span<const PluginInstance* const> filters,
                          const schedplug_pod& pod,
                          std::span<const schedplug_node* const> nodes,
                          ThreadPool& pool, const Deadline& deadline,
                          const ChainLimits& limits) {
  FilterOutcome out;
  out.skipped.assign(filters.size(), false);
  out.runs.resize(filters.size());
  const auto chain_start = Clock::now();

  const size_t chunk = chunk_size_for(nodes.size(), pool.workers());
  const size_t chunks = (nodes.size() + chunk - 1) / chunk;
  std::vector<uint8_t> rejected(nodes.size(), 0);
  std::vector<std::vector<LocalRejection>> found(chunks);
  std::vector<uint64_t> calls(chunks);
  std::unordered_map<std::string, uint32_t> reason_index;

  for (size_t p = 0; p < filters.size(); ++p) {
    const PluginInstance& plugin = *filters[p];
    const Deadline& plugin_deadline = deadline_of(p, deadline, limits);
    PluginRun& run = out.runs[p];
    run.plugin = &plugin;
    if (plugin_deadline.expired()) {
      out.unfinished.push_back(
          {static_cast<uint32_t>(p), &plugin,
           unfinished_reason(plugin, "filter", 0, nodes.size(), plugin_deadline,
                             chain_start, false)});
      continue;
    }
    const auto start = Clock::now();
    const ChainPod gate(plugin, p, pod, limits, /*for_filter=*/true);
    if (!gate.error().empty()) {
      // pod_begin failed: the pod fails on every node still in the race,
      // as a filter ERROR would.
      auto [it, added] = reason_index.try_emplace(
          gate.error(), static_cast<uint32_t>(out.reasons.size()));
      if (added) out.reasons.push_back(it->first);
      const size_t before = out.rejections.size();
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i] == nullptr || rejected[i]) continue;
        rejected[i] = 1;
        ++run.errors;
        out.rejections.push_back({static_cast<uint32_t>(i),
                                  static_cast<uint32_t>(p), SCHEDPLUG_ERROR,
                                  it->second});
      }
      std::inplace_merge(
          out.rejections.begin(),
          out.rejections.begin() + static_cast<std::ptrdiff_t>(before),
          out.rejections.end(),
          [](const FilterRejection& a, const FilterRejection& b) {
            return a.node < b.node;
          });
      run.duration = Clock::now() - start;
      continue;
    }
    if (!gate.runs()) {
      out.skipped[p] = true;
      run.skipped = true;
      run.duration = Clock::now() - start;
      continue;
    }
    const schedplug_pod& plugin_pod = gate.pod();
    std::fill(calls.begin(), calls.end(), 0);
    std::atomic<bool> cut{false};
    const std::function<bool()> stop = [&plugin_deadline] {
      return plugin_deadline.expired();
    };
    const std::function<void(size_t)> body = [&](size_t c) {
      const size_t end = std::min(nodes.size(), (c + 1) * chunk);
      uint64_t n = 0;
      for (size_t i = c * chunk; i < end; ++i) {
        if (nodes[i] == nullptr || rejected[i]) continue;
        // Within a chunk too, so a slow plugin stops close to its deadline.
        if ((n & 7) == 7 && plugin_deadline.expired()) {
          cut.store(true, std::memory_order_relaxed);
          break;
        }
        ++n;
        Verdict v = checked_filter(plugin, plugin_pod, *nodes[i]);
        if (!v.ok()) {
          found[c].push_back(
              {static_cast<uint32_t>(i), v.code, std::move(v.reason)});
        }
      }
      calls[c] = n;
    };
    const size_t ran = pool.parallel_for(chunks, body, stop);
    run.duration = Clock::now() - start;

    // Merge this plugin's rejections (each chunk is in node order, chunks
    // are in order) into the node-sorted list.
    const size_t before = out.rejections.size();
    for (size_t c = 0; c < chunks; ++c) {
      run.calls += calls[c];
      for (LocalRejection& r : found[c]) {
        rejected[r.node] = 1;
        if (r.code == SCHEDPLUG_ERROR) ++run.errors;
        auto [it, added] = reason_index.try_emplace(
            std::move(r.reason), static_cast<uint32_t>(out.reasons.size()));
        if (added) out.reasons.push_back(it->first);
        out.rejections.push_back(
            {r.node, static_cast<uint32_t>(p), r.code, it->second});
      }
      found[c].clear();
    }
    std::inplace_merge(
        out.rejections.begin(),
        out.rejections.begin() + static_cast<std::ptrdiff_t>(before),
        out.rejections.end(),
        [](const FilterRejection& a, const FilterRejection& b) {
          return a.node < b.node;
        });
    if (ran < chunks || cut.load(std::memory_order_relaxed)) {
      out.unfinished.push_back(
          {static_cast<uint32_t>(p), &plugin,
           unfinished_reason(plugin, "filter", run.calls, nodes.size(),
                             plugin_deadline, chain_start, true)});
    }
  }
  return out;
}

SingleFilterResult run_filters_on_node(
    std::span<const PluginInstance* const> filters, const schedplug_pod& pod,
    const schedplug_node& node, const Deadline& deadline,
    const ChainLimits& limits) {
  SingleFilterResult out;
  out.runs.reserve(filters.size());
  const auto chain_start = Clock::now();
  for (size_t p = 0; p < filters.size(); ++p) {
    const PluginInstance* plugin = filters[p];
    const Deadline& plugin_deadline = deadline_of(p, deadline, limits);
    out.runs.push_back({});
    PluginRun& run = out.runs.back();
    run.plugin = plugin;
    if (plugin_deadline.expired()) {
      out.unfinished.push_back(
          {static_cast<uint32_t>(p), plugin,
           unfinished_reason(*plugin, "filter", 0, 1, plugin_deadline,
                             chain_start, false)});
      continue;
    }
    const auto start = Clock::now();
    const ChainPod gate(*plugin, p, pod, limits, /*for_filter=*/true);
    Verdict v;
    if (!gate.error().empty()) {
      v.code = SCHEDPLUG_ERROR;
      v.reason = gate.error();
    } else if (!gate.runs()) {
      run.skipped = true;
      run.duration = Clock::now() - start;
      continue;
    } else {
      v = checked_filter(*plugin, gate.pod(), node);
    }
    run.duration = Clock::now() - start;
    run.calls = 1;
    if (v.code == SCHEDPLUG_ERROR) run.errors = 1;
    if (!v.ok()) {
      out.plugin = plugin;
      out.verdict = std::move(v);
      return out;
    }
  }
  return out;
}

}  // namespace schedplug::host
