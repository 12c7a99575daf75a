// What the filter and score chains report besides their answers: per
// plugin timing (for metrics and slow-call logs), and the error that names
// the plugin that was running when a deadline ran out.
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/runtime/plugin_instance.hpp"

namespace schedplug::host {

// One plugin's share of one chain run.
struct PluginRun {
  const PluginInstance* plugin = nullptr;
  std::chrono::nanoseconds duration{0};
  uint64_t calls = 0;    // hook calls (nodes evaluated)
  uint64_t errors = 0;   // ERROR verdicts
  bool skipped = false;  // applies() said no
};

using ChainRuns = std::vector<PluginRun>;

// The deadline ran out while `plugin` was running `hook` ("filter",
// "score", "normalize_score"). what() names both and the progress made.
class ChainDeadlineExceeded : public std::runtime_error {
 public:
  ChainDeadlineExceeded(const std::string& message,
                        const PluginInstance* plugin, ChainRuns runs)
      : std::runtime_error(message), plugin_(plugin), runs_(std::move(runs)) {}
  const PluginInstance* plugin() const { return plugin_; }
  const ChainRuns& runs() const { return runs_; }

 private:
  const PluginInstance* plugin_;
  ChainRuns runs_;
};

// Splits `count` items into chunks for `pool_threads` threads: several
// chunks per thread (balance, and deadline checks in between), never so
// small that claiming a chunk costs more than running it.
size_t chunk_size_for(size_t count, unsigned pool_threads);

}  // namespace schedplug::host
