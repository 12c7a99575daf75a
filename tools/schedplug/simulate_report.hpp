// What one `schedplug simulate` run found, whichever scheduler ran it
// (kube-scheduler through kube-scheduler-simulate, or the native plugins
// alone): the pods in queue order with their outcome, and the profiles as
// that scheduler ran them. simulate_command.cpp prints it as text or JSON
// (docs/simulate.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/schedplug/explain_table.hpp"
#include "tools/schedplug/kube_dump.hpp"

namespace schedplug::tools {

struct SimulatedProfile {
  std::string name;
  std::vector<std::string> filters;
  std::vector<std::string> scorers;
  std::vector<int> weights;  // per scorer
};

struct SimulatedPod {
  const KubePod* pod = nullptr;
  // placed, unschedulable, error, skipped (another scheduler's pod), or
  // preempted (placed, then evicted by a higher-priority pod).
  std::string status;
  std::string profile;  // the profile that scheduled it ("" if skipped)
  std::vector<std::string> top;  // the node taken first, then the ones tied
  int64_t score = 0;
  bool scored = false;  // false: one feasible node, kube-scheduler skips Score
  size_t feasible = 0;
  std::string reason;
  std::string nominated_node;  // preemption made room there
  // The pod's cycle node by node (--explain), in the layout `schedplug
  // explain` shares.
  std::optional<ExplainTable> explain;
};

// A bound pod of the dump that preemption evicted.
struct SimulatedEviction {
  std::string pod;
  std::string node;
  std::string by;
};

struct SimulationReport {
  // "kube-scheduler v1.37.2"; empty when only the native plugins ran.
  std::string scheduler;
  std::vector<SimulatedProfile> profiles;
  std::vector<SimulatedPod> pods;
  std::vector<SimulatedEviction> evicted;
};

}  // namespace schedplug::tools
