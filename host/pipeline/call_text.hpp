// How calls are described in logs and messages, by the pipeline and the
// transports.
#pragma once

#include <chrono>
#include <string>

#include <fmt/format.h>

#include "host/chain/filter_chain.hpp"
#include "schedplug/v1/schedplug.pb.h"

namespace schedplug::host::call_support {

using Clock = std::chrono::steady_clock;
using std::chrono::duration;
using std::chrono::milliseconds;

inline double ms(Clock::duration d) {
  return duration<double, std::milli>(d).count();
}

// At most 128 bytes of `s` (a name over FieldLimits may be huge; calls
// are described before their fields are checked).
inline std::string clipped(const std::string& s) {
  return s.size() <= 128 ? s : s.substr(0, 128) + "...";
}

inline std::string pod_label(const v1::Pod& pod) {
  return clipped(pod.namespace_()) + "/" + clipped(pod.name());
}

// "A 0.12 ms (500 nodes), B skipped, ..." for slow-call logs.
inline std::string runs_summary(const ChainRuns& runs) {
  std::string out;
  for (const PluginRun& run : runs) {
    if (run.plugin == nullptr) continue;
    if (!out.empty()) out += ", ";
    if (run.skipped) {
      out += run.plugin->name() + " skipped";
    } else {
      out += fmt::format("{} {:.3f} ms ({} calls)", run.plugin->name(),
                         ms(run.duration), run.calls);
    }
  }
  return out.empty() ? "no plugin ran" : out;
}

// "1.50 GiB" for messages.
inline std::string human_bytes(size_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} bytes", bytes)
                   : fmt::format("{:.2f} {}", value, units[unit]);
}

}  // namespace schedplug::host::call_support
