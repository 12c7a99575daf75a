#include "host/chain/filter_chain.hpp"

#include <algorithm>
#include <atomic>
#include <deque>
#include <functional>
#include <string_view>
#include <unordered_map>

namespace schedplug::host {
namespace {

using Clock = std::chrono::steady_clock;

struct LocalRejection {
  uint32_t node;
  schedplug_code code;
  uint32_t reason;  // index into the chunk's ChunkReasons
};

// The distinct reasons of one chunk. Plugins mostly give one reason for
// every node they reject, so the last one is checked first and a map
// (looked up without building a string) catches the rest.
class ChunkReasons {
 public:
  uint32_t index_of(std::string_view reason) {
    if (!texts_.empty() && texts_[last_] == reason) return last_;
    auto it = index_.find(reason);
    if (it == index_.end()) {
      texts_.emplace_back(reason);
      it = index_.emplace(texts_.back(), texts_.size() - 1).first;
    }
    last_ = it->second;
    return last_;
  }
  std::string& text(uint32_t i) { return texts_[i]; }
  size_t size() const { return texts_.size(); }
  void clear() {
    texts_.clear();
    index_.clear();
    last_ = 0;
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const {
      return std::hash<std::string_view>{}(s);
    }
  };
  // deque: the map's keys view the texts, which must not move.
  std::deque<std::string> texts_;
  std::unordered_map<std::string_view, uint32_t, Hash, std::equal_to<>> index_;
  uint32_t last_ = 0;
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

// The table (about 1.8 KB a node, 8 MB at 5000 nodes) does not stay in
// cache between cycles, so a walk over it waits on memory at every node.
// Asking for the nodes a few steps ahead overlaps those waits: the view
// first, then (once the view has arrived) the start of its label array,
// which is what filters read most.
inline void prefetch_ahead(std::span<const schedplug_node* const> nodes,
                           size_t i, size_t end) {
  constexpr size_t kViewAhead = 8, kLabelsAhead = 4;
  if (i + kViewAhead < end && nodes[i + kViewAhead] != nullptr) {
    __builtin_prefetch(nodes[i + kViewAhead]);
  }
  if (i + kLabelsAhead < end && nodes[i + kLabelsAhead] != nullptr) {
    const schedplug_node& n = *nodes[i + kLabelsAhead];
    const char* labels = reinterpret_cast<const char*>(n.labels.items);
    if (labels != nullptr) {
      __builtin_prefetch(labels);
      __builtin_prefetch(labels + 64 * 4);
      __builtin_prefetch(labels + 64 * 8);
    }
  }
}

// Rejections are kept in node order: a plugin's new ones are merged into
// those of the plugins before it.
bool by_node(const FilterRejection& a, const FilterRejection& b) {
  return a.node < b.node;
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
  std::vector<ChunkReasons> chunk_reasons(chunks);
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
    if (gate.began()) run.hooks.add(TimedHook::kBeginPod, Clock::now() - start);
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
          out.rejections.end(), by_node);
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
      FilterCall call;
      for (size_t i = c * chunk; i < end; ++i) {
        if (nodes[i] == nullptr || rejected[i]) continue;
        // Within a chunk too, so a slow plugin stops close to its deadline.
        if ((n & 7) == 7 && plugin_deadline.expired()) {
          cut.store(true, std::memory_order_relaxed);
          break;
        }
        ++n;
        prefetch_ahead(nodes, i, end);
        schedplug_code code = plugin.filter_into(plugin_pod, *nodes[i], call);
        if (code == SCHEDPLUG_SUCCESS) continue;
        uint32_t reason = 0;
        if (code == SCHEDPLUG_SKIP) {
          Verdict v =
              skip_from_filter(plugin, *nodes[i], std::string(call.reason()));
          code = v.code;
          reason = chunk_reasons[c].index_of(v.reason);
        } else {
          reason = chunk_reasons[c].index_of(call.reason());
        }
        found[c].push_back({static_cast<uint32_t>(i), code, reason});
      }
      calls[c] = n;
    };
    // Nodes this plugin will see (empty slots, and the slots outside a
    // PreFilter window, are null).
    size_t live = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      live += nodes[i] != nullptr && !rejected[i];
    }
    const auto pass_start = Clock::now();
    const size_t ran = pool.parallel_for(
        chunks, body, stop, plugin.filter_cost().worth_sharing(live));
    const auto pass_end = Clock::now();
    run.duration = pass_end - start;
    run.hooks.add(TimedHook::kFilter, pass_end - pass_start);

