// `schedplug simulate --config FILE --plugins DIR --nodes NODES.yaml
//  --pods PODS.yaml [--explain POD]... [--json]`
//
// Schedules the pending pods of a `kubectl get pods -o yaml` dump onto the
// nodes of a `kubectl get nodes -o yaml` dump with the profile's native
// plugins, through the host's own plugin runtime, Filter and Score chains
// and normalization, and kube-scheduler's weights (docs/simulate.md).
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace schedplug::tools {

struct SimulateOptions {
  std::filesystem::path config;
  std::filesystem::path plugins;
  std::filesystem::path nodes;
  std::filesystem::path pods;
  // Pods ("namespace/name", or "name" when unique) to explain node by node.
  std::vector<std::string> explain;
  bool json = false;
};

// Exit codes, fit for CI.
inline constexpr int kSimulateAllPlaced = 0;
inline constexpr int kSimulateSomeNotPlaced = 1;  // unschedulable or error
inline constexpr int kSimulateBadInput = 2;

// Prints one line per pending pod (or JSON) to `out`, problems with the
// input to `err`, and returns one of the exit codes above.
int run_simulate(const SimulateOptions& options, std::ostream& out,
                 std::ostream& err);

}  // namespace schedplug::tools
