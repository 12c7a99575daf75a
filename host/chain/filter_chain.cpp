#include "host/chain/filter_chain.hpp"

#include <algorithm>
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

[[noreturn]] void deadline_hit(const PluginInstance& plugin, const char* hook,
                               size_t nodes_done, size_t nodes,
                               ChainRuns runs) {
  throw ChainDeadlineExceeded("the deadline ran out while plugin \"" +
                                  plugin.name() + "\" was running " + hook +
                                  " (" + std::to_string(nodes_done) + " of " +
                                  std::to_string(nodes) + " nodes done)",
                              &plugin, std::move(runs));
}

}  // namespace

FilterOutcome run_filters(std::span<const PluginInstance* const> filters,
                          const schedplug_pod& pod,
                          std::span<const schedplug_node* const> nodes,
                          ThreadPool& pool, const Deadline& deadline) {
  FilterOutcome out;
  out.skipped.assign(filters.size(), false);
  out.runs.resize(filters.size());

  const size_t chunk = chunk_size_for(nodes.size(), pool.workers());
  const size_t chunks = (nodes.size() + chunk - 1) / chunk;
  std::vector<uint8_t> rejected(nodes.size(), 0);
  std::vector<std::vector<LocalRejection>> found(chunks);
  std::vector<uint64_t> calls(chunks);
  std::unordered_map<std::string, uint32_t> reason_index;
  const std::function<bool()> stop = [&deadline] { return deadline.expired(); };

  for (size_t p = 0; p < filters.size(); ++p) {
    const PluginInstance& plugin = *filters[p];
    PluginRun& run = out.runs[p];
    run.plugin = &plugin;
    if (deadline.expired())
      deadline_hit(plugin, "filter", 0, nodes.size(), out.runs);
    const auto start = Clock::now();
    // Once per pod: the plugin's gate and per-pod state (pod_begin); the
    // scope ends the state after the last filter call below.
    const PodScope scope = plugin.begin_pod(pod);
    if (!scope.error().empty()) {
      // A failed pod_begin fails the pod on every node still in the race,
      // as a filter Error would.
      auto [it, added] = reason_index.try_emplace(
          scope.error(), static_cast<uint32_t>(out.reasons.size()));
      if (added) out.reasons.push_back(it->first);
      std::vector<FilterRejection> failed;
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i] == nullptr || rejected[i]) continue;
        rejected[i] = 1;
        failed.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(p),
                          SCHEDPLUG_ERROR, it->second});
      }
      run.errors = 1;
      const size_t before = out.rejections.size();
      out.rejections.insert(out.rejections.end(), failed.begin(), failed.end());
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
    if (!scope.runs_filter()) {
      out.skipped[p] = true;
      run.skipped = true;
      run.duration = Clock::now() - start;
      continue;
    }
    const schedplug_pod& plugin_pod = scope.pod();
    std::fill(calls.begin(), calls.end(), 0);
    const std::function<void(size_t)> body = [&](size_t c) {
      const size_t end = std::min(nodes.size(), (c + 1) * chunk);
      uint64_t n = 0;
      for (size_t i = c * chunk; i < end; ++i) {
        if (nodes[i] == nullptr || rejected[i]) continue;
        ++n;
        Verdict v = plugin.filter(plugin_pod, *nodes[i]);
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
    if (ran < chunks) {
      deadline_hit(plugin, "filter", std::min(nodes.size(), ran * chunk),
                   nodes.size(), out.runs);
    }
  }
  return out;
}

SingleFilterResult run_filters_on_node(
    std::span<const PluginInstance* const> filters, const schedplug_pod& pod,
    const schedplug_node& node, const Deadline& deadline) {
  SingleFilterResult out;
  out.runs.reserve(filters.size());
  for (const PluginInstance* plugin : filters) {
    out.runs.push_back({});
    PluginRun& run = out.runs.back();
    run.plugin = plugin;
    if (deadline.expired()) deadline_hit(*plugin, "filter", 0, 1, out.runs);
    const auto start = Clock::now();
    const PodScope scope = plugin->begin_pod(pod);
    if (!scope.error().empty()) {
      run.duration = Clock::now() - start;
      run.errors = 1;
      out.plugin = plugin;
      out.verdict = {SCHEDPLUG_ERROR, scope.error()};
      return out;
    }
    if (!scope.runs_filter()) {
      run.skipped = true;
      run.duration = Clock::now() - start;
      continue;
    }
    Verdict v = plugin->filter(scope.pod(), node);
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