    // Merge this plugin's rejections (each chunk is in node order, chunks
    // are in order) into the node-sorted list.
    const size_t before = out.rejections.size();
    constexpr uint32_t kUnmapped = ~uint32_t{0};
    std::vector<uint32_t> local_to_global;
    for (size_t c = 0; c < chunks; ++c) {
      run.calls += calls[c];
      local_to_global.assign(chunk_reasons[c].size(), kUnmapped);
      for (LocalRejection& r : found[c]) {
        rejected[r.node] = 1;
        if (r.code == SCHEDPLUG_ERROR) ++run.errors;
        // Each distinct reason of the chunk is looked up here once.
        uint32_t& global = local_to_global[r.reason];
        if (global == kUnmapped) {
          auto [it, added] = reason_index.try_emplace(
              chunk_reasons[c].text(r.reason),
              static_cast<uint32_t>(out.reasons.size()));
          if (added) out.reasons.push_back(it->first);
          global = it->second;
        }
        out.rejections.push_back(
            {r.node, static_cast<uint32_t>(p), r.code, global});
      }
      found[c].clear();
      chunk_reasons[c].clear();
    }
    std::inplace_merge(
        out.rejections.begin(),
        out.rejections.begin() + static_cast<std::ptrdiff_t>(before),
        out.rejections.end(), by_node);
    plugin.filter_cost().add(run.duration, run.calls);
    if (ran < chunks || cut.load(std::memory_order_relaxed)) {
      out.unfinished.push_back(
          {static_cast<uint32_t>(p), &plugin,
           unfinished_reason(plugin, "filter", run.calls, nodes.size(),
                             plugin_deadline, chain_start, true)});
    }
  }
  return out;
}

void merge_filter_outcome(FilterOutcome& into, FilterOutcome&& more) {
  if (into.skipped.size() < more.skipped.size())
    into.skipped.resize(more.skipped.size(), false);
  for (size_t p = 0; p < more.skipped.size(); ++p)
    into.skipped[p] = into.skipped[p] || more.skipped[p];

  if (into.runs.size() < more.runs.size()) into.runs.resize(more.runs.size());
  for (size_t p = 0; p < more.runs.size(); ++p) {
    PluginRun& run = into.runs[p];
    const PluginRun& add = more.runs[p];
    if (run.plugin == nullptr) run.plugin = add.plugin;
    run.duration += add.duration;
    for (size_t h = 0; h < kTimedHooks; ++h) {
      const auto hook = static_cast<TimedHook>(h);
      if (add.hooks.ran(hook)) run.hooks.add(hook, add.hooks.took(hook));
    }
    run.calls += add.calls;
    run.errors += add.errors;
    run.skipped = run.skipped || add.skipped;
  }

  // Reasons are a short dictionary: copies as keys keep this simple.
  std::unordered_map<std::string, uint32_t> index;
  for (size_t i = 0; i < into.reasons.size(); ++i)
    index.emplace(into.reasons[i], static_cast<uint32_t>(i));
  std::vector<uint32_t> mapped(more.reasons.size());
  for (size_t i = 0; i < more.reasons.size(); ++i) {
    auto [it, added] = index.try_emplace(
        more.reasons[i], static_cast<uint32_t>(into.reasons.size()));
    if (added) into.reasons.push_back(std::move(more.reasons[i]));
    mapped[i] = it->second;
  }
  const size_t before = into.rejections.size();
  for (FilterRejection r : more.rejections) {
    r.reason = mapped[r.reason];
    into.rejections.push_back(r);
  }
  std::inplace_merge(
      into.rejections.begin(),
      into.rejections.begin() + static_cast<std::ptrdiff_t>(before),
      into.rejections.end(), by_node);

  for (UnfinishedPlugin& u : more.unfinished) {
    const bool known = std::any_of(
        into.unfinished.begin(), into.unfinished.end(),
        [&](const UnfinishedPlugin& v) { return v.plugin == u.plugin; });
    if (!known) into.unfinished.push_back(std::move(u));
  }
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
    const auto gated = Clock::now();
    if (gate.began()) run.hooks.add(TimedHook::kBeginPod, gated - start);
    Verdict v;
    if (!gate.error().empty()) {
      v.code = SCHEDPLUG_ERROR;
      v.reason = gate.error();
    } else if (!gate.runs()) {
      run.skipped = true;
      run.duration = gated - start;
      continue;
    } else {
      v = checked_filter(*plugin, gate.pod(), node);
      run.hooks.add(TimedHook::kFilter, Clock::now() - gated);
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
