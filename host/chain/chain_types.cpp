#include "host/chain/chain_types.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "host/chain/pod_cycle.hpp"

namespace schedplug::host {

ChainPod::ChainPod(const PluginInstance& plugin, size_t p,
                   const schedplug_pod& pod, const ChainLimits& limits,
                   bool for_filter)
    : pod_(&pod) {
  if (limits.cycle != nullptr) scope_ = limits.cycle->scope_for(&plugin);
  if (scope_ == nullptr && p < limits.applies.size() &&
      (limits.applies[p] == 0 ||
       plugin.library().descriptor().pod_begin == nullptr)) {
    // The shim's copy of the cycle's answer (applies, or both gates shut).
    runs_ = limits.applies[p] != 0;
    return;
  }
  if (scope_ == nullptr) {
    local_.emplace(plugin.begin_pod(pod));
    began_ = plugin.library().has_gate();
    scope_ = &*local_;
    pod_ = &scope_->pod();
  } else {
    // The call's own pod (the same pod as the cycle's), with the state the
    // cycle's pod_begin made for it.
    with_state_ = pod;
    with_state_.state = scope_->pod().state;
    pod_ = &with_state_;
  }
  runs_ = scope_->error().empty() &&
          (for_filter ? scope_->runs_filter() : scope_->runs_score());
}

const char* timed_hook_name(TimedHook hook) {
  switch (hook) {
    case TimedHook::kFilter:
      return "filter";
    case TimedHook::kScore:
      return "score";
    case TimedHook::kNormalize:
      return "normalize";
    case TimedHook::kBeginPod:
      return "begin_pod";
    case TimedHook::kRefresh:
      return "refresh";
  }
  return "unknown";
}

const std::string& ChainPod::error() const {
  static const std::string kNone;
  return scope_ == nullptr ? kNone : scope_->error();
}

size_t chunk_size_for(size_t count, unsigned pool_threads) {
  // Eight chunks per thread balance uneven nodes and bound how long the
  // chain runs past a deadline; four nodes keep claiming cheap.
  constexpr size_t kChunksPerThread = 8;
  constexpr size_t kMinChunk = 4;
  const size_t chunks =
      (static_cast<size_t>(pool_threads) + 1) * kChunksPerThread;
  return std::max(kMinChunk, (count + chunks - 1) / chunks);
}

std::string unfinished_reason(const PluginInstance& plugin, const char* hook,
                              size_t nodes_done, size_t nodes,
                              const Deadline& deadline,
                              std::chrono::steady_clock::time_point chain_start,
                              bool started) {
  double budget_ms = 0;
  if (auto when = deadline.when()) {
    budget_ms =
        std::chrono::duration<double, std::milli>(*when - chain_start).count();
  }
  if (!started) {
    return fmt::format(
        "plugin \"{}\" did not run: its deadline ({:.1f} ms) ran out while "
        "earlier plugins ran",
        plugin.name(), budget_ms);
  }
  return fmt::format(
      "plugin \"{}\" did not finish {} within {:.1f} ms ({} of {} nodes done)",
      plugin.name(), hook, budget_ms, nodes_done, nodes);
}

}  // namespace schedplug::host
